// Package settings serves the instance's application settings
// (administrators only).
package settings

import (
	"net/http"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/settings"
)

// Handlers answer /application/settings.
type Handlers struct {
	settings *settings.Service
}

// New returns the settings area.
func New(s *settings.Service) *Handlers { return &Handlers{settings: s} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token := endpoint.Row, endpoint.Parsed, endpoint.Token
	return []endpoint.Route{
		row("GET", "/application/settings", token, endpoint.ScopeUser, parsed, h.get),
		row("PUT", "/application/settings", token, endpoint.ScopeAPI, parsed, h.update),
	}
}

func (h *Handlers) get(c *endpoint.Call) error {
	row, err := h.settings.Get(c.Ctx(), c.Actor)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, shown(row))
}

// update reads every parameter as a settings attribute: a list parameter
// keeps all its values, a hash parameter (name[key]=value, or a JSON
// object) its entries; the service ignores names that are no attribute.
func (h *Handlers) update(c *endpoint.Call) error {
	in := map[string]model.SettingInput{}
	for _, key := range c.P.Keys() {
		if name, sub, ok := strings.Cut(key, "["); ok {
			v := in[name]
			if v.Hash == nil {
				v.Hash = map[string]string{}
			}
			vals, _ := c.P.Values(key)
			if len(vals) != 1 || !strings.HasSuffix(sub, "]") || strings.ContainsAny(strings.TrimSuffix(sub, "]"), "[]") {
				v.Hash[""] = "" // not a flat hash: the attribute reads it as invalid
			} else {
				v.Hash[strings.TrimSuffix(sub, "]")] = vals[0]
			}
			in[name] = v
			continue
		}
		vals, nested := c.P.Values(key)
		if nested {
			vals = append(vals, "") // an object or array inside a list
		}
		in[key] = model.SettingInput{Values: vals, Null: c.P.IsNull(key)}
	}
	row, err := h.settings.Update(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, shown(row))
}

// shown is the settings object of GitLab's response: id 1, every
// attribute but the secrets, the legacy names, and the row's times.
func shown(row settings.Row) map[string]any {
	out := row.Settings.Shown()
	out["id"] = 1
	out["created_at"] = entity.Time(row.CreatedAt)
	out["updated_at"] = entity.Time(row.UpdatedAt)
	return out
}
