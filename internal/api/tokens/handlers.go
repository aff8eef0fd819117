package tokens

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

// scopes reads and validates a token's scopes.
func scopesParam(p *endpoint.Params) []model.Scope {
	vals, ok := p.Unique("scopes")
	if !ok {
		return nil
	}
	out := make([]model.Scope, 0, len(vals))
	for _, v := range vals {
		if !model.ValidScope(v) {
			p.Fail("scopes does not have a valid value")
			return nil
		}
		out = append(out, model.Scope(v))
	}
	if len(out) == 0 {
		p.Fail("scopes is empty")
	}
	return out
}

func (h *Handlers) createToken(c *endpoint.Call) error {
	id, err := c.PathID("user_id")
	if err != nil {
		return err
	}
	// Like GitLab, the administrator check comes before parameter checks.
	if !c.Actor.Admin() {
		return model.Forbidden("")
	}
	p := c.P
	p.Require("name", "scopes")
	in := tokens.CreateInput{Name: p.Value("name"), Description: p.Value("description"), Scopes: scopesParam(p)}
	in.ExpiresAt, _ = p.Date("expires_at")
	if err := p.Err(); err != nil {
		return err
	}
	t, secret, err := h.tokens.Create(c.Ctx(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Token(t, secret))
}

func (h *Handlers) listTokens(c *endpoint.Call) error {
	p := c.P
	var f model.TokenFilter
	if id, ok := p.Int("user_id"); ok {
		f.UserID = id
	}
	f.State, _ = p.Enum("state", "active", "inactive")
	f.Revoked = p.BoolPtr("revoked")
	f.Search, _ = p.String("search")
	f.CreatedBefore, _ = p.Time("created_before")
	f.CreatedAfter, _ = p.Time("created_after")
	f.LastUsedBefore, _ = p.Time("last_used_before")
	f.LastUsedAfter, _ = p.Time("last_used_after")
	f.ExpiresBefore, _ = p.Date("expires_before")
	f.ExpiresAfter, _ = p.Date("expires_after")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ts, info, err := h.tokens.List(c.Ctx(), c.Actor, tokens.ListInput{TokenFilter: f}, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Token, len(ts))
	for i, t := range ts {
		out[i] = h.r.Token(t, "")
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

// tokenID is the path's token: an id, or "self" for the one in use (acted
// on by its owner, even under sudo).
func (h *Handlers) tokenID(c *endpoint.Call) (int64, auth.Actor, error) {
	if c.Path("id") == "" {
		if c.Actor.Token == nil {
			return 0, c.Actor, model.BadRequest("This endpoint requires token type to be a personal access token")
		}
		return c.Actor.Token.ID, c.Actor.Owner(), nil
	}
	id, err := c.PathID("id")
	return id, c.Actor, err
}

func (h *Handlers) getToken(c *endpoint.Call) error {
	id, actor, err := h.tokenID(c)
	if err != nil {
		return err
	}
	t, err := h.tokens.Get(c.Ctx(), actor, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Token(t, ""))
}

func (h *Handlers) revokeToken(c *endpoint.Call) error {
	id, actor, err := h.tokenID(c)
	if err != nil {
		return err
	}
	if err := h.tokens.Revoke(c.Ctx(), actor, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) rotateToken(c *endpoint.Call) error {
	id, actor, err := h.tokenID(c)
	if err != nil {
		return err
	}
	expires, _ := c.P.Date("expires_at")
	if err := c.P.Err(); err != nil {
		return err
	}
	t, secret, err := h.tokens.Rotate(c.Ctx(), actor, id, expires)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Token(t, secret))
}
