package runner

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"quarry/internal/git"
)

// remoteAccess splits the job's repository URL, which carries the job
// token as credentials (http://gitlab-ci-token:<token>@host/…), into the
// URL without them and the git configuration (by environment) that sends
// them as an Authorization header instead. The token thus never appears on
// a command line (visible to every user of the machine) nor in git's
// messages; redirects are not followed, so it never goes to another host.
func remoteAccess(repoURL string) (remote string, env []string, err error) {
	u, err := url.Parse(repoURL)
	if err != nil {
		return "", nil, errors.New("repo_url is not a URL") // its text holds the token
	}
	if u.User == nil {
		return repoURL, nil, nil
	}
	pass, _ := u.User.Password()
	auth := base64.StdEncoding.EncodeToString([]byte(u.User.Username() + ":" + pass))
	u.User = nil
	return u.String(), []string{
		"GIT_CONFIG_COUNT=2",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: Basic " + auth,
		"GIT_CONFIG_KEY_1=http.followRedirects",
		"GIT_CONFIG_VALUE_1=false",
	}, nil
}

// defaultRefspecs are the refspecs gitlab-runner derives when the payload
// gives none.
func defaultRefspecs(g gitInfo) []string {
	switch {
	case g.Depth == 0:
		return []string{"+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"}
	case g.RefType == "tag":
		return []string{"+refs/tags/" + g.Ref + ":refs/tags/" + g.Ref}
	default:
		return []string{"+refs/heads/" + g.Ref + ":refs/remotes/origin/" + g.Ref}
	}
}

func isObjectID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// getSources makes the build folder a fresh work tree of the job's commit:
// git init, git fetch of the payload's refspecs from repo_url (shallow to
// git_info.depth when it is positive), git checkout of the sha as a
// detached HEAD. GIT_STRATEGY=none skips it.
func (b *build) getSources(ctx context.Context) error {
	g := b.job.GitInfo
	if b.variable("GIT_STRATEGY") == "none" {
		b.trace.Printf("Skipping Git repository setup\n")
		return nil
	}
	if !isObjectID(g.Sha) {
		return fmt.Errorf("git_info.sha %q is not an object id", g.Sha)
	}
	remote, env, err := remoteAccess(g.RepoURL)
	if err != nil {
		return err
	}
	refspecs := g.Refspecs
	if len(refspecs) == 0 {
		refspecs = defaultRefspecs(g)
	}
	if g.Depth > 0 {
		b.trace.Printf("Fetching changes with git depth set to %d...\n", g.Depth)
	} else {
		b.trace.Printf("Fetching changes...\n")
	}
	gitDir := filepath.Join(b.dir, ".git")
	reuse := false
	if st, err := os.Stat(gitDir); err == nil && st.IsDir() && b.strategy() == "fetch" {
		reuse = true
		b.trace.Printf("Reinitialized existing Git repository in %s/\n", gitDir)
	} else {
		if _, err := b.r.git.Run(ctx, "", git.Command{Name: "init", Flags: []git.Flag{{Name: "--quiet"}}, Args: []string{b.dir}}, git.Options{}); err != nil {
			return b.gitFailed(err)
		}
		b.trace.Printf("Initialized empty Git repository in %s/\n", gitDir)
		b.trace.Printf("Created fresh repository.\n")
	}
	// A reused work tree that holds the commit already needs nothing
	// from the server.
	have := false
	if reuse {
		probe := git.Command{Name: "cat-file", Flags: []git.Flag{{Name: "-e"}}, Args: []string{g.Sha + "^{commit}"}}
		_, err := b.r.git.Run(ctx, gitDir, probe, git.Options{})
		have = err == nil
	}
	if !have {
		flags := []git.Flag{{Name: "--no-recurse-submodules"}}
		if g.Depth > 0 {
			flags = append(flags, git.Flag{Name: "--depth", Value: strconv.Itoa(g.Depth)})
		}
		fetch := git.Command{Name: "fetch", Flags: flags, Args: append([]string{remote}, refspecs...), Env: env}
		if _, err := b.r.git.Run(ctx, gitDir, fetch, git.Options{}); err != nil {
			return b.gitFailed(err)
		}
	}
	b.trace.Printf("Checking out %s as detached HEAD (ref is %s)...\n", g.Sha[:8], g.Ref)
	checkout := git.Command{Name: "checkout", Flags: []git.Flag{{Name: "--force"}, {Name: "--quiet"}, {Name: "--detach"}},
		Args: []string{g.Sha}, Env: []string{"GIT_WORK_TREE=" + b.dir}}
	if _, err := b.r.git.Run(ctx, gitDir, checkout, git.Options{}); err != nil {
		return b.gitFailed(err)
	}
	if reuse {
		// What an earlier job left in the work tree goes.
		clean := git.Command{Name: "clean", Flags: []git.Flag{{Name: "-ffdx"}, {Name: "--quiet"}}, PathArgs: []string{":/"},
			Env: []string{"GIT_WORK_TREE=" + b.dir}}
		if _, err := b.r.git.Run(ctx, gitDir, clean, git.Options{}); err != nil {
			return b.gitFailed(err)
		}
	}
	b.trace.Printf("Skipping Git submodules setup\n")
	return nil
}

// gitFailed shows what git said in the job's log and returns the failure
// (git's arguments hold no token: see remoteAccess).
func (b *build) gitFailed(err error) error {
	var ge *git.Error
	if errors.As(err, &ge) && ge.Stderr != "" {
		for _, line := range strings.Split(strings.TrimSpace(ge.Stderr), "\n") {
			b.trace.Printf("%s\n", line)
		}
	}
	return fmt.Errorf("get sources: %w", err)
}

// untrackedFiles lists what git does not track in the build folder, as
// gitlab-runner's archiver does for artifacts:untracked: git ls-files
// --others, ignored files included, as slash paths from the folder's top.
// A folder that is no work tree (GIT_STRATEGY none) is an error.
func (b *build) untrackedFiles(ctx context.Context) ([]string, error) {
	gitDir := filepath.Join(b.dir, ".git")
	if st, err := os.Stat(gitDir); err != nil || !st.IsDir() {
		return nil, errors.New("the build folder is not a git work tree")
	}
	// The command runs in the git folder: the pathspec :/ and
	// --full-name make its answer the whole work tree, from its top.
	list := git.Command{Name: "ls-files", Flags: []git.Flag{{Name: "--others"}, {Name: "-z"}, {Name: "--full-name"}},
		PathArgs: []string{":/"}, Env: []string{"GIT_WORK_TREE=" + b.dir}}
	out, err := b.r.git.Run(ctx, gitDir, list, git.Options{})
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	return parseUntracked(out), nil
}
