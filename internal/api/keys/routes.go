// Package keys serves SSH keys: the caller's and other users' keys
// (/user/keys, /users/:id/keys), keys by id or fingerprint (/keys) and
// deploy keys, instance-wide and per project (/deploy_keys,
// /projects/:id/deploy_keys), in GitLab's shapes.
package keys

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/keys"
	"quarry/internal/model"
)

// Handlers answer the keys area.
type Handlers struct {
	keys *keys.Service
	r    *entity.Renderer
}

// New returns the area.
func New(s *keys.Service, r *entity.Renderer) *Handlers { return &Handlers{keys: s, r: r} }

// Routes are the area's rows. A user's keys are public where the user
// is; writes to another user's keys, keys by id or fingerprint and the
// instance's deploy keys are for administrators (403); a project's deploy
// keys for its maintainers (404 when the project is hidden, else 403).
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed := endpoint.Row, endpoint.Parsed
	public, token := endpoint.Public, endpoint.Token
	api, user := endpoint.ScopeAPI, endpoint.ScopeUser
	return []endpoint.Route{
		row("GET", "/user/keys", token, user, parsed, h.listOwn),
		row("POST", "/user/keys", token, api, parsed, h.createOwn),
		row("GET", "/user/keys/{key_id}", token, user, parsed, h.getOwn),
		row("DELETE", "/user/keys/{key_id}", token, api, parsed, h.deleteOwn),
		row("GET", "/users/{id}/keys", public, user, parsed, h.listOf),
		row("POST", "/users/{id}/keys", token, api, parsed, h.createFor),
		row("GET", "/users/{id}/keys/{key_id}", public, user, parsed, h.getOf),
		row("DELETE", "/users/{id}/keys/{key_id}", token, api, parsed, h.deleteFor),
		row("GET", "/keys", token, user, parsed, h.byFingerprint),
		row("GET", "/keys/{id}", token, user, parsed, h.byID),

		row("GET", "/deploy_keys", token, api, parsed, h.listDeploy),
		row("POST", "/deploy_keys", token, api, parsed, h.createInstance),
		row("GET", "/projects/{id}/deploy_keys", token, api, parsed, h.listProject),
		row("POST", "/projects/{id}/deploy_keys", token, api, parsed, h.createProject),
		row("GET", "/projects/{id}/deploy_keys/{key_id}", token, api, parsed, h.getProject),
		row("PUT", "/projects/{id}/deploy_keys/{key_id}", token, api, parsed, h.updateProject),
		row("DELETE", "/projects/{id}/deploy_keys/{key_id}", token, api, parsed, h.deleteProject),
		row("POST", "/projects/{id}/deploy_keys/{key_id}/enable", token, api, parsed, h.enable),
	}
}

// input reads a new key's parameters (key and title required).
func input(c *endpoint.Call, usage bool) keys.Input {
	c.P.Require("key", "title")
	var in keys.Input
	in.Key, _ = c.P.String("key")
	in.Title, _ = c.P.String("title")
	in.ExpiresAt, _ = c.P.Time("expires_at")
	if usage {
		u, _ := c.P.Enum("usage_type", model.KeyUsages...)
		in.Usage = model.KeyUsage(u)
	}
	return in
}

func (h *Handlers) keyList(list []model.SSHKey, owner string) []entity.SSHKey {
	out := make([]entity.SSHKey, len(list))
	for i := range list {
		out[i] = h.r.SSHKey(list[i], owner)
	}
	return out
}

func (h *Handlers) listOwn(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.keys.ListOwn(c.Ctx(), c.Actor, pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.keyList(list, c.Actor.User.Name))
}

