// Package smarthttp serves Git's smart HTTP protocol (v0, v1 and v2) for one
// repository by running `git http-backend` as a CGI program through the
// git runner, streaming request and response bodies both ways. Callers
// authenticate and authorize first; pushes are checked again by a
// pre-receive hook that enforces the refs the caller may not touch.
package smarthttp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"quarry/internal/git"
)

// Service names the operation a request asks for.
type Service string

// Operations.
const (
	UploadPack  Service = "git-upload-pack"  // clone, fetch
	ReceivePack Service = "git-receive-pack" // push
)

// Classify tells which operation a smart HTTP request is (and "" for a
// request that is none): /info/refs?service=…, /git-upload-pack,
// /git-receive-pack.
func Classify(r *http.Request, suffix string) Service {
	switch {
	case suffix == "info/refs" && r.Method == http.MethodGet:
		switch r.URL.Query().Get("service") {
		case string(UploadPack):
			return UploadPack
		case string(ReceivePack):
			return ReceivePack
		}
	case suffix == "git-upload-pack" && r.Method == http.MethodPost:
		return UploadPack
	case suffix == "git-receive-pack" && r.Method == http.MethodPost:
		return ReceivePack
	}
	return ""
}

// PushRules are the limits a push must respect, enforced by the
// pre-receive hook after the objects arrive.
type PushRules struct {
	Deny     []string // refs that may not be updated at all
	NoForce  []string // refs that take fast-forward updates only
	NoDelete []string // refs that may not be deleted
	// OnlyRef, when set, is the one ref a push may create or update (a
	// snippet's default branch): every other ref, and its deletion, is
	// refused. MaxFiles and MaxBytes, when set, bound the files of its
	// new commit: at least one, at most MaxFiles, MaxBytes in all.
	OnlyRef  string
	MaxFiles int
	MaxBytes int64
	// ProtectedTags are the tag refs protected tag rules cover: they
	// take no updates, no deletions (TagDeleteMessage says why), and are
	// created only when they match CreateTags too (the refs the
	// pusher's grants cover).
	ProtectedTags    []string
	CreateTags       []string
	TagDeleteMessage string
}

// Options describe one request.
type Options struct {
	Root      string // storage root
	Rel       string // repository path below the root
	Suffix    string // "info/refs", "git-upload-pack", "git-receive-pack"
	User      string // REMOTE_USER
	AllowPush bool
	Rules     PushRules
	// PushLog is the file the post-receive hook appends the updated refs
	// to ("" records nothing).
	PushLog string
	// Packs, when set, makes upload-pack build its packs through a
	// shared cache.
	Packs PackCache
}

// PackCache shares the answers of identical upload-pack requests
// (packcache.Cache): Serve answers the request named by key into client,
// from a shared entry or by calling produce (which says whether its
// answer may be kept); State is what of a repository a key must include.
type PackCache interface {
	Key(parts ...[]byte) string
	State(repoDir string) ([]byte, error)
	Serve(ctx context.Context, key string, client io.Writer, produce func(w io.Writer) (keep bool, err error)) error
}

