package users

import (
	"slices"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/users"
)

// cachedAdminUsers encodes the administrator's view of us (details: the
// single user's view, else a JSON array) through the entity cache: the
// misses' identities are loaded (one query) and their templates kept,
// then each is spliced with its creator.
func (h *Handlers) cachedAdminUsers(c *endpoint.Call, us []model.User, details bool) (*endpoint.Buffer, error) {
	cache := h.r.Cache
	kind := entity.KindUserAdmin
	if details {
		kind = entity.KindUserDetailsAdmin
	}
	keys := make([]entity.CacheKey, len(us))
	ts := make([]*entity.Template, len(us))
	var miss []model.User
	var missAt []int
	for i := range us {
		keys[i] = entity.UserKey(kind, &us[i])
		if t, ok := cache.Get(keys[i]); ok {
			ts[i] = t
		} else {
			miss, missAt = append(miss, us[i]), append(missAt, i)
		}
	}
	if len(miss) > 0 {
		if err := h.users.WithIdentities(c.Ctx(), miss); err != nil {
			return nil, err
		}
		for k, i := range missAt {
			t, err := h.r.UserAdminTemplate(&miss[k], c.Actor, details)
			if err != nil {
				return nil, err
			}
			cache.Put(keys[i], t)
			ts[i] = t
		}
	}
	creators, err := h.users.Creators(c.Ctx(), us)
	if err != nil {
		return nil, err
	}
	buf := endpoint.NewBuffer()
	out := buf.B
	if !details {
		out = append(out, '[')
	}
	for i := range us {
		if i > 0 {
			out = append(out, ',')
		}
		var creator *model.User
		if id := us[i].CreatedByID; id != nil {
			if cr, ok := creators[*id]; ok {
				creator = &cr
			}
		}
		if out, err = h.r.SpliceUserAdmin(out, ts[i], creator); err != nil {
			return nil, err
		}
	}
	if !details {
		out = append(out, ']')
	}
	buf.B = out
	return buf, nil
}

// cachedAdminUserPage encodes the administrator's view of a page of users
// from their heads: each entity from the cache at the user's version, the
// misses read whole in one statement (with their identities) and kept;
// each creator's summary kept at the creator's version, the misses read
// in one statement.
func (h *Handlers) cachedAdminUserPage(c *endpoint.Call, hs []users.Head) (*endpoint.Buffer, error) {
	cache := h.r.Cache
	ts := make([]*entity.Template, len(hs))
	var missing []int64
	for i := range hs {
		u := model.User{ID: hs[i].ID, CreatedAt: hs[i].CreatedAt, EntityVersion: hs[i].EntityVersion}
		if t, ok := cache.Get(entity.UserKey(entity.KindUserAdmin, &u)); ok {
			ts[i] = t
		} else {
			missing = append(missing, hs[i].ID)
		}
	}
	if len(missing) > 0 {
		read, err := h.users.ByIDs(c.Ctx(), missing)
		if err != nil {
			return nil, err
		}
		miss := make([]model.User, 0, len(read))
		for _, id := range missing {
			if u, ok := read[id]; ok {
				miss = append(miss, u)
			}
		}
		if err := h.users.WithIdentities(c.Ctx(), miss); err != nil {
			return nil, err
		}
		byID := make(map[int64]*entity.Template, len(miss))
		for k := range miss {
			t, err := h.r.UserAdminTemplate(&miss[k], c.Actor, false)
			if err != nil {
				return nil, err
			}
			cache.Put(entity.UserKey(entity.KindUserAdmin, &miss[k]), t)
			byID[miss[k].ID] = t
		}
		for i := range hs {
			if ts[i] == nil {
				ts[i] = byID[hs[i].ID] // nil: deleted since the heads were read
			}
		}
	}
	creators := map[int64]model.User{}
	var unknown []int64
	for _, hd := range hs {
		if hd.CreatorID == 0 {
			continue
		}
		if _, ok := creators[hd.CreatorID]; ok || slices.Contains(unknown, hd.CreatorID) {
			continue
		}
		if u, ok := cache.UserBasic(hd.CreatorID, hd.CreatorCreatedAt, hd.CreatorVersion); ok {
			creators[hd.CreatorID] = u
		} else {
			unknown = append(unknown, hd.CreatorID)
		}
	}
	if len(unknown) > 0 {
		read, err := h.users.BasicsByIDs(c.Ctx(), unknown)
		if err != nil {
			return nil, err
		}
		for id, u := range read {
			cache.PutUserBasic(&u)
			creators[id] = u
		}
	}
	buf := endpoint.NewBuffer()
	out := append(buf.B, '[')
	first := true
	for i := range hs {
		if ts[i] == nil {
			continue
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		var creator *model.User
		if cr, ok := creators[hs[i].CreatorID]; ok {
			creator = &cr
		}
		var err error
		if out, err = h.r.SpliceUserAdmin(out, ts[i], creator); err != nil {
			return nil, err
		}
	}
	buf.B = append(out, ']')
	return buf, nil
}
