// Package groupexport serves GitLab's group import/export API: starting
// an export, downloading it, and importing an archive into a new group.
package groupexport

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/groupexport"
	"quarry/internal/model"
)

// maxUpload bounds an import's request body whatever max_import_size
// says (0 there is "unlimited"): 64 GiB.
const maxUpload = 64 << 30

// maxField bounds a form field of the import besides the file.
const maxField = 4096

// Handlers answer the area.
type Handlers struct{ svc *groupexport.Service }

// New returns the area.
func New(s *groupexport.Service) *Handlers { return &Handlers{svc: s} }

// Routes are the area's rows.
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.ScopeAPI
	return []endpoint.Route{
		row("POST", "/groups/{id}/export", token, api, parsed, h.export),
		row("GET", "/groups/{id}/export/download", token, api, parsed, h.download),
		row("POST", "/groups/import", token, api, endpoint.Streamed(maxUpload), h.importGroup),
	}
}

func (h *Handlers) export(c *endpoint.Call) error {
	if err := h.svc.StartExport(c.Ctx(), c.Actor, c.Path("id")); err != nil {
		return err
	}
	return c.Accepted()
}

func (h *Handlers) download(c *endpoint.Call) error {
	rc, name, size, err := h.svc.Download(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	defer rc.Close()
	return c.Download(rc, name, "application/octet-stream", size)
}

// importGroup reads the multipart form as it streams: the file is
// unpacked and checked as it arrives (whatever the order of the parts),
// then the group is created and its import scheduled.
func (h *Handlers) importGroup(c *endpoint.Call) error {
	fields := map[string]string{}
	for _, k := range []string{"name", "path", "parent_id"} {
		if v, ok := c.P.String(k); ok {
			fields[k] = v
		}
	}
	var staged *groupexport.Staged
	defer func() { staged.Remove() }()
	if mt, params, err := mime.ParseMediaType(c.R.Header.Get("Content-Type")); err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
		mr := multipart.NewReader(c.Body(), params["boundary"])
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return endpoint.BodyError(err)
			}
			switch name := part.FormName(); name {
			case "file":
				if staged != nil {
					return model.Param("file is given twice")
				}
				// A parent named before the file is checked before the
				// upload is read (clients send their fields first).
				if v := strings.TrimSpace(fields["parent_id"]); v != "" {
					if id, err := strconv.ParseInt(v, 10, 64); err == nil && id > 0 {
						if err := h.svc.CheckParent(c.Ctx(), c.Actor, id); err != nil {
							return err
						}
					}
				}
				if staged, err = h.svc.Unpack(c.Ctx(), c.Actor, part); err != nil {
					return endpoint.BodyError(err)
				}
			case "name", "path", "parent_id":
				b, err := io.ReadAll(io.LimitReader(part, maxField+1))
				if err != nil {
					return endpoint.BodyError(err)
				}
				if len(b) > maxField {
					return model.Param(name + " is too long")
				}
				fields[name] = string(b)
			}
		}
	}
	var missing []string
	for _, k := range []string{"name", "path"} {
		if strings.TrimSpace(fields[k]) == "" {
			missing = append(missing, k+" is missing")
		}
	}
	if staged == nil {
		missing = append(missing, "file is missing")
	}
	if len(missing) > 0 {
		return model.Param(strings.Join(missing, ", "))
	}
	in := groupexport.ImportInput{Name: fields["name"], Path: fields["path"]}
	if v := strings.TrimSpace(fields["parent_id"]); v != "" {
		id, err := strconv.ParseInt(v, 10, 64)
		if err != nil || id <= 0 {
			return model.Param("parent_id is invalid")
		}
		in.ParentID = &id
	}
	if _, err := h.svc.Import(c.Ctx(), c.Actor, in, staged); err != nil {
		return err
	}
	return c.Accepted()
}
