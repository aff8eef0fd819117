package entity

import (
	"time"
	"unsafe"

	"quarry/internal/model"
)

// Decoded rows kept by the versions the database moves on every write
// to them (entity_version, triggers): a request that reads a project's
// head (versions, one statement) at the same versions uses the copy instead of
// reading and decoding the wide row again, or the owner's summary. The
// copies share the cache's bound with the templates. *Cache implements
// projects.Rows.

// projectRowKey names a project's row with its namespace's at their
// versions.
func projectRowKey(id int64, created time.Time, version, nsID, nsVersion int64) CacheKey {
	return CacheKey{Kind: KindProjectRow, ID: id, Created: created.UnixMicro(), V: [3]int64{version, nsID, nsVersion}}
}

// Project returns the kept row of a project and its namespace at their
// versions.
func (c *Cache) Project(id int64, created time.Time, version, nsID, nsVersion int64) (model.Project, bool) {
	p, ok := c.get(projectRowKey(id, created, version, nsID, nsVersion)).(*model.Project)
	if !ok {
		return model.Project{}, false
	}
	return *p, true
}

// PutProject keeps a copy of p (as read from the database: the row and
// its namespace) under its versions.
func (c *Cache) PutProject(p *model.Project) {
	cp := *p
	size := int64(unsafe.Sizeof(cp)) + int64(len(cp.Description)+len(cp.Name)+len(cp.Path)+len(cp.DiskPath)+
		len(cp.Namespace.FullPath)+len(cp.Namespace.FullName)+len(cp.Namespace.Traversal)) + 1024 + entryOverhead
	c.put(projectRowKey(cp.ID, cp.CreatedAt, cp.EntityVersion, cp.Namespace.ID, cp.Namespace.EntityVersion), &cp, size)
}

func userBasicKey(id int64, created time.Time, version int64) CacheKey {
	return CacheKey{Kind: KindUserBasic, ID: id, Created: created.UnixMicro(), V: [3]int64{version}}
}

// UserBasic returns the kept summary of a user at version.
func (c *Cache) UserBasic(id int64, created time.Time, version int64) (model.User, bool) {
	u, ok := c.get(userBasicKey(id, created, version)).(*model.User)
	if !ok {
		return model.User{}, false
	}
	return *u, true
}

// PutUserBasic keeps a user's summary (store.UserBasicsByIDs) under its
// version.
func (c *Cache) PutUserBasic(u *model.User) {
	cp := *u
	size := int64(unsafe.Sizeof(cp)) + int64(len(cp.Username)+len(cp.Name)+len(cp.Avatar)) + entryOverhead
	c.put(userBasicKey(cp.ID, cp.CreatedAt, cp.EntityVersion), &cp, size)
}
