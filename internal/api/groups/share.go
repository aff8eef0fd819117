package groups

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/groups"
	"quarry/internal/model"
)

// integer reads key as Grape reads an Integer parameter: digits with an
// optional sign, which Ruby holds however long they are. It returns the
// digits (ok false when absent); anything else is recorded as
// "key is invalid".
func integer(p *endpoint.Params, key string) (string, bool) {
	v, ok := p.String(key)
	if !ok {
		return "", false
	}
	if !isInteger(v) {
		p.Fail("%s is invalid", key)
		return "", false
	}
	return strings.TrimPrefix(strings.TrimSpace(v), "+"), true
}

func isInteger(v string) bool {
	v = strings.TrimSpace(v)
	if v != "" && (v[0] == '+' || v[0] == '-') {
		v = v[1:]
	}
	return v != "" && strings.Trim(v, "0123456789") == ""
}

// shareGroup answers POST /groups/:id/share with the shared group's
// details.
func (h *Handlers) shareGroup(c *endpoint.Call) error {
	p := c.P
	p.Require("group_id", "group_access")
	withRef, _ := integer(p, "group_id")
	if n, err := strconv.ParseInt(withRef, 10, 64); withRef != "" && (err != nil || n < 0) {
		withRef = "0" // past 64 bits or negative: an id no group has
	}
	var level model.AccessLevel
	if v, ok := integer(p, "group_access"); ok {
		n, err := strconv.Atoi(v)
		level = model.AccessLevel(n)
		if err != nil || !slices.Contains(groups.ShareLevels, level) {
			p.Fail("group_access does not have a valid value")
		}
	}
	expires, _ := p.Date("expires_at")
	if err := p.Err(); err != nil {
		return err
	}
	g, err := h.groups.ShareWith(c.Ctx(), c.Actor, c.Path("id"), withRef, level, expires)
	if err != nil {
		return err
	}
	return h.groupDetail(c, http.StatusCreated, g, false)
}

// unshareGroup answers DELETE /groups/:id/share/:group_id.
func (h *Handlers) unshareGroup(c *endpoint.Call) error {
	raw := c.Path("group_id")
	if !isInteger(raw) {
		return model.Param("group_id is invalid")
	}
	// A number past 64 bits names no group: no link either.
	withID, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
	if err != nil {
		withID = 0
	}
	if err := h.groups.Unshare(c.Ctx(), c.Actor, c.Path("id"), withID); err != nil {
		return err
	}
	return c.NoContent()
}

// sharedGroups renders the groups a group is shared with.
func sharedGroups(links []groups.Share) []entity.SharedGroup {
	out := make([]entity.SharedGroup, len(links))
	for i, l := range links {
		out[i] = entity.SharedGroup{GroupID: l.SharedWithGroupID, GroupName: l.SharedWith.Name, GroupFullPath: l.SharedWith.FullPath,
			GroupAccessLevel: int(l.GroupAccess), ExpiresAt: entity.StrPtr(l.ExpiresAt)}
	}
	return out
}
