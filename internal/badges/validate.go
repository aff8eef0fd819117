package badges

import (
	"strings"
	"unicode/utf8"

	"quarry/internal/model"
)

// Bounds of a badge's fields. GitLab keeps the name in a varchar(255)
// and bounds no URL; Quarry bounds URLs too, before storing them.
const (
	MaxNameLength = 255
	MaxURLLength  = 2048
)

// CheckURL validates a badge URL as GitLab's AddressableUrlValidator
// does with its defaults (http and https only, local addresses allowed):
// blank is "must be a valid URL", another scheme or a URL that does not
// parse "is blocked: …". It returns the URL stripped of surrounding white
// space, as GitLab stores it, and the message ("" when valid).
func CheckURL(raw string) (string, string) {
	v := strings.TrimSpace(raw)
	if v == "" {
		return v, "must be a valid URL"
	}
	if utf8.RuneCountInString(v) > MaxURLLength {
		return v, "is too long (maximum is 2048 characters)"
	}
	scheme, rest, ok := strings.Cut(v, ":")
	if !ok || !validScheme(scheme) {
		return v, "is blocked: Only allowed schemes are http, https"
	}
	if s := strings.ToLower(scheme); s != "http" && s != "https" {
		return v, "is blocked: Only allowed schemes are http, https"
	}
	if !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return v, "is blocked: URI is invalid"
	}
	rest, ok = strings.CutPrefix(rest, "//")
	if !ok {
		return v, "is blocked: URI is invalid"
	}
	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority = rest[:i]
	}
	if i := strings.LastIndexByte(authority, '@'); i >= 0 {
		authority = authority[i+1:]
	}
	host := authority
	if strings.HasPrefix(host, "[") {
		end := strings.IndexByte(host, ']')
		if end < 0 {
			return v, "is blocked: URI is invalid"
		}
		host, authority = host[:end+1], host[end+1:]
	} else if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host, authority = host[:i], host[i:]
	} else {
		authority = ""
	}
	if host == "" || host == "[]" {
		return v, "is blocked: URI is invalid"
	}
	if port, ok := strings.CutPrefix(authority, ":"); ok && strings.Trim(port, "0123456789") != "" {
		return v, "is blocked: URI is invalid"
	}
	return v, ""
}

func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Input are a badge's writable fields; nil leaves a field as it is.
type Input struct {
	LinkURL  *string
	ImageURL *string
	Name     *string
	// ClearName sets the name to null.
	ClearName bool
}

// apply validates in onto b, GitLab's messages by field.
func (in Input) apply(b *model.Badge) error {
	var f model.FieldErrors
	if in.LinkURL != nil {
		b.LinkURL = *in.LinkURL
	}
	if in.ImageURL != nil {
		b.ImageURL = *in.ImageURL
	}
	if in.Name != nil {
		n := *in.Name
		b.Name = &n
	} else if in.ClearName {
		b.Name = nil
	}
	var msg string
	if b.LinkURL, msg = CheckURL(b.LinkURL); msg != "" {
		f.Add("link_url", msg)
	}
	if b.ImageURL, msg = CheckURL(b.ImageURL); msg != "" {
		f.Add("image_url", msg)
	}
	if b.Name != nil && utf8.RuneCountInString(*b.Name) > MaxNameLength {
		f.Add("name", "is too long (maximum is 255 characters)")
	}
	return f.Err()
}
