package users

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"quarry/internal/model"
)

// Lengths GitLab allows.
const (
	minPasswordLength = 8
	maxPasswordLength = 128
)

// weakPasswords are refused outright, as GitLab refuses commonly used ones.
var weakPasswords = map[string]bool{}

func init() {
	for _, p := range strings.Fields(`password password1 password12 password123 passw0rd 12345678
		123456789 1234567890 87654321 11111111 00000000 qwertyui qwerty123 qwertyuiop iloveyou
		abcdefgh abcd1234 abc12345 letmein1 welcome1 welcome123 sunshine princess football baseball
		superman trustno1 starwars dragon12 monkey12 master12 administrator changeme gitlab123
		quarry123 1q2w3e4r 1qaz2wsx zaq12wsx asdfghjk`) {
		weakPasswords[p] = true
	}
}

func validatePassword(f *model.FieldErrors, p string) {
	n := utf8.RuneCountInString(p)
	switch {
	case n < minPasswordLength:
		f.Add("password", fmt.Sprintf("is too short (minimum is %d characters)", minPasswordLength))
	case n > maxPasswordLength:
		f.Add("password", fmt.Sprintf("is too long (maximum is %d characters)", maxPasswordLength))
	case weakPasswords[strings.ToLower(p)]:
		f.Add("password", "must not contain commonly used combinations of words and letters")
	}
}

func maxLen(f *model.FieldErrors, field, v string, n int) {
	if utf8.RuneCountInString(v) > n {
		f.Add(field, fmt.Sprintf("is too long (maximum is %d characters)", n))
	}
}

var discordID = regexp.MustCompile(`^[0-9]{17,20}$`)

// validThemes and validColorSchemes are the ids GitLab's UI knows.
const (
	maxThemeID       = 11
	maxColorSchemeID = 6
	maxInt32         = 2147483647
)

// validate checks every attribute a holds against the rules GitLab applies
// to users, given the user as it will be saved.
func validate(f *model.FieldErrors, a *Attrs, u *model.User) {
	if a.Email != nil && !model.ValidEmail(*a.Email) {
		f.Add("email", "is invalid")
	}
	if a.Username != nil {
		for _, m := range model.ValidateNamespacePath(*a.Username, true) {
			f.Add("username", m)
		}
	}
	if a.Name != nil {
		if strings.TrimSpace(*a.Name) == "" {
			f.Add("name", "can't be blank")
		}
		maxLen(f, "name", *a.Name, 255)
	}
	if a.Password != nil {
		validatePassword(f, *a.Password)
	}
	if a.Bio != nil {
		maxLen(f, "bio", *a.Bio, 255)
	}
	if a.Location != nil {
		maxLen(f, "location", *a.Location, 255)
	}
	if a.Organization != nil {
		maxLen(f, "organization", *a.Organization, 500)
	}
	if a.JobTitle != nil {
		maxLen(f, "job_title", *a.JobTitle, 200)
	}
	if a.Pronouns != nil {
		maxLen(f, "pronouns", *a.Pronouns, 50)
	}
	for field, v := range map[string]*string{"skype": a.Skype, "linkedin": a.Linkedin, "twitter": a.Twitter} {
		if v != nil {
			maxLen(f, field, *v, 500)
		}
	}
	if a.Discord != nil && *a.Discord != "" && !discordID.MatchString(*a.Discord) {
		f.Add("discord", "must contain only a discord user ID.")
	}
	if a.WebsiteURL != nil && *a.WebsiteURL != "" {
		if p, err := url.Parse(*a.WebsiteURL); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			f.Add("website_url", "is not a valid URL")
		}
	}
	if a.Note != nil {
		maxLen(f, "note", *a.Note, 1000)
	}
	if a.ProjectsLimit != nil {
		if *a.ProjectsLimit < 0 {
			f.Add("projects_limit", "must be greater than or equal to 0")
		} else if *a.ProjectsLimit > maxInt32 {
			f.Add("projects_limit", "must be less than or equal to 2147483647")
		}
	}
	if a.ThemeID != nil && (*a.ThemeID < 1 || *a.ThemeID > maxThemeID) {
		f.Add("theme_id", "is not included in the list")
	}
	if a.ColorSchemeID != nil && (*a.ColorSchemeID < 1 || *a.ColorSchemeID > maxColorSchemeID) {
		f.Add("color_scheme_id", "is not included in the list")
	}
	// public_email and commit_email must be addresses the user owns: the
	// primary e-mail as it will be saved.
	if u.PublicEmail != "" && !strings.EqualFold(u.PublicEmail, u.Email) {
		f.Add("public_email", "is not an email you own")
	}
	if u.CommitEmail != "" && u.CommitEmail != "_private" && !strings.EqualFold(u.CommitEmail, u.Email) {
		f.Add("commit_email", "is not an email you own")
	}
	for field, v := range map[string]*int{"shared_runners_minutes_limit": a.SharedRunnersMinutesLimit.Value,
		"extra_shared_runners_minutes_limit": a.ExtraSharedRunnersMinutesLimit.Value} {
		if v != nil && *v < 0 {
			f.Add(field, "must be greater than or equal to 0")
		}
	}
}
