// Package oidc serves the OpenID Connect documents verifiers of CI ID
// tokens read, outside /api/v4 and without authentication:
// GET /.well-known/openid-configuration and GET /oauth/discovery/keys.
package oidc

import (
	"log/slog"
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/oidc"
)

// Handlers serve the two documents.
type Handlers struct {
	svc *oidc.Service
	log *slog.Logger
}

// New makes the handlers of svc.
func New(svc *oidc.Service, log *slog.Logger) *Handlers { return &Handlers{svc: svc, log: log} }

// Discovery serves GET /.well-known/openid-configuration.
func (h *Handlers) Discovery(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "max-age=86400, public")
	endpoint.WriteJSON(w, http.StatusOK, h.svc.Discovery())
}

// Keys serves GET /oauth/discovery/keys: the JWKS, the signing key first
// and the key it replaced after it (made on first use).
func (h *Handlers) Keys(w http.ResponseWriter, r *http.Request) {
	set, err := h.svc.JWKS(r.Context())
	if err != nil {
		endpoint.WriteError(w, r, h.log, err)
		return
	}
	w.Header().Set("Cache-Control", "max-age=86400, public")
	endpoint.WriteJSON(w, http.StatusOK, set)
}
