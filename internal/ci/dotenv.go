package ci

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"quarry/internal/ciconfig"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Dotenv reports (artifacts:reports:dotenv): the file a job uploads with
// artifact_type=dotenv is parsed when it arrives, as GitLab's
// Ci::ParseDotenvArtifactService does, and refused whole (400, nothing
// stored) when it breaks a rule. Its variables become the job's
// (store.JobVariableDotenv) and reach the jobs that depend on it
// (jobVariables).

// GitLab's plan limits for dotenv reports, at their defaults on a
// self-managed instance (doc/administration/instance_limits.md, "Limit
// dotenv variables" and "Limit dotenv file size"): Quarry serves no
// /application/plan_limits, so they are fixed.
const (
	// DotenvMaxBytes is dotenv_size: the uploaded file must be smaller.
	DotenvMaxBytes = 5 << 10
	// DotenvMaxVariables is dotenv_variables.
	DotenvMaxVariables = 20
	// dotenvMaxPlain bounds what the gzip members of a report may expand
	// to (GitLab has no such bound; a 5 KB gzip stream can hold ~5 MB).
	dotenvMaxPlain = 1 << 20
	// dotenvMaxKey is the length limit of a variable's key.
	dotenvMaxKey = 255
)

// reDotenvKey is Ci::JobVariable's key format.
var reDotenvKey = regexp.MustCompile(`^[a-zA-Z0-9_]+$`)

// GitLab's messages (the bodies of its 400s).
var (
	errDotenvTooBig = model.BadRequestRaw(fmt.Sprintf("Dotenv Artifact Too Big. Maximum Allowable Size: %d", DotenvMaxBytes))
	errDotenvFormat = model.BadRequestRaw("Invalid Format")
)

// DotenvUpload reads an uploaded dotenv report (gzip, at most
// DotenvMaxBytes-1 bytes) and parses it: the bytes to store and the
// variables. A broken rule is a 400 with GitLab's message.
func DotenvUpload(r io.Reader, format string) ([]byte, []model.Variable, error) {
	raw, err := io.ReadAll(io.LimitReader(r, DotenvMaxBytes))
	if err != nil {
		return nil, nil, err
	}
	if len(raw) >= DotenvMaxBytes {
		return nil, nil, errDotenvTooBig
	}
	plain := raw
	if format == "gzip" {
		if plain, err = gunzipMembers(raw, dotenvMaxPlain); err != nil {
			return nil, nil, err
		}
	}
	vars, err := ParseDotenv(plain, DotenvMaxVariables)
	if err != nil {
		return nil, nil, err
	}
	return raw, vars, nil
}

// gunzipMembers is the content of every member of a gzip stream, one
// after the other (the runner writes one member per file), at most max
// bytes.
func gunzipMembers(raw []byte, max int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, errDotenvFormat
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, max+1))
	switch {
	case err != nil:
		return nil, errDotenvFormat
	case int64(len(out)) > max:
		return nil, errDotenvTooBig
	}
	return out, nil
}

// ParseDotenv reads a dotenv file as GitLab does: the text made UTF-8
// (UTF-16LE with its byte order mark converted, invalid bytes replaced,
// a UTF-8 byte order mark dropped), then every line KEY=VALUE, split at
// the first "=", both sides stripped of surrounding whitespace. No
// comments, blank lines, quotes (kept as written), escapes or values on
// several lines; a later line of a key replaces the value and keeps its
// place. At most max distinct keys (0: no limit). A broken rule is a 400
// with GitLab's message.
func ParseDotenv(b []byte, max int) ([]model.Variable, error) {
	text := dotenvText(b)
	var out []model.Variable
	at := map[string]int{}
	for len(text) > 0 {
		line := text
		if i := strings.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = ""
		}
		eq := strings.IndexByte(line, '=')
		if eq < 0 {
			return nil, errDotenvFormat
		}
		key, value := rubyStrip(line[:eq]), rubyStrip(line[eq+1:])
		if err := checkDotenvKey(key); err != nil {
			return nil, err
		}
		if i, ok := at[key]; ok {
			out[i].Value = value
			continue
		}
		if max > 0 && len(out) >= max {
			return nil, model.BadRequestRaw(fmt.Sprintf("Dotenv files cannot have more than %d variables", max))
		}
		at[key] = len(out)
		out = append(out, model.Variable{Key: key, Value: value, VariableType: model.VarEnv})
	}
	return out, nil
}