// hookScript refuses ref updates the pusher may not make. The rules are
// ref patterns (shell globs, `*` across slashes like protected branch
// wildcards) passed in the environment by the request that runs the push.
const hookScript = `#!/bin/sh
# Installed by Quarry.
set -f
zero=0000000000000000000000000000000000000000
while read old new ref; do
  for d in $QUARRY_DENY_REFS; do
    case "$ref" in $d) echo "You are not allowed to push code to protected branches on this project."; exit 1;; esac
  done
  if [ "$new" = "$zero" ]; then
    for d in $QUARRY_NODELETE_REFS; do
      case "$ref" in $d) echo "You can only delete protected branches using the web interface."; exit 1;; esac
    done
  fi
  if [ "$old" != "$zero" ] && [ "$new" != "$zero" ]; then
    for d in $QUARRY_NOFORCE_REFS; do
      case "$ref" in $d)
        if ! git merge-base --is-ancestor "$old" "$new"; then echo "You are not allowed to force push code to a protected branch on this project."; exit 1; fi;;
      esac
    done
  fi
  case "$ref" in refs/tags/*)
    for t in $QUARRY_PROTECTED_TAGS; do
      case "$ref" in $t)
        if [ "$old" != "$zero" ] && [ "$new" != "$zero" ]; then echo "Protected tags cannot be updated."; exit 1; fi
        if [ "$new" = "$zero" ]; then echo "$QUARRY_TAG_DELETE_MESSAGE"; exit 1; fi
        allowed=
        for c in $QUARRY_CREATE_TAGS; do
          case "$ref" in $c) allowed=1;; esac
        done
        if [ -z "$allowed" ]; then echo "You are not allowed to create this tag as it is protected."; exit 1; fi;;
      esac
    done;;
  esac
  if [ -n "$QUARRY_ONLY_REF" ]; then
    if [ "$ref" != "$QUARRY_ONLY_REF" ] || [ "$new" = "$zero" ]; then echo "You can not create or delete branches."; exit 1; fi
    if [ -n "$QUARRY_MAX_FILES" ]; then
      files=0; bytes=0
      for size in $(git ls-tree -r --format='%(objectsize)' "$new"); do
        files=$((files+1))
        case "$size" in *[!0-9]*) ;; *) bytes=$((bytes+size));; esac
      done
      if [ "$files" -gt "$QUARRY_MAX_FILES" ]; then echo "The repository can contain at most $QUARRY_MAX_FILES file(s)."; exit 1; fi
      if [ "$files" -eq 0 ]; then echo "The repository must contain at least 1 file."; exit 1; fi
      if [ -n "$QUARRY_MAX_BYTES" ] && [ "$bytes" -gt "$QUARRY_MAX_BYTES" ]; then
        echo "Your push to this repository cannot be completed because this repository has exceeded the allocated storage for your project. Contact your GitLab administrator for more information."; exit 1
      fi
    fi
  fi
done
exit 0
`

// postReceiveScript records what a push did in the file the request
// that runs the push names: its push options, one "option <value>" line
// each (git passes them as GIT_PUSH_OPTION_<n>), then the refs it
// updated — git runs the hook after the refs moved, with one
// "old new ref" line each.
const postReceiveScript = `#!/bin/sh
# Installed by Quarry.
if [ -z "$QUARRY_PUSH_LOG" ]; then cat > /dev/null; exit 0; fi
i=0
while [ "$i" -lt "${GIT_PUSH_OPTION_COUNT:-0}" ]; do
  printf 'option %s\n' "$(printenv "GIT_PUSH_OPTION_$i")" >> "$QUARRY_PUSH_LOG"
  i=$((i+1))
done
cat >> "$QUARRY_PUSH_LOG"
exit 0
`

// EnsureHook installs the pre-receive and post-receive hooks in a
// repository.
func EnsureHook(repoDir string) error {
	for name, script := range map[string]string{"pre-receive": hookScript, "post-receive": postReceiveScript} {
		p := filepath.Join(repoDir, "hooks", name)
		if b, err := os.ReadFile(p); err == nil && string(b) == script {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(script), 0o755); err != nil {
			return err
		}
		if err := os.Rename(tmp, p); err != nil {
			return err
		}
	}
	return nil
}

// RefUpdate is one ref a push moved; Old or New is forty zeros for a ref
// created or deleted.
type RefUpdate struct{ Ref, Old, New string }

// Push is what a finished push did: the refs it moved and the push
// options it sent (git push -o).
type Push struct {
	Updates []RefUpdate
	Options []string
}

// readPushLog reads what the post-receive hook recorded.
func readPushLog(path string) (Push, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Push{}, err
	}
	var out Push
	for _, line := range strings.Split(string(b), "\n") {
		if opt, ok := strings.CutPrefix(line, "option "); ok {
			out.Options = append(out.Options, opt)
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			continue
		}
		out.Updates = append(out.Updates, RefUpdate{Old: f[0], New: f[1], Ref: f[2]})
	}
	return out, nil
}

// Serve answers one smart HTTP request for the repository.
func Serve(ctx context.Context, runner *git.Runner, w http.ResponseWriter, r *http.Request, o Options) error {
	if o.AllowPush {
		if err := EnsureHook(filepath.Join(o.Root, o.Rel)); err != nil {
			return fmt.Errorf("install hook: %w", err)
		}
	}
	if o.Packs != nil && o.Suffix == string(UploadPack) && r.Header.Get("Content-Encoding") == "" {
		body, err := io.ReadAll(io.LimitReader(r.Body, maxSharedRequest+1))
		if err != nil {
			return err
		}
		if len(body) <= maxSharedRequest && bytes.Contains(body, []byte("0009done\n")) {
			return serveShared(ctx, runner, w, r, o, body)
		}
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), r.Body))
	}
	env := backendEnv(r, o)
	proc, err := runner.Start(ctx, "", git.Command{Name: "http-backend", Env: env})
	if err != nil {
		return err
	}
	copied := make(chan error, 1)
	go func() {
		_, err := io.Copy(proc.Stdin, r.Body)
		proc.Stdin.Close()
		copied <- err
	}()
	out := bufio.NewReaderSize(proc.Stdout, 32<<10)
	hdr, err := textproto.NewReader(out).ReadMIMEHeader()
	if err != nil {
		_ = proc.Wait()
		return fmt.Errorf("http-backend headers: %w", err)
	}
	writeHeader(w, hdr)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, rerr := out.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				break
			}
			_ = rc.Flush()
		}
		if rerr != nil {
			break
		}
	}
	werr := proc.Wait()
	<-copied
	return werr
}

