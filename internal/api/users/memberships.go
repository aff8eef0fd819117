package users

import (
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/users"
)

// memberships answers GET /users/:user_id/memberships (administrators).
// As in GitLab the parameters are checked first: an id that is not an
// integer and an unknown type are 400s, before the caller is.
func (h *Handlers) memberships(c *endpoint.Call) error {
	ref := strings.TrimSpace(c.Path("user_id"))
	if !isInteger(ref) {
		c.P.Fail("user_id is invalid")
	}
	kind, _ := c.P.Enum("type", users.MembershipTypes...)
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ms, info, err := h.users.Memberships(c.Ctx(), c.Actor, strings.TrimPrefix(ref, "+"), kind, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Membership, len(ms))
	for i := range ms {
		out[i] = h.r.Membership(&ms[i])
	}
	return c.List(pg, info, out)
}

// isInteger reports whether v is an integer as Grape reads one: digits
// with an optional sign, of any length.
func isInteger(v string) bool {
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	return v != "" && strings.Trim(v, "0123456789") == ""
}
