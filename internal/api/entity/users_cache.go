package entity

import (
	"encoding/json"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// The administrator's user entities leave one hole, "created_by": the
// creator's name and state move without the user's row.
const createdByNull = `,"created_by":null`

// UserKey is the cache key of a user's entity of a kind (the
// administrator's views only: what they show does not depend on which
// administrator asks).
func UserKey(kind uint8, u *model.User) CacheKey {
	return CacheKey{Kind: kind, ID: u.ID, Created: u.CreatedAt.UnixMicro(), V: [3]int64{u.EntityVersion}}
}

// UserAdminTemplate encodes the administrator's view of u (with its
// identities loaded; details: the single user's view) without its
// creator, leaving that hole.
func (r *Renderer) UserAdminTemplate(u *model.User, viewer auth.Actor, details bool) (*Template, error) {
	a := r.UserAdmin(u, viewer)
	var v any = a
	if details {
		v = r.UserDetailsAdmin(u, a)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := cutBefore(b, createdByNull)
	if s < 0 {
		return nil, fmt.Errorf("entity: user %d: no created_by to cut", u.ID)
	}
	b = append(b[:s:s], b[s+len(createdByNull):]...)
	return NewTemplate(b, s), nil
}

// SpliceUserAdmin appends the administrator's view of a user to dst: t
// with its creator (nil: none) filled in.
func (r *Renderer) SpliceUserAdmin(dst []byte, t *Template, creator *model.User) ([]byte, error) {
	if creator == nil {
		return t.Splice(dst, []byte(createdByNull)), nil
	}
	b, err := json.Marshal(r.UserBasic(creator))
	if err != nil {
		return nil, err
	}
	return t.Splice(dst, append([]byte(`,"created_by":`), b...)), nil
}
