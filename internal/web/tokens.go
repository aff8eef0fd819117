package web

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/tokens"
)

// tokensPath is the signed-in user's personal access tokens page
// (GitLab's path); oldTokensPath is where GitLab had it before.
const (
	tokensPath    = "/-/user_settings/personal_access_tokens"
	oldTokensPath = "/-/profile/personal_access_tokens"
)

// maxTokensListed is how many active tokens the page lists.
const maxTokensListed = 100

// tokenItem is a token as the page lists it.
type tokenItem struct {
	ID                     int64
	Name, Scopes           string
	Created, CreatedDate   string
	LastUsed, LastUsedDate string // "" when never used
	Expires                string // YYYY-MM-DD, "" for never
	RevokeURL              string
}

// scopeChoice is a scope's checkbox of the create form.
type scopeChoice struct {
	Name    string
	Checked bool
}

// tokensBody is the data of the tokens page.
type tokensBody struct {
	Tokens []tokenItem
	More   bool
	Scopes []scopeChoice
	// The form's values (kept when it is refused).
	Name, ExpiresAt, MinDate string
	Alert                    string
	// NewToken is the secret of the token just created: shown on this
	// answer only.
	NewToken, NewTokenName string
	Action                 string
}

// userSettings serves the personal access tokens page and its forms;
// it reports whether the path was one of them.
func (h *Handler) userSettings(w http.ResponseWriter, r *http.Request, a auth.Actor, p string) bool {
	get := r.Method == http.MethodGet || r.Method == http.MethodHead
	post := r.Method == http.MethodPost
	switch {
	case p == oldTokensPath && get:
		http.Redirect(w, r, tokensPath, http.StatusMovedPermanently)
	case p == tokensPath && (get || post):
		if !a.SignedIn() {
			redirectToSignIn(w, r)
			return true
		}
		if post {
			h.createToken(w, r, a)
			return true
		}
		h.tokensPage(w, r, a, http.StatusOK, tokensBody{})
	case strings.HasPrefix(p, tokensPath+"/") && post:
		if !a.SignedIn() {
			http.Redirect(w, r, "/users/sign_in?redirect_to="+tokensPath, http.StatusSeeOther)
			return true
		}
		id, ok := strings.CutSuffix(strings.TrimPrefix(p, tokensPath+"/"), "/revoke")
		n, err := strconv.ParseInt(id, 10, 64)
		if !ok || err != nil || n <= 0 {
			h.notFound(w, r, a)
			return true
		}
		if err := h.Tokens.Revoke(r.Context(), a, n); err != nil {
			h.fail(w, r, a, err)
			return true
		}
		http.Redirect(w, r, tokensPath, http.StatusSeeOther)
	default:
		return false
	}
	return true
}

// tokensPage lists the user's active tokens beside the create form.
func (h *Handler) tokensPage(w http.ResponseWriter, r *http.Request, a auth.Actor, status int, body tokensBody) {
	no := false
	ts, info, err := h.Tokens.List(r.Context(), a, tokens.ListInput{TokenFilter: model.TokenFilter{
		UserID: a.UserID(), Impersonation: &no, State: "active"}}, model.Page{Number: 1, PerPage: maxTokensListed})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	body.More = info.HasMore
	for _, t := range ts {
		it := tokenItem{ID: t.ID, Name: t.Name, Created: t.CreatedAt.UTC().Format(time.RFC3339),
			CreatedDate: t.CreatedAt.UTC().Format("Jan 2, 2006"), Expires: t.ExpiresAt,
			RevokeURL: tokensPath + "/" + strconv.FormatInt(t.ID, 10) + "/revoke"}
		scopes := make([]string, len(t.Scopes))
		for i, s := range t.Scopes {
			scopes[i] = string(s)
		}
		it.Scopes = strings.Join(scopes, ", ")
		if t.LastUsedAt != nil {
			it.LastUsed, it.LastUsedDate = t.LastUsedAt.UTC().Format(time.RFC3339), ago(*t.LastUsedAt)
		}
		body.Tokens = append(body.Tokens, it)
	}
	checked := map[string]bool{}
	for _, s := range body.Scopes {
		checked[s.Name] = s.Checked
	}
	body.Scopes = body.Scopes[:0]
	for _, s := range tokens.AvailableScopes(a) {
		body.Scopes = append(body.Scopes, scopeChoice{Name: string(s), Checked: checked[string(s)]})
	}
	body.Action = tokensPath
	body.MinDate = h.Now().UTC().AddDate(0, 0, 1).Format(model.DateLayout)
	h.render(w, r, a, status, "tokens", view{Title: "Personal access tokens",
		Crumbs: []crumb{{Name: "User settings"}, {Name: "Personal access tokens"}}, Body: body})
}

// createToken creates a token from the form and shows its secret once,
// in this answer (never in a URL or a cookie); a refused form is shown
// again with the service's message.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, a auth.Actor) {
	if !h.readForm(w, r, a, maxFormBytes) {
		return
	}
	f := r.PostForm
	in := tokens.CreateInput{Name: f.Get("name"), ExpiresAt: strings.TrimSpace(f.Get("expires_at"))}
	body := tokensBody{Name: in.Name, ExpiresAt: in.ExpiresAt}
	vals := f["scopes[]"]
	if len(vals) > len(model.AllScopes) {
		vals = vals[:len(model.AllScopes)+1] // enough to be refused
	}
	for _, v := range vals {
		if !model.ValidScope(v) {
			body.Alert = "Scopes can only contain available scopes"
			h.tokensPage(w, r, a, http.StatusBadRequest, body)
			return
		}
		in.Scopes = append(in.Scopes, model.Scope(v))
		body.Scopes = append(body.Scopes, scopeChoice{Name: v, Checked: true})
	}
	t, secret, err := h.Tokens.CreateOwn(r.Context(), a, in)
	if err != nil {
		var me *model.Error
		if !isKind(err, model.KindBadRequest) || !asError(err, &me) {
			h.fail(w, r, a, err)
			return
		}
		body.Alert = me.Message
		h.tokensPage(w, r, a, http.StatusBadRequest, body)
		return
	}
	// The secret is in this page only: it must not be kept by any cache.
	w.Header().Set("Cache-Control", "no-store")
	h.tokensPage(w, r, a, http.StatusOK, tokensBody{NewToken: secret, NewTokenName: t.Name})
}