func (h *Handlers) listOf(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	u, list, info, err := h.keys.ListOf(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	return c.List(pg, info, h.keyList(list, u.Name))
}

func (h *Handlers) getOwn(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	k, err := h.keys.GetOwn(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.SSHKey(k, c.Actor.User.Name))
}

func (h *Handlers) getOf(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	u, k, err := h.keys.GetOf(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.SSHKey(k, u.Name))
}

func (h *Handlers) createOwn(c *endpoint.Call) error {
	in := input(c, true)
	if err := c.P.Err(); err != nil {
		return err
	}
	k, err := h.keys.CreateOwn(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.SSHKey(k, c.Actor.User.Name))
}

func (h *Handlers) createFor(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	in := input(c, true)
	if err := c.P.Err(); err != nil {
		return err
	}
	u, k, err := h.keys.CreateFor(c.Ctx(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.SSHKey(k, u.Name))
}

func (h *Handlers) deleteOwn(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	if err := h.keys.DeleteOwn(c.Ctx(), c.Actor, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) deleteFor(c *endpoint.Call) error {
	uid, err := c.PathID("id")
	if err != nil {
		return err
	}
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	if err := h.keys.DeleteFor(c.Ctx(), c.Actor, uid, id); err != nil {
		return err
	}
	return c.NoContent()
}

// withUser renders a key found by id or fingerprint: a user's key as
// SSHKeyWithUser, a deploy key as DeployKeyWithUser.
func (h *Handlers) withUser(c *endpoint.Call, k keys.WithUser) error {
	var u *model.User
	if k.HasUser {
		u = &k.User
	}
	if k.Deploy {
		return c.JSON(http.StatusOK, h.r.DeployKeyWithUser(k.SSHKey, u, c.Actor))
	}
	return c.JSON(http.StatusOK, h.r.SSHKeyWithUser(k.SSHKey, u, c.Actor))
}

func (h *Handlers) byFingerprint(c *endpoint.Call) error {
	c.P.Require("fingerprint")
	fp, _ := c.P.String("fingerprint")
	if err := c.P.Err(); err != nil {
		return err
	}
	k, err := h.keys.ByFingerprint(c.Ctx(), c.Actor, fp)
	if err != nil {
		return err
	}
	return h.withUser(c, k)
}

func (h *Handlers) byID(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	k, err := h.keys.ByID(c.Ctx(), c.Actor, id)
	if err != nil {
		return err
	}
	// GitLab presents every key found by id as a user's key.
	var u *model.User
	if k.HasUser {
		u = &k.User
	}
	return c.JSON(http.StatusOK, h.r.SSHKeyWithUser(k.SSHKey, u, c.Actor))
}

func (h *Handlers) listDeploy(c *endpoint.Call) error {
	public := false
	if c.P.Has("public") {
		public, _ = c.P.Bool("public")
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	list, info, err := h.keys.ListDeploy(c.Ctx(), c.Actor, public, pg)
	if err != nil {
		return err
	}
	out := make([]entity.DeployKeyWithProjects, len(list))
	for i := range list {
		out[i] = h.r.DeployKeyWithProjects(list[i].SSHKey, list[i].Write, list[i].ReadOnly)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) createInstance(c *endpoint.Call) error {
	in := input(c, false)
	if err := c.P.Err(); err != nil {
		return err
	}
	k, err := h.keys.CreateInstance(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.DeployKey(k))
}

func (h *Handlers) listProject(c *endpoint.Call) error {
	pg, err := c.Page()
	if err != nil {
		return err
	}
	list, info, err := h.keys.ListProject(c.Ctx(), c.Actor, c.Path("id"), pg)
	if err != nil {
		return err
	}
	out := make([]entity.DeployKeysProject, len(list))
	for i := range list {
		out[i] = h.r.DeployKeysProject(list[i])
	}
	return c.List(pg, info, out)
}

func (h *Handlers) getProject(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	d, err := h.keys.GetProject(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.DeployKeysProject(d))
}

func (h *Handlers) createProject(c *endpoint.Call) error {
	in := input(c, false)
	canPush := false
	if c.P.Has("can_push") {
		canPush, _ = c.P.Bool("can_push")
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	d, err := h.keys.CreateProject(c.Ctx(), c.Actor, c.Path("id"), in, canPush)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.DeployKeysProject(d))
}

func (h *Handlers) updateProject(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	c.P.AtLeastOneOf("title", "can_push")
	in := keys.UpdateInput{Title: c.P.StringPtr("title"), CanPush: c.P.BoolPtr("can_push")}
	if err := c.P.Err(); err != nil {
		return err
	}
	d, err := h.keys.UpdateProject(c.Ctx(), c.Actor, c.Path("id"), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.DeployKeysProject(d))
}

func (h *Handlers) deleteProject(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	if err := h.keys.DisableProject(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) enable(c *endpoint.Call) error {
	id, err := c.PathID("key_id")
	if err != nil {
		return err
	}
	k, err := h.keys.Enable(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.DeployKey(k))
}
