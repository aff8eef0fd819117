package model

import (
	"net"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Messages GitLab gives for a namespace path (a username is one) that breaks
// the format rules.
const (
	NamespacePathFormatMessage = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-' or end in '.', '.git' or '.atom'."
	OCIPathMessage             = "must not start or end with a special character and must not contain consecutive special characters."
)

var (
	namespaceFormat = regexp.MustCompile(`^(?:[a-zA-Z0-9_.][a-zA-Z0-9_\-.]*[a-zA-Z0-9_\-]|[a-zA-Z0-9_])$`)
	ociFormat       = regexp.MustCompile(`^[a-zA-Z0-9]+(?:(?:[._]|__|-+)[a-zA-Z0-9]+)*$`)
	emailFormat     = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)
)

// reservedTopLevel are the names a top-level namespace (user or group) may
// not take: they are routes of the service.
var reservedTopLevel = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`- .well-known 404.html 422.html 500.html 502.html 503.html
		abuse_reports admin api apple-touch-icon.png apple-touch-icon-precomposed.png assets
		autocomplete ci dashboard deploy.html explore favicon.ico favicon.png files groups
		health_check help import invites jwt login notification_settings oauth profile projects
		public robots.txt s search sent_notifications slash-command-logo.png snippets u
		unsubscribes uploads users v2`) {
		reservedTopLevel[n] = true
	}
}

// ValidateNamespacePath checks a path for a new top-level namespace (a
// username or a group path) and returns the messages for every rule it
// breaks.
func ValidateNamespacePath(p string, topLevel bool) []string {
	var msgs []string
	if p == "" {
		return []string{"can't be blank"}
	}
	if len(p) > 255 {
		msgs = append(msgs, "is too long (maximum is 255 characters)")
	}
	lp := strings.ToLower(p)
	if !namespaceFormat.MatchString(p) || strings.HasSuffix(lp, ".git") || strings.HasSuffix(lp, ".atom") {
		msgs = append(msgs, NamespacePathFormatMessage)
	}
	if !ociFormat.MatchString(p) {
		msgs = append(msgs, OCIPathMessage)
	}
	if topLevel && reservedTopLevel[lp] {
		msgs = append(msgs, p+" is a reserved name")
	}
	return msgs
}

// ValidEmail reports whether s looks like an e-mail address: one '@'
// between two non-empty parts, no spaces, no control characters, valid
// UTF-8, at most 255 bytes.
func ValidEmail(s string) bool {
	return len(s) <= 255 && utf8.ValidString(s) && !strings.ContainsFunc(s, unicode.IsControl) && emailFormat.MatchString(s)
}

var (
	groupNameFormat   = regexp.MustCompile(`^[\p{L}\p{N}_\p{So}\p{Sk}][\p{L}\p{N}\p{Pd}_.\p{So}\p{Sk} ()]*$`)
	projectNameFormat = regexp.MustCompile(`^[\p{L}\p{N}_\p{So}\p{Sk}][\p{L}\p{N}\p{Pd}_.+\p{So}\p{Sk} ]*$`)
	projectPathFormat = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9_\-.]*$`)
)

// Messages for names and paths that break the format rules.
const (
	GroupNameMessage   = "can contain only letters, digits, emoji, '_', '.', dash, space, parenthesis. It must start with letter, digit, emoji or '_'."
	ProjectNameMessage = "can contain only letters, digits, emoji, '_', '.', '+', dashes, or spaces. It must start with a letter, digit, emoji, or '_'."
	ProjectPathMessage = "can contain only letters, digits, '_', '-' and '.'. Cannot start with '-', end in '.git' or end in '.atom'"
)

// reservedProjectPaths are routes below a project that its path may not take.
var reservedProjectPaths = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`- badges blame blob builds commits create create_dir edit files find_file new
		preview raw refs tree update wikis`) {
		reservedProjectPaths[n] = true
	}
}

// ValidGroupName reports whether a group name has the allowed characters.
// Invalid UTF-8 is refused: the regexp would read each bad byte as
// U+FFFD, a symbol (\p{So}) names may hold.
func ValidGroupName(s string) bool { return utf8.ValidString(s) && groupNameFormat.MatchString(s) }

// ValidProjectName reports whether a project name has the allowed
// characters (and is valid UTF-8, as ValidGroupName).
func ValidProjectName(s string) bool { return utf8.ValidString(s) && projectNameFormat.MatchString(s) }

// ValidateProjectPath returns the messages for every rule a project path breaks.
func ValidateProjectPath(p string) []string {
	if p == "" {
		return []string{"can't be blank"}
	}
	var msgs []string
	if len(p) > 255 {
		msgs = append(msgs, "is too long (maximum is 255 characters)")
	}
	lp := strings.ToLower(p)
	if !projectPathFormat.MatchString(p) || strings.HasSuffix(lp, ".git") || strings.HasSuffix(lp, ".atom") {
		msgs = append(msgs, ProjectPathMessage)
	}
	if !ociFormat.MatchString(p) {
		msgs = append(msgs, OCIPathMessage)
	}
	if reservedProjectPaths[lp] {
		msgs = append(msgs, p+" is a reserved name")
	}
	return msgs
}

// Parameterize turns a name into a path: lower case, runs of other
// characters become "-", trimmed of separators.
func Parameterize(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-_.")
}

// SSHCloneURL is where git over SSH reaches the repository at fullPath
// (a project's path with namespace, a wiki's "….wiki"): git@host:path.git,
// or ssh://git@host:port/path.git on another port than 22 (0 is 22).
func SSHCloneURL(host string, port int, fullPath string) string {
	if port != 0 && port != 22 {
		return "ssh://git@" + net.JoinHostPort(host, strconv.Itoa(port)) + "/" + fullPath + ".git"
	}
	return "git@" + host + ":" + fullPath + ".git"
}
