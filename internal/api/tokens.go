package api

import (
	"net/http"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

type tokenJSON struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Revoked     bool     `json:"revoked"`
	CreatedAt   apiTime  `json:"created_at"`
	Description string   `json:"description"`
	Scopes      []string `json:"scopes"`
	UserID      int64    `json:"user_id"`
	LastUsedAt  *apiTime `json:"last_used_at"`
	Active      bool     `json:"active"`
	ExpiresAt   *string  `json:"expires_at"`
	Expired     bool     `json:"expired"`
	Token       string   `json:"token,omitempty"`
}

func (c *call) token(t model.PersonalAccessToken, secret string) tokenJSON {
	scopes := make([]string, len(t.Scopes))
	for i, s := range t.Scopes {
		scopes[i] = string(s)
	}
	now := c.s.now()
	return tokenJSON{ID: t.ID, Name: t.Name, Revoked: t.Revoked, CreatedAt: apiTime(t.CreatedAt), Description: t.Description,
		Scopes: scopes, UserID: t.UserID, LastUsedAt: timePtr(t.LastUsedAt), Active: t.Active(now),
		ExpiresAt: strPtr(t.ExpiresAt), Expired: t.Expired(now), Token: secret}
}

// scopes reads and validates a token's scopes.
func scopesParam(p *Params) []model.Scope {
	vals, ok := p.Strings("scopes")
	if !ok {
		return nil
	}
	out := make([]model.Scope, 0, len(vals))
	for _, v := range vals {
		if !model.ValidScope(v) {
			p.fail("scopes does not have a valid value")
			return nil
		}
		out = append(out, model.Scope(v))
	}
	if len(out) == 0 {
		p.fail("scopes is empty")
	}
	return out
}

func (c *call) createToken() error {
	id, err := c.pathInt("user_id")
	if err != nil {
		return err
	}
	// Like GitLab, the administrator check comes before parameter checks.
	if !c.actor.Admin() {
		return model.Forbidden("")
	}
	p := c.p
	p.Require("name", "scopes")
	in := tokens.CreateInput{Name: first(p.String("name")), Description: first(p.String("description")), Scopes: scopesParam(p)}
	in.ExpiresAt, _ = p.Date("expires_at")
	if err := p.Err(); err != nil {
		return err
	}
	t, secret, err := c.s.Tokens.Create(c.r.Context(), c.actor, id, in)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, c.token(t, secret))
}

func (c *call) listTokens() error {
	p := c.p
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
	pg, err := c.page()
	if err != nil {
		return err
	}
	ts, info, err := c.s.Tokens.List(c.r.Context(), c.actor, tokens.ListInput{TokenFilter: f}, pg)
	if err != nil {
		return err
	}
	out := make([]tokenJSON, len(ts))
	for i, t := range ts {
		out[i] = c.token(t, "")
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, out)
}

// tokenID is the path's token: an id, or "self" for the one in use (acted
// on by its owner, even under sudo).
func (c *call) tokenID() (int64, auth.Actor, error) {
	if c.r.PathValue("id") == "" {
		if c.actor.Token == nil {
			return 0, c.actor, model.BadRequest("This endpoint requires token type to be a personal access token")
		}
		return c.actor.Token.ID, c.actor.Owner(), nil
	}
	id, err := c.pathInt("id")
	return id, c.actor, err
}

func (c *call) getToken() error {
	id, actor, err := c.tokenID()
	if err != nil {
		return err
	}
	t, err := c.s.Tokens.Get(c.r.Context(), actor, id)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.token(t, ""))
}

func (c *call) revokeToken() error {
	id, actor, err := c.tokenID()
	if err != nil {
		return err
	}
	if err := c.s.Tokens.Revoke(c.r.Context(), actor, id); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) rotateToken() error {
	id, actor, err := c.tokenID()
	if err != nil {
		return err
	}
	expires, _ := c.p.Date("expires_at")
	if err := c.p.Err(); err != nil {
		return err
	}
	t, secret, err := c.s.Tokens.Rotate(c.r.Context(), actor, id, expires)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.token(t, secret))
}
