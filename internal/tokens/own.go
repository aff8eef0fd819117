package tokens

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// maxNameLength bounds a token's name (GitLab's column).
const maxNameLength = 255

// AvailableScopes are the scopes a user may give a token of their own:
// sudo and admin_mode only for an administrator, as GitLab offers them.
func AvailableScopes(a auth.Actor) []model.Scope {
	out := make([]model.Scope, 0, len(model.AllScopes))
	for _, s := range model.AllScopes {
		if (s == model.ScopeSudo || s == model.ScopeAdminMode) && !a.Admin() {
			continue
		}
		out = append(out, s)
	}
	return out
}

// CreateOwn issues a token for the signed-in actor (the personal access
// tokens page): a name, at least one scope the actor may give and an
// expiry date in the future (default: a year from today). It returns the
// token and its secret, which is never shown again.
func (s *Service) CreateOwn(ctx context.Context, actor auth.Actor, in CreateInput) (model.PersonalAccessToken, string, error) {
	if !actor.SignedIn() {
		return model.PersonalAccessToken{}, "", model.Unauthorized("")
	}
	in.Name = strings.TrimSpace(in.Name)
	switch {
	case in.Name == "":
		return model.PersonalAccessToken{}, "", model.BadRequestRaw("Name can't be blank")
	case utf8.RuneCountInString(in.Name) > maxNameLength || !utf8.ValidString(in.Name):
		return model.PersonalAccessToken{}, "", model.BadRequestRaw("Name is too long (maximum is 255 characters)")
	case len(in.Scopes) == 0:
		return model.PersonalAccessToken{}, "", model.BadRequestRaw("Scopes can't be blank")
	}
	avail := AvailableScopes(actor)
	seen := map[model.Scope]bool{}
	for _, sc := range in.Scopes {
		ok := false
		for _, v := range avail {
			ok = ok || v == sc
		}
		if !ok {
			return model.PersonalAccessToken{}, "", model.BadRequestRaw("Scopes can only contain available scopes")
		}
		seen[sc] = true
	}
	scopes := make([]model.Scope, 0, len(seen))
	for _, v := range model.AllScopes {
		if seen[v] {
			scopes = append(scopes, v)
		}
	}
	in.Scopes = scopes
	if in.ExpiresAt != "" {
		if _, err := time.Parse(model.DateLayout, in.ExpiresAt); err != nil {
			return model.PersonalAccessToken{}, "", model.BadRequestRaw("Expiration date is invalid")
		}
	}
	if err := s.checkExpiry(in.ExpiresAt); err != nil {
		return model.PersonalAccessToken{}, "", err
	}
	if in.ExpiresAt == "" {
		in.ExpiresAt = s.now().UTC().Add(DefaultLifetime).Format(model.DateLayout)
	}
	return s.Issue(ctx, actor.Owner().UserID(), in, "", nil)
}
