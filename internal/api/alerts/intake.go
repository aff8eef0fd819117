package alerts

import (
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"quarry/internal/alerts"
	"quarry/internal/api/endpoint"
)

// Intake serves the intake URLs (POST only):
//
//	/<project>/alerts/notify/<name>/<identifier>.json   an HTTP integration
//	/<project>/alerts/notify.json                       the project's default (oldest) HTTP integration
//	/<project>/prometheus/alerts/notify.json            the Prometheus integration
//
// The key comes as Authorization: Bearer <key>, or Basic with any user
// and the key as password (what clients send for credentials in the URL).
// The body is read up to the payload limit before anything else, as
// GitLab checks the payload first; errors are answered by status alone.
func (h *Handlers) Intake(log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req, ok := MatchIntake(r.URL.Path)
		if !ok {
			endpoint.WriteJSON(w, http.StatusNotFound, endpoint.NotFoundBody)
			return
		}
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			endpoint.WriteJSON(w, http.StatusMethodNotAllowed, endpoint.ErrorBody{Error: "405 Method Not Allowed"})
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, alerts.MaxPayloadBytes+1))
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		req.Key = intakeKey(r)
		req.Body = body
		res, err := h.alerts.Notify(r.Context(), req)
		if err != nil {
			endpoint.WriteHead(w, r, log, err)
			return
		}
		if res.Prometheus {
			w.WriteHeader(http.StatusCreated)
			return
		}
		out := make([]createdAlert, len(res.Alerts))
		for i, a := range res.Alerts {
			out[i] = createdAlert{IID: a.IID, Title: a.Title}
		}
		endpoint.WriteJSON(w, http.StatusOK, out)
	})
}

type createdAlert struct {
	IID   int64  `json:"iid"`
	Title string `json:"title"`
}

// intakeKey is the integration key a request presents: a Bearer token,
// or the password of Basic credentials.
func intakeKey(r *http.Request) string {
	h := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, rest, _ := strings.Cut(h, " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(scheme) {
	case "bearer":
		return rest
	case "basic":
		if len(rest) > 1024 {
			return ""
		}
		b, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return ""
		}
		_, pass, _ := strings.Cut(string(b), ":")
		return pass
	}
	return ""
}

// IsIntakePath reports whether path is an intake URL's shape (the
// handler still checks the parts).
func IsIntakePath(path string) bool {
	return strings.HasSuffix(path, ".json") && strings.Contains(path, "/alerts/notify")
}

// MatchIntake splits an intake path into the project's full path and the
// integration it names; ok is false for any other path.
func MatchIntake(path string) (alerts.IntakeRequest, bool) {
	var req alerts.IntakeRequest
	if !strings.HasPrefix(path, "/") {
		return req, false
	}
	project := ""
	switch {
	case strings.HasSuffix(path, "/prometheus/alerts/notify.json"):
		project, req.Route = strings.TrimSuffix(path, "/prometheus/alerts/notify.json"), alerts.PrometheusLegacy
	case strings.HasSuffix(path, "/alerts/notify.json"):
		project, req.Route = strings.TrimSuffix(path, "/alerts/notify.json"), alerts.Legacy
	default:
		rest, ok := strings.CutSuffix(path, ".json")
		if !ok {
			return req, false
		}
		i := strings.LastIndexByte(rest, '/')
		if i < 0 {
			return req, false
		}
		id := rest[i+1:]
		rest = rest[:i]
		j := strings.LastIndexByte(rest, '/')
		if j < 0 || !alnum(id) || len(id) > 64 || rest[j+1:] == "" {
			return req, false
		}
		project, ok = strings.CutSuffix(rest[:j], "/alerts/notify")
		if !ok {
			return req, false
		}
		req.Route, req.Identifier = alerts.ByIdentifier, id
	}
	project = strings.TrimPrefix(project, "/")
	if !strings.Contains(project, "/") || strings.Contains(project, "//") || strings.HasPrefix(project, "/") || strings.HasSuffix(project, "/") ||
		strings.Contains(project, "/-/") || strings.HasPrefix(project, "api/") || strings.HasPrefix(project, "-/") {
		return req, false
	}
	req.ProjectPath = project
	return req, true
}

func alnum(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
