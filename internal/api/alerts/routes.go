// Package alerts serves alert management: a project's HTTP endpoint
// integrations, its alerts, and the intake URLs monitoring tools post to
// (project web paths, outside /api/v4, authenticated by the
// integration's key in the handler).
package alerts

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"quarry/internal/alerts"
	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
)

// Handlers answer the alerts area.
type Handlers struct {
	alerts *alerts.Service
	r      *entity.Renderer
}

// New returns the alerts area.
func New(a *alerts.Service, r *entity.Renderer) *Handlers { return &Handlers{alerts: a, r: r} }

// Routes are the area's rows. Integrations are the maintainers'; alerts
// are read by reporters and changed by developers (the service answers
// 404 for a project the caller does not see, 403 for a role too low).
func (h *Handlers) Routes() []endpoint.Route {
	row, parsed, token, api := endpoint.Row, endpoint.Parsed, endpoint.Token, endpoint.ScopeAPI
	integrations := "/projects/{id}/alert_management/http_integrations"
	list := "/projects/{id}/alert_management/alerts"
	images := "/projects/{id}/alert_management_alerts/{alert_iid}/metric_images"
	return []endpoint.Route{
		row("GET", integrations, token, api, parsed, h.listIntegrations),
		row("POST", integrations, token, api, parsed, h.createIntegration),
		row("GET", integrations+"/{integration_id}", token, api, parsed, h.getIntegration),
		row("PUT", integrations+"/{integration_id}", token, api, parsed, h.updateIntegration),
		row("DELETE", integrations+"/{integration_id}", token, api, parsed, h.deleteIntegration),
		row("POST", integrations+"/{integration_id}/reset_token", token, api, parsed, h.resetToken),
		row("GET", list, token, api, parsed, h.list),
		row("GET", list+"/{alert_iid}", token, api, parsed, h.get),
		row("PUT", list+"/{alert_iid}", token, api, parsed, h.update),
		row("GET", images, token, api, parsed, h.listImages),
		row("POST", images, token, api, endpoint.Carrying(endpoint.ContentAttachment), h.addImage),
		row("PUT", images+"/{metric_image_id}", token, api, parsed, h.updateImage),
		row("DELETE", images+"/{metric_image_id}", token, api, parsed, h.deleteImage),
	}
}

// Integration is an HTTP endpoint integration as the API shows it; Token
// only once, when created or reset.
type Integration struct {
	ID                       int64                `json:"id"`
	Name                     string               `json:"name"`
	Active                   bool                 `json:"active"`
	Type                     string               `json:"type"`
	URL                      string               `json:"url"`
	Token                    string               `json:"token,omitempty"`
	PayloadAttributeMappings []model.AlertMapping `json:"payload_attribute_mappings"`
	CreatedAt                time.Time            `json:"created_at"`
	UpdatedAt                time.Time            `json:"updated_at"`
}

func (h *Handlers) integration(i *model.AlertIntegration, p *model.Project, key string) Integration {
	ms := i.Mappings
	if ms == nil {
		ms = []model.AlertMapping{}
	}
	return Integration{ID: i.ID, Name: i.Name, Active: i.Active, Type: i.Kind, URL: h.r.ExternalURL + IntakePath(p.FullPath(), i),
		Token: key, PayloadAttributeMappings: ms, CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt}
}

// IntakePath is where an integration takes alerts: the Prometheus
// integration at the project's prometheus/alerts/notify.json, an HTTP one
// at alerts/notify/<name slug>/<identifier>.json.
func IntakePath(projectPath string, i *model.AlertIntegration) string {
	if i.Kind == model.AlertIntegrationPrometheus {
		return "/" + projectPath + "/prometheus/alerts/notify.json"
	}
	return "/" + projectPath + "/alerts/notify/" + slug(i.Name) + "/" + i.EndpointIdentifier + ".json"
}

// slug is GitLab's slugify of a name: lower-case letters and digits, runs
// of anything else one "-", at most 63 characters.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(c)
			if b.Len() >= 63 {
				break
			}
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "http-endpoint"
	}
	return b.String()
}

func integrationInput(p *endpoint.Params, create bool) alerts.IntegrationInput {
	in := alerts.IntegrationInput{Name: p.StringPtr("name"), Active: p.BoolPtr("active")}
	if in.Name != nil && len(*in.Name) > 4*alerts.MaxName {
		p.Fail("name is too long")
	}
	if create {
		in.Kind, _ = p.Enum("type", model.AlertIntegrationHTTP, model.AlertIntegrationPrometheus)
	}
	if p.IsNull("payload_attribute_mappings") {
		in.Mappings = &[]model.AlertMapping{}
	} else if p.Has("payload_attribute_mappings") {
		objs := p.Objects("payload_attribute_mappings")
		ms := make([]model.AlertMapping, 0, len(objs))
		for _, o := range objs {
			var m model.AlertMapping
			d := json.NewDecoder(bytes.NewReader([]byte(o)))
			d.UseNumber()
			d.DisallowUnknownFields()
			if err := d.Decode(&m); err != nil {
				p.Fail("payload_attribute_mappings is invalid")
				break
			}
			ms = append(ms, m)
		}
		in.Mappings = &ms
	}
	return in
}

