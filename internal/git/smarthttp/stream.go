package smarthttp

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"quarry/internal/git"
)

// UploadArchive is `git archive --remote` (git over SSH only).
const UploadArchive Service = "git-upload-archive"

// Stream is one git service over a byte stream (git over SSH): what the
// client sends, where its answer goes, and the client's protocol
// (GIT_PROTOCOL, "version=2").
type Stream struct {
	In       io.Reader
	Out      io.Writer
	Protocol string
}

// ServeStream runs svc for a caller Access granted, over st: git
// upload-pack, receive-pack or upload-archive in the repository, with
// the push flow of ServeHTTP around a receive-pack (BeginPush, the
// hooks' rules and record, Pushed). A *DeniedError refuses the push; a
// *git.Error carries git's exit code. st.In is read by a goroutine that
// ends when st.In does: the caller closes it after ServeStream returns.
func (h *Handler) ServeStream(ctx context.Context, svc Service, grant Grant, st Stream) error {
	name := map[Service]string{UploadPack: "upload-pack", ReceivePack: "receive-pack", UploadArchive: "upload-archive"}[svc]
	if name == "" || (svc == ReceivePack && !grant.Push) {
		return fmt.Errorf("git service %q not granted", svc)
	}
	o := Options{Root: grant.Root, Rel: grant.Rel, AllowPush: grant.Push, Rules: grant.Rules}
	if svc == ReceivePack {
		end, err := h.Access.BeginPush(ctx, &grant)
		if err != nil {
			return err
		}
		defer end()
		o.Root = grant.Root
		if err := EnsureHook(filepath.Join(o.Root, o.Rel)); err != nil {
			return fmt.Errorf("install hook: %w", err)
		}
		log, err := h.pushLog()
		if err != nil {
			return fmt.Errorf("git push record: %w", err)
		}
		o.PushLog = log
		defer os.Remove(log)
		defer h.followPush(ctx, grant, log)
	}
	env := append(hookEnv(o), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=uploadpack.allowFilter", "GIT_CONFIG_VALUE_0=true")
	if st.Protocol != "" {
		env = append(env, "GIT_PROTOCOL="+st.Protocol)
	}
	dir := filepath.Join(o.Root, o.Rel)
	// A client that stops reading ends git: nothing would drain its
	// output, and it would wait on the pipe for ever.
	pctx, kill := context.WithCancel(ctx)
	defer kill()
	proc, err := h.Runner.Start(pctx, dir, git.Command{Name: name, Args: []string{dir}, Env: env})
	if err != nil {
		return err
	}
	go func() {
		_, _ = io.Copy(proc.Stdin, st.In)
		proc.Stdin.Close()
	}()
	_, cerr := io.Copy(st.Out, proc.Stdout)
	if cerr != nil {
		kill()
	}
	if err := proc.Wait(); err != nil && cerr == nil {
		return err
	}
	return cerr
}