// backendEnv is the CGI environment of http-backend for the request.
func backendEnv(r *http.Request, o Options) []string {
	env := []string{
		"GATEWAY_INTERFACE=CGI/1.1",
		"GIT_PROJECT_ROOT=" + o.Root,
		"GIT_HTTP_EXPORT_ALL=1",
		"PATH_INFO=/" + strings.Trim(o.Rel, "/") + "/" + o.Suffix,
		"REQUEST_METHOD=" + r.Method,
		"QUERY_STRING=" + r.URL.RawQuery,
		"CONTENT_TYPE=" + r.Header.Get("Content-Type"),
		"REMOTE_ADDR=" + r.RemoteAddr,
		"REMOTE_USER=" + o.User,
		"SERVER_PROTOCOL=HTTP/1.1",
		// Pushes are allowed here only when the caller was authorized to.
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=http.receivepack", "GIT_CONFIG_VALUE_0=" + strconv.FormatBool(o.AllowPush),
		"GIT_CONFIG_KEY_1=uploadpack.allowFilter", "GIT_CONFIG_VALUE_1=true",
	}
	env = append(env, hookEnv(o)...)
	if r.ContentLength >= 0 {
		env = append(env, "CONTENT_LENGTH="+strconv.FormatInt(r.ContentLength, 10))
	}
	if v := r.Header.Get("Content-Encoding"); v != "" {
		env = append(env, "HTTP_CONTENT_ENCODING="+v)
	}
	if v := r.Header.Get("Git-Protocol"); v != "" {
		env = append(env, "HTTP_GIT_PROTOCOL="+v, "GIT_PROTOCOL="+v)
	}
	return env
}

// hookEnv passes a push's rules and record file to the hooks.
func hookEnv(o Options) []string {
	return []string{
		"QUARRY_DENY_REFS=" + strings.Join(o.Rules.Deny, " "),
		"QUARRY_NOFORCE_REFS=" + strings.Join(o.Rules.NoForce, " "),
		"QUARRY_NODELETE_REFS=" + strings.Join(o.Rules.NoDelete, " "),
		"QUARRY_PUSH_LOG=" + o.PushLog,
		"QUARRY_ONLY_REF=" + o.Rules.OnlyRef,
		"QUARRY_PROTECTED_TAGS=" + strings.Join(o.Rules.ProtectedTags, " "),
		"QUARRY_CREATE_TAGS=" + strings.Join(o.Rules.CreateTags, " "),
		"QUARRY_TAG_DELETE_MESSAGE=" + o.Rules.TagDeleteMessage,
		"QUARRY_MAX_FILES=" + positive(int64(o.Rules.MaxFiles)),
		"QUARRY_MAX_BYTES=" + positive(o.Rules.MaxBytes),
	}
}

