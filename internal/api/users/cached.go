package users

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
)

// cachedAdminUsers encodes the administrator's view of us (details: the
// single user's view, else a JSON array) through the entity cache: the
// misses' identities are loaded (one query) and their templates kept,
// then each is spliced with its creator.
func (h *Handlers) cachedAdminUsers(c *endpoint.Call, us []model.User, details bool) (endpoint.Raw, error) {
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
	out := make([]byte, 0, 1024*len(us))
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
	return out, nil
}
