package geo

import (
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxURLLength bounds a node's URL and internal URL.
const MaxURLLength = 1024

// The messages of a URL that is not a node's address, as GitLab's
// AddressableUrlValidator and UrlBlocker word them.
const (
	msgInvalidURL    = "must be a valid URL"
	msgBlockedURI    = "is blocked: URI is invalid"
	msgBlockedScheme = "is blocked: Only allowed schemes are http, https"
	msgBlockedHost   = "is blocked: Hostname or IP address invalid"
	msgUnresolvable  = "is blocked: Host cannot be resolved or invalid"
	msgURLTooLong    = "is too long (maximum is 1024 characters)"
)

// NormalizeURL checks that raw is an http or https URL a node can be
// reached at and returns it as nodes keep it: without surrounding blanks
// and ending with "/" (GitLab's add_ending_slash). problem is the
// validation message when it is not (the URL is then "").
//
// Beyond GitLab, a query or a fragment is refused too: API paths are
// appended to a node's URL, which would land inside them.
func NormalizeURL(raw string) (normalized, problem string) {
	s := strings.TrimSpace(raw)
	switch {
	case s == "":
		return "", msgInvalidURL
	case utf8.RuneCountInString(s) > MaxURLLength:
		return "", msgURLTooLong
	case !utf8.ValidString(s):
		return "", msgBlockedURI
	}
	if dec, err := url.PathUnescape(s); err != nil || strings.ContainsAny(dec, "\r\n") || strings.ContainsFunc(s, unicode.IsControl) {
		return "", msgBlockedURI
	}
	u, err := url.Parse(s)
	if err != nil {
		if i := strings.Index(s, "://"); i > 0 {
			if scheme := strings.ToLower(s[:i]); scheme != "http" && scheme != "https" {
				return "", msgBlockedScheme
			}
		}
		return "", msgBlockedURI
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", msgBlockedScheme
	}
	if u.Opaque != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(s, "#") {
		return "", msgInvalidURL
	}
	host := u.Hostname()
	if host == "" {
		return "", msgUnresolvable
	}
	if !validHost(host) {
		return "", msgBlockedHost
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return "", msgBlockedURI
		}
	} else if strings.HasSuffix(u.Host, ":") {
		return "", msgBlockedURI
	}
	if !strings.HasSuffix(s, "/") {
		s += "/"
	}
	return s, ""
}

// validHost accepts an IP address or a name that starts with a letter or
// digit and holds only the characters of host names (GitLab's
// validate_hostname, which Addressable's parse completes).
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if len(h) > 253 {
		return false
	}
	for i, r := range h {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case i > 0 && (r == '-' || r == '.' || r == '_'):
		case r > unicode.MaxASCII && unicode.In(r, unicode.L, unicode.N):
		default:
			return false
		}
	}
	return true
}

// SameURL reports whether two normalised URLs name one node (GitLab
// compares them regardless of case).
func SameURL(a, b string) bool { return strings.EqualFold(a, b) }