func (h *Handlers) listIntegrations(c *endpoint.Call) error {
	is, p, err := h.alerts.Integrations(c.Ctx(), c.Actor, c.Path("id"))
	if err != nil {
		return err
	}
	out := make([]Integration, len(is))
	for i := range is {
		out[i] = h.integration(&is[i], &p, "")
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) createIntegration(c *endpoint.Call) error {
	c.P.Require("name")
	in := integrationInput(c.P, true)
	if err := c.P.Err(); err != nil {
		return err
	}
	i, key, p, err := h.alerts.CreateIntegration(c.Ctx(), c.Actor, c.Path("id"), in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.integration(&i, &p, key))
}

func (h *Handlers) getIntegration(c *endpoint.Call) error {
	id, err := c.PathID("integration_id")
	if err != nil {
		return err
	}
	i, p, err := h.alerts.Integration(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.integration(&i, &p, ""))
}

func (h *Handlers) updateIntegration(c *endpoint.Call) error {
	id, err := c.PathID("integration_id")
	if err != nil {
		return err
	}
	in := integrationInput(c.P, false)
	if err := c.P.Err(); err != nil {
		return err
	}
	i, p, err := h.alerts.UpdateIntegration(c.Ctx(), c.Actor, c.Path("id"), id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.integration(&i, &p, ""))
}

func (h *Handlers) deleteIntegration(c *endpoint.Call) error {
	id, err := c.PathID("integration_id")
	if err != nil {
		return err
	}
	if err := h.alerts.DeleteIntegration(c.Ctx(), c.Actor, c.Path("id"), id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) resetToken(c *endpoint.Call) error {
	id, err := c.PathID("integration_id")
	if err != nil {
		return err
	}
	i, key, p, err := h.alerts.ResetKey(c.Ctx(), c.Actor, c.Path("id"), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.integration(&i, &p, key))
}

// Alert is an alert as the API shows it: the fields of GitLab's
// AlertManagement::Alert GraphQL type, snake_cased, with the stored
// payload.
type Alert struct {
	ID             int64              `json:"id"`
	IID            int64              `json:"iid"`
	ProjectID      int64              `json:"project_id"`
	Title          string             `json:"title"`
	Description    *string            `json:"description"`
	Severity       string             `json:"severity"`
	Status         string             `json:"status"`
	Service        *string            `json:"service"`
	MonitoringTool *string            `json:"monitoring_tool"`
	Hosts          []string           `json:"hosts"`
	Environment    *Environment       `json:"environment"`
	Runbook        *string            `json:"runbook"`
	StartedAt      time.Time          `json:"started_at"`
	EndedAt        *time.Time         `json:"ended_at"`
	EventCount     int64              `json:"event_count"`
	Fingerprint    *string            `json:"fingerprint"`
	Assignees      []entity.UserBasic `json:"assignees"`
	Payload        json.RawMessage    `json:"payload,omitempty"`
	CreatedAt      time.Time          `json:"created_at"`
	UpdatedAt      time.Time          `json:"updated_at"`
	WebURL         string             `json:"web_url"`
}

// Environment names the environment an alert is about.
type Environment struct {
	Name string `json:"name"`
}

func nilEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (h *Handlers) alert(v *alerts.View, withPayload bool) Alert {
	a := Alert{ID: v.ID, IID: v.IID, ProjectID: v.ProjectID, Title: v.Title, Description: nilEmpty(v.Description),
		Severity: v.Severity.String(), Status: v.Status.String(), Service: nilEmpty(v.Service), MonitoringTool: nilEmpty(v.MonitoringTool),
		Hosts: v.Hosts, Runbook: nilEmpty(v.Runbook), StartedAt: v.StartedAt, EndedAt: v.EndedAt, EventCount: v.Events,
		Fingerprint: nilEmpty(v.Fingerprint), Assignees: []entity.UserBasic{}, CreatedAt: v.CreatedAt, UpdatedAt: v.UpdatedAt,
		WebURL: h.r.ExternalURL + "/" + v.Project.FullPath() + "/-/alert_management/" + strconv.FormatInt(v.IID, 10) + "/details"}
	if a.Hosts == nil {
		a.Hosts = []string{}
	}
	if v.Environment != "" {
		a.Environment = &Environment{Name: v.Environment}
	}
	for i := range v.Assignees {
		a.Assignees = append(a.Assignees, h.r.UserBasic(&v.Assignees[i]))
	}
	if withPayload {
		a.Payload = v.Payload
	}
	return a
}

func (h *Handlers) list(c *endpoint.Call) error {
	var in alerts.ListInput
	p := c.P
	if vs, ok := p.Unique("status"); ok {
		for _, v := range vs {
			s, ok := model.ParseAlertStatus(strings.ToLower(v))
			if !ok {
				p.Fail("status does not have a valid value")
				break
			}
			in.Statuses = append(in.Statuses, s)
		}
	}
	if vs, ok := p.Unique("severity"); ok {
		for _, v := range vs {
			s, ok := model.ParseAlertSeverity(strings.ToLower(v))
			if !ok {
				p.Fail("severity does not have a valid value")
				break
			}
			in.Severities = append(in.Severities, s)
		}
	}
	in.Search, _ = p.String("search")
	if len(in.Search) > 1000 {
		p.Fail("search is too long")
	}
	in.Sort, _ = p.Enum("sort", alerts.Sorts()...)
	if err := p.Err(); err != nil {
		return err
	}
	pg, err := c.Page()
	if err != nil {
		return err
	}
	vs, info, err := h.alerts.List(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]Alert, len(vs))
	for i := range vs {
		out[i] = h.alert(&vs[i], false)
	}
	return c.List(pg, info, out)
}

func (h *Handlers) get(c *endpoint.Call) error {
	iid, err := c.PathID("alert_iid")
	if err != nil {
		return err
	}
	v, err := h.alerts.Get(c.Ctx(), c.Actor, c.Path("id"), iid)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.alert(&v, true))
}

