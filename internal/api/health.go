package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"quarry/internal/api/endpoint"
	"quarry/internal/model"
)

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "Quarry OK")
}

func (s *Server) liveness(w http.ResponseWriter, r *http.Request) {
	endpoint.WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

type checkJSON struct {
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
}

// readiness checks the database; ?all=1 names each check.
func (s *Server) readiness(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	db := checkJSON{Status: "ok"}
	status := http.StatusOK
	if err := s.DB.Ping(ctx); err != nil {
		db = checkJSON{Status: "failed", Message: err.Error()}
		status = http.StatusServiceUnavailable
	}
	body := map[string]any{"status": db.Status, "master_check": []checkJSON{{Status: db.Status}}}
	if r.URL.Query().Get("all") != "" {
		body["db_check"] = []checkJSON{db}
	}
	endpoint.WriteJSON(w, status, body)
}

func (s *Server) version(c *endpoint.Call) error {
	return c.JSON(http.StatusOK, map[string]string{"version": s.Version, "revision": s.Revision})
}

// upload streams a stored upload (avatars) from /uploads/-/system/….
func (s *Server) upload(w http.ResponseWriter, r *http.Request) {
	rel := r.PathValue("path")
	f, err := s.Uploads.Open(rel)
	if err != nil {
		if !errors.Is(err, model.ErrNotFound) {
			s.log.Error("open upload", "path", rel, "err", err)
		}
		endpoint.WriteJSON(w, http.StatusNotFound, endpoint.MessageBody{Message: "404 Not Found"})
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		endpoint.WriteJSON(w, http.StatusNotFound, endpoint.MessageBody{Message: "404 Not Found"})
		return
	}
	ct := mime.TypeByExtension(strings.ToLower(path.Ext(rel)))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	w.Header().Set("Cache-Control", "max-age=3600, public")
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, f)
}