// writeHeader answers with the status and headers of a CGI header.
func writeHeader(w http.ResponseWriter, hdr textproto.MIMEHeader) {
	status := cgiStatus(hdr)
	hdr.Del("Status")
	for k, vs := range hdr {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(status)
}

// cgiStatus is the status a CGI header gives (200 without one).
func cgiStatus(hdr textproto.MIMEHeader) int {
	if f := strings.Fields(hdr.Get("Status")); len(f) > 0 {
		if n, err := strconv.Atoi(f[0]); err == nil {
			return n
		}
	}
	return http.StatusOK
}

// positive is n in decimal, "" unless positive.
func positive(n int64) string {
	if n <= 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// Grant is what an authorized request may do.
type Grant struct {
	ProjectID int64
	Root, Rel string
	User      string
	UserID    int64
	Push      bool
	Rules     PushRules
	// Wiki is the full path of the project or group whose wiki this is
	// ("" for a project's repository).
	Wiki string
	// Snippet is the id of the snippet whose repository this is (0 for a
	// project's repository).
	Snippet int64
}

// DeniedError refuses a request: Status 401 asks git for credentials
// (with WWW-Authenticate), 403 and 404 carry a message git prints.
type DeniedError struct {
	Status  int
	Message string
}

func (e *DeniedError) Error() string { return e.Message }

// Access decides who may clone and push (a Quarry service) and learns of
// finished pushes: the refs each moved. A push (git-receive-pack) calls
// Authorize, then BeginPush just before git runs — which may refuse it
// (a *DeniedError: the repository takes no writes now) and otherwise
// says where the repository is now (g.Root) —, then Pushed once git is
// done, then the end BeginPush returned.
type Access interface {
	Authorize(ctx context.Context, username, password string, hasCredentials bool, fullPath string, push bool) (Grant, error)
	BeginPush(ctx context.Context, g *Grant) (end func(), err error)
	Pushed(ctx context.Context, g Grant, push Push) error
}

// Handler serves every smart HTTP request for Quarry's repositories:
// <full path>.git/info/refs, …/git-upload-pack, …/git-receive-pack.
type Handler struct {
	Runner *git.Runner
	Access Access
	// TempDir holds each push's record of the refs it moved while it runs.
	TempDir string
	// Packs, when set, serves clones and fetches through a pack cache.
	Packs PackCache
	Log   interface {
		Error(msg string, args ...any)
	}
}

// deny answers a refusal (a *DeniedError) as git understands it; any
// other error is a 500, logged.
func (h *Handler) deny(w http.ResponseWriter, fullPath string, err error) {
	var d *DeniedError
	if !errors.As(err, &d) {
		h.Log.Error("git access", "path", fullPath, "err", err)
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
		return
	}
	if d.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="Quarry"`)
	}
	http.Error(w, d.Message, d.Status)
}

// Match reports whether a path is a smart HTTP request and splits it.
func Match(path string) (fullPath, suffix string, ok bool) {
	i := strings.Index(path, ".git/")
	if i <= 0 {
		return "", "", false
	}
	return strings.Trim(path[:i], "/"), path[i+len(".git/"):], true
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fullPath, suffix, _ := Match(r.URL.Path)
	svc := Classify(r, suffix)
	if svc == "" {
		http.Error(w, "Not Found", http.StatusNotFound)
		return
	}
	user, pass, hasCreds := r.BasicAuth()
	grant, err := h.Access.Authorize(r.Context(), user, pass, hasCreds, fullPath, svc == ReceivePack)
	if err != nil {
		h.deny(w, fullPath, err)
		return
	}
	push := svc == ReceivePack && suffix == "git-receive-pack"
	if push {
		// The push is a write in flight from here until it has been
		// followed up (a storage move waits for it).
		end, err := h.Access.BeginPush(r.Context(), &grant)
		if err != nil {
			h.deny(w, fullPath, err)
			return
		}
		defer end()
	}
	o := Options{Root: grant.Root, Rel: grant.Rel, Suffix: suffix, User: grant.User, AllowPush: grant.Push, Rules: grant.Rules, Packs: h.Packs}
	if push {
		log, err := h.pushLog()
		if err != nil {
			h.Log.Error("git push record", "path", fullPath, "err", err)
			http.Error(w, "Internal Server Error", http.StatusInternalServerError)
			return
		}
		o.PushLog = log
		defer os.Remove(o.PushLog)
	}
	err = Serve(r.Context(), h.Runner, w, r, o)
	if err != nil && r.Context().Err() == nil {
		h.Log.Error("git http-backend", "path", fullPath, "err", err)
	}
	if push {
		h.followPush(r.Context(), grant, o.PushLog)
	}
}

// pushLog makes the file a push's post-receive hook records it in.
func (h *Handler) pushLog() (string, error) {
	f, err := os.CreateTemp(h.TempDir, "push-*.log")
	if err != nil {
		return "", err
	}
	return f.Name(), f.Close()
}

// followPush tells Access what a finished push did. The refs moved even
// if the client went away meanwhile: what follows a push runs
// regardless.
func (h *Handler) followPush(ctx context.Context, grant Grant, log string) {
	ctx = context.WithoutCancel(ctx)
	push, err := readPushLog(log)
	if err == nil && len(push.Updates) > 0 {
		err = h.Access.Pushed(ctx, grant, push)
	}
	if err != nil {
		h.Log.Error("after push", "project_id", grant.ProjectID, "err", err)
	}
}