func (h *Handlers) update(c *endpoint.Call) error {
	iid, err := c.PathID("alert_iid")
	if err != nil {
		return err
	}
	var in alerts.UpdateInput
	if v, ok := c.P.Enum("status", "triggered", "acknowledged", "resolved", "ignored"); ok {
		s, _ := model.ParseAlertStatus(v)
		in.Status = &s
	}
	if c.P.Has("assignee_ids") {
		ids, _ := c.P.IDs("assignee_ids")
		if ids == nil {
			ids = []int64{}
		}
		in.AssigneeIDs = &ids
	}
	c.P.AtLeastOneOf("status", "assignee_ids")
	if err := c.P.Err(); err != nil {
		return err
	}
	v, err := h.alerts.Update(c.Ctx(), c.Actor, c.Path("id"), iid, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.alert(&v, true))
}

// MetricImage is GitLab's Entities::MetricImage.
type MetricImage struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Filename  string    `json:"filename"`
	FilePath  string    `json:"file_path"`
	URL       *string   `json:"url"`
	URLText   *string   `json:"url_text"`
}

func metricImage(m *model.AlertMetricImage) MetricImage {
	return MetricImage{ID: m.ID, CreatedAt: m.CreatedAt, Filename: m.Filename, FilePath: "/uploads/-/system/" + m.FilePath,
		URL: nilEmpty(m.URL), URLText: nilEmpty(m.URLText)}
}

func imageInput(p *endpoint.Params) alerts.ImageInput {
	in := alerts.ImageInput{URL: p.StringPtr("url"), URLText: p.StringPtr("url_text")}
	if (in.URL != nil && len(*in.URL) > 4*alerts.MaxImageURL) || (in.URLText != nil && len(*in.URLText) > 4*alerts.MaxImageURLText) {
		p.Fail("url is too long")
	}
	return in
}

func (h *Handlers) listImages(c *endpoint.Call) error {
	iid, err := c.PathID("alert_iid")
	if err != nil {
		return err
	}
	ms, err := h.alerts.MetricImages(c.Ctx(), c.Actor, c.Path("id"), iid)
	if err != nil {
		return err
	}
	out := make([]MetricImage, len(ms))
	for i := range ms {
		out[i] = metricImage(&ms[i])
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) addImage(c *endpoint.Call) error {
	iid, err := c.PathID("alert_iid")
	if err != nil {
		return err
	}
	f := c.P.File("file")
	if f == nil {
		c.P.Fail("file is missing")
	}
	in := imageInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	m, err := h.alerts.AddMetricImage(c.Ctx(), c.Actor, c.Path("id"), iid, f, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, metricImage(&m))
}

func (h *Handlers) updateImage(c *endpoint.Call) error {
	iid, err := c.PathID("alert_iid")
	if err != nil {
		return err
	}
	id, err := c.PathID("metric_image_id")
	if err != nil {
		return err
	}
	in := imageInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	m, err := h.alerts.UpdateMetricImage(c.Ctx(), c.Actor, c.Path("id"), iid, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, metricImage(&m))
}

func (h *Handlers) deleteImage(c *endpoint.Call) error {
	iid, err := c.PathID("alert_iid")
	if err != nil {
		return err
	}
	id, err := c.PathID("metric_image_id")
	if err != nil {
		return err
	}
	if err := h.alerts.DeleteMetricImage(c.Ctx(), c.Actor, c.Path("id"), iid, id); err != nil {
		return err
	}
	return c.NoContent()
}