// checkDotenvKey applies Ci::JobVariable's validations of a key, with
// their messages (a 400).
func checkDotenvKey(key string) error {
	var msgs []string
	if key == "" {
		msgs = append(msgs, "Key can't be blank")
	}
	if len(key) > dotenvMaxKey {
		msgs = append(msgs, fmt.Sprintf("Key is too long (maximum is %d characters)", dotenvMaxKey))
	}
	if !reDotenvKey.MatchString(key) {
		msgs = append(msgs, "Key can contain only letters, digits and '_'.")
	}
	if len(msgs) == 0 {
		return nil
	}
	return model.BadRequestRaw("Validation failed: " + strings.Join(msgs, ", "))
}

// dotenvText is b as UTF-8: UTF-16LE (a file PowerShell wrote, with its
// byte order mark) converted, invalid sequences replaced by U+FFFD, and a
// leading UTF-8 byte order mark dropped.
func dotenvText(b []byte) string {
	if len(b) >= 2 && b[0] == 0xFF && b[1] == 0xFE {
		u := make([]uint16, 0, len(b)/2)
		for i := 2; i+1 < len(b); i += 2 {
			u = append(u, uint16(b[i])|uint16(b[i+1])<<8)
		}
		return string(utf16.Decode(u))
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.TrimPrefix(s, "\uFEFF")
}

// rubyStrip is Ruby's String#strip: leading and trailing whitespace and
// NUL bytes removed.
func rubyStrip(s string) string {
	return strings.Trim(s, " \t\n\v\f\r\x00")
}

// dotenvVariables are the variables the dotenv reports of job j's
// dependencies left (GitLab's Ci::Build#dependency_variables): those of
// the jobs whose archives it downloads (dependencyJobs: dependencies:,
// else needs: with artifacts, else the earlier stages), by job and then
// in each file's order. They are not public: a report may carry secrets.
func (s *Service) dotenvVariables(ctx context.Context, j model.Job, opts jobOptions) ([]RequestVariable, error) {
	deps, err := dependencyJobs(ctx, s.db.Tx, j, opts)
	if err != nil || len(deps) == 0 {
		return nil, err
	}
	ids := make([]int64, len(deps))
	for i, d := range deps {
		ids[i] = d.ID
	}
	vars, err := s.db.JobVariablesOf(ctx, store.JobVariableDotenv, ids...)
	if err != nil {
		return nil, err
	}
	out := make([]RequestVariable, 0, len(vars))
	for _, v := range vars {
		out = append(out, RequestVariable{Key: v.Key, Value: v.Value})
	}
	return out, nil
}

// dotenvURL is the URL deployment job j gives its environment when it
// succeeds. GitLab expands environment:url then, with the job's variables,
// its own dotenv report among them (doc/ci/environments "Set a dynamic
// environment URL"): when the URL as written names a variable and the job
// or those it depends on left dotenv variables, it is expanded with the
// job's YAML variables and those, provided they name every variable it
// uses. Otherwise it stays as expanded when the job was made (with the
// pipeline's variables).
func (s *Service) dotenvURL(ctx context.Context, tx *store.Tx, j *model.Job, opts jobOptions) (string, error) {
	env, ok := opts.Environment()
	if !ok || !strings.ContainsAny(env.URL, "$%") {
		return opts.Deploy.URL, nil
	}
	deps, err := dependencyJobs(ctx, tx, *j, opts)
	if err != nil {
		return "", err
	}
	ids := make([]int64, len(deps))
	for i, d := range deps {
		ids[i] = d.ID
	}
	theirs, err := tx.JobVariablesOf(ctx, store.JobVariableDotenv, ids...)
	if err != nil {
		return "", err
	}
	own, err := tx.JobVariablesOf(ctx, store.JobVariableDotenv, j.ID)
	if err != nil || len(theirs)+len(own) == 0 {
		return opts.Deploy.URL, err
	}
	values := map[string]string{}
	for _, v := range opts.YAMLVariables {
		values[v.Key] = v.Value
	}
	for _, v := range append(theirs, own...) {
		values[v.Key] = v.Value
	}
	if url, ok := ciconfig.ExpandAll(env.URL, values); ok {
		return url, nil
	}
	return opts.Deploy.URL, nil
}
