package web

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// maxFormBytes bounds a form's body (sign-in sends a login and a
// password).
const maxFormBytes = 16 << 10

// readForm reads a posted form of at most max bytes; false when it could
// not, and a page answered: 413 past the bound, 400 for a form that is
// not one.
func (h *Handler) readForm(w http.ResponseWriter, r *http.Request, a auth.Actor, max int64) bool {
	r.Body = http.MaxBytesReader(w, r.Body, max)
	err := r.ParseForm()
	if err == nil {
		return true
	}
	if _, over := errors.AsType[*http.MaxBytesError](err); over {
		h.errorPage(w, r, a, http.StatusRequestEntityTooLarge, "413: Payload too large", "The form is larger than this page takes.")
		return false
	}
	h.errorPage(w, r, a, http.StatusBadRequest, "400: Bad request", "The form could not be read.")
	return false
}

// signInBody is the data of the sign-in page.
type signInBody struct {
	Login, RedirectTo, Alert string
}

// signInPage shows the form; a signed-in user goes on at once.
func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	to := r.URL.Query().Get("redirect_to")
	if !localPath(to) {
		to = ""
	}
	if a := h.actor(w, r); a.SignedIn() {
		http.Redirect(w, r, orHome(to), http.StatusFound)
		return
	}
	h.render(w, r, auth.Anonymous, http.StatusOK, "sign_in", view{Title: "Sign in",
		Body: signInBody{RedirectTo: to}})
}

// signIn checks the form and opens a session: a fresh session id each
// time (a session id planted before sign-in is never the signed-in one),
// the one presented ended.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if !h.readForm(w, r, auth.Anonymous, maxFormBytes) {
		return
	}
	login, password := r.PostForm.Get("user[login]"), r.PostForm.Get("user[password]")
	to := r.PostForm.Get("redirect_to")
	if !localPath(to) {
		to = ""
	}
	body := signInBody{Login: login, RedirectTo: to}
	if !h.byClient.Allow(clientIP(r)) || !h.byLogin.Allow(strings.ToLower(strings.TrimSpace(login))) {
		body.Alert = "Too many sign-in attempts. Retry later."
		w.Header().Set("Retry-After", "60")
		h.render(w, r, auth.Anonymous, http.StatusTooManyRequests, "sign_in", view{Title: "Sign in", Body: body})
		return
	}
	u, err := h.Users.SignIn(r.Context(), login, password)
	if err != nil {
		var me *model.Error
		status := http.StatusUnauthorized
		body.Alert = "Invalid login or password."
		switch {
		case isKind(err, model.KindForbidden):
			status = http.StatusForbidden
			if asError(err, &me) {
				body.Alert = me.Message
			}
		case !isKind(err, model.KindUnauthorized):
			h.fail(w, r, auth.Anonymous, err)
			return
		}
		h.render(w, r, auth.Anonymous, status, "sign_in", view{Title: "Sign in", Body: body})
		return
	}
	if c, err := r.Cookie(SessionCookie); err == nil {
		if err := h.Users.EndSession(r.Context(), c.Value); err != nil {
			h.fail(w, r, auth.Anonymous, err)
			return
		}
	}
	id, _, err := h.Users.StartSession(r.Context(), u)
	if err != nil {
		h.fail(w, r, auth.Anonymous, err)
		return
	}
	h.setCookie(w, id)
	http.Redirect(w, r, orHome(to), http.StatusSeeOther)
}

// signOut ends the session and clears the cookie.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(SessionCookie); err == nil {
		if err := h.Users.EndSession(r.Context(), c.Value); err != nil {
			h.fail(w, r, auth.Anonymous, err)
			return
		}
	}
	h.clearCookie(w)
	http.Redirect(w, r, "/users/sign_in", http.StatusSeeOther)
}

func orHome(to string) string {
	if to == "" {
		return "/"
	}
	return to
}

// clientIP is the request's peer address (the sign-in limit's key).
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

func urlPathEscape(s string) string { return url.PathEscape(s) }
