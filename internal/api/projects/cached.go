package projects

import (
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/projects"
)

// cacheable reports whether a signed-in caller's full project entities
// can come from the entity cache: it is on, and the request asks for
// nothing it does not keep (statistics, license, custom attributes).
func (h *Handlers) cacheable(c *endpoint.Call, simple, withStats, withExtra bool) bool {
	return h.r.Cache != nil && c.Actor.SignedIn() && !simple && !withStats && !withExtra
}

// cachedProjects encodes the full project entities of views (loaded
// without their topics) through the entity cache, as a JSON array when
// list, else the one entity: the templates of the misses are built (their
// topics loaded in one query) and kept, then each is spliced with the
// caller's parts.
func (h *Handlers) cachedProjects(c *endpoint.Call, views []projects.View, list bool) (*endpoint.Buffer, error) {
	cache := h.r.Cache
	keys := make([]entity.CacheKey, len(views))
	ts := make([]*entity.Template, len(views))
	var miss []*projects.View
	for i := range views {
		keys[i] = entity.ProjectKey(&views[i], c.Actor)
		if t, ok := cache.Get(keys[i]); ok {
			ts[i] = t
		} else {
			miss = append(miss, &views[i])
		}
	}
	if len(miss) > 0 {
		if err := h.projects.LoadTopics(c.Ctx(), miss); err != nil {
			return nil, err
		}
		for i := range views {
			if ts[i] != nil {
				continue
			}
			t, err := h.r.ProjectTemplate(&views[i], c.Actor)
			if err != nil {
				return nil, err
			}
			cache.Put(keys[i], t)
			ts[i] = t
		}
	}
	buf := endpoint.NewBuffer()
	out := buf.B
	if list {
		out = append(out, '[')
	}
	for i := range views {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = h.r.SpliceProject(out, ts[i], &views[i], c.Actor); err != nil {
			return nil, err
		}
	}
	if list {
		out = append(out, ']')
	}
	buf.B = out
	return buf, nil
}
