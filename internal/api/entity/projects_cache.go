package entity

import (
	"encoding/json"
	"fmt"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// The project entity's template leaves holes for what depends on more
// than the project's row, its namespace's row and its topics (which move
// the project's entity_version): the owner, the fork source (seen or not
// by the caller), the groups it is shared with (their names move without
// the project) and the caller's permissions. The holes of omitted-when-
// empty fields are cut just before the key that follows the field, which
// is always present; "shared_with_groups" is cut out where it was.
const (
	afterOwner       = `,"resolve_outdated_diff_discussions":`
	afterFork        = `,"import_status":`
	sharedNull       = `,"shared_with_groups":null`
	afterPermissions = `,"container_registry_image_prefix":`
)

// projectClass are the caller-dependent choices the rest of the project
// entity makes, as bits of the cache key.
func projectClass(v *projects.View, a auth.Actor) uint8 {
	var c uint8
	if v.CanReadCode {
		c |= 1
	}
	if a.Admin() {
		c |= 2
	}
	if v.CanAdmin {
		c |= 4
	}
	if v.Access >= model.Developer || a.Admin() {
		c |= 8
	}
	if seesConfidentialIssues(v, a) {
		c |= 16 // open_issues_count counts confidential issues
	}
	return c
}

// ProjectKey is the cache key of a project's entity for a caller.
func ProjectKey(v *projects.View, a auth.Actor) CacheKey {
	p := &v.Project
	return CacheKey{Kind: KindProject, Class: projectClass(v, a), ID: p.ID, Created: p.CreatedAt.UnixMicro(),
		V: [3]int64{p.EntityVersion, p.Namespace.ID, p.Namespace.EntityVersion}}
}

// ProjectTemplate encodes the project entity (a signed-in caller's,
// without statistics) with its caller-dependent parts left as holes.
func (r *Renderer) ProjectTemplate(v *projects.View, a auth.Actor) (*Template, error) {
	j := r.Project(v, a)
	j.Owner, j.ForkedFromProject, j.SharedWithGroups, j.Permissions = nil, nil, nil, nil
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	s := cutBefore(b, sharedNull)
	if s < 0 {
		return nil, fmt.Errorf("entity: project %d: no shared_with_groups to cut", v.Project.ID)
	}
	b = append(b[:s:s], b[s+len(sharedNull):]...)
	cuts := []int{cutBefore(b, afterOwner), cutBefore(b, afterFork), s, cutBefore(b, afterPermissions)}
	for i, c := range cuts {
		if c < 0 || (i > 0 && c <= cuts[i-1]) {
			return nil, fmt.Errorf("entity: project %d: hole %d misplaced", v.Project.ID, i)
		}
	}
	return NewTemplate(b, cuts...), nil
}

// SpliceProject appends the project entity for the caller to dst: t with
// the caller-dependent parts filled in. The bytes are those of
// json.Marshal(r.Project(v, a)).
func (r *Renderer) SpliceProject(dst []byte, t *Template, v *projects.View, a auth.Actor) ([]byte, error) {
	var owner, fork []byte
	if v.Owner != nil {
		b, err := json.Marshal(r.UserBasic(v.Owner))
		if err != nil {
			return nil, err
		}
		owner = append([]byte(`,"owner":`), b...)
	}
	if v.ForkedFrom != nil {
		fv := projects.View{Project: *v.ForkedFrom, CanReadCode: true}
		b, err := json.Marshal(r.ProjectBasic(&fv, a))
		if err != nil {
			return nil, err
		}
		fork = append([]byte(`,"forked_from_project":`), b...)
	}
	shared := []byte(`,"shared_with_groups":[]`)
	if len(v.SharedWith) > 0 {
		b, err := json.Marshal(sharedGroups(v))
		if err != nil {
			return nil, err
		}
		shared = append([]byte(`,"shared_with_groups":`), b...)
	}
	var perm []byte
	if a.SignedIn() {
		perm = append(perm, `,"permissions":{"project_access":`...)
		perm = appendAccess(perm, v.ProjectAccess > 0, v.ProjectAccess)
		perm = append(perm, `,"group_access":`...)
		perm = appendAccess(perm, v.GroupMember, v.GroupAccess)
		perm = append(perm, '}')
	}
	return t.Splice(dst, owner, fork, shared, perm), nil
}

// appendAccess appends an Access (or null) as encoding/json would.
func appendAccess(dst []byte, ok bool, level model.AccessLevel) []byte {
	if !ok {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"access_level":`...)
	dst = strconv.AppendInt(dst, int64(level), 10)
	return append(dst, `,"notification_level":3}`...)
}
