package ci

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// includes reads the included files of one configuration load
// (ciconfig.Options.Fetch): local files of the pipeline's project at its
// commit, or of another project at the commit its project include read;
// project files as the pipeline's user, who must be able to read the
// project's code; remote files over HTTP(S), refused to local addresses
// unless the instance allows local requests.
type includes struct {
	s        *Service
	ctx      context.Context
	own      *gitrepo.Repo
	commit   git.ObjectID
	user     *model.User
	settings model.ApplicationSettings
	projects map[string]includedProject // by lower-case full path
	// external: a project or remote file was read; the configuration
	// then depends on more than the commit and is not cached.
	external bool
}

// includedProject is a project whose files were included.
type includedProject struct {
	repo          *gitrepo.Repo
	defaultBranch string
}

func (s *Service) newIncludes(ctx context.Context, own *gitrepo.Repo, commit git.ObjectID, user *model.User) *includes {
	st, err := s.Settings(ctx)
	if err != nil {
		s.log.Warn("ci: includes: application settings", "err", err)
		st = model.DefaultApplicationSettings()
	}
	return &includes{s: s, ctx: ctx, own: own, commit: commit, user: user, settings: st, projects: map[string]includedProject{}}
}

// fetch is ciconfig.Options.Fetch.
func (in *includes) fetch(at ciconfig.Location) (ciconfig.Fetched, error) {
	switch at.Kind {
	case ciconfig.IncludeLocal:
		if at.Project == "" {
			if in.commit == "" { // an empty repository (the lint API)
				return ciconfig.Fetched{}, ciconfig.ErrFileNotFound
			}
			return in.blob(in.own, in.commit, at.Path)
		}
		p, ok := in.projects[at.Project]
		if !ok {
			return ciconfig.Fetched{}, ciconfig.ErrProjectNotFound
		}
		return in.blob(p.repo, git.ObjectID(at.Ref), at.Path)
	case ciconfig.IncludeProject:
		in.external = true
		return in.project(at)
	case ciconfig.IncludeRemote:
		in.external = true
		return in.remote(at.URL)
	}
	return ciconfig.Fetched{}, ciconfig.ErrFileNotFound
}

// project reads a file of another project at a ref (HEAD: its default
// branch) as the pipeline's user.
func (in *includes) project(at ciconfig.Location) (ciconfig.Fetched, error) {
	ip, ok := in.projects[at.Project]
	if !ok {
		if in.user == nil || !strings.Contains(at.Project, "/") {
			return ciconfig.Fetched{}, ciconfig.ErrProjectNotFound
		}
		a := auth.Actor{User: in.user}
		p, acc, err := in.s.projects.Resolve(in.ctx, a, at.Project)
		if model.KindOf(err) == model.KindNotFound {
			return ciconfig.Fetched{}, ciconfig.ErrProjectNotFound
		}
		if err != nil {
			return ciconfig.Fetched{}, err
		}
		if !auth.Can(a, auth.ReadCode, auth.Resource{Project: &p, Access: acc}) {
			return ciconfig.Fetched{}, ciconfig.ErrProjectNotFound
		}
		repo, err := in.s.repo(p)
		if err != nil {
			return ciconfig.Fetched{}, fmt.Errorf("open repository of %q: %w", at.Project, err)
		}
		ip = includedProject{repo: repo, defaultBranch: p.DefaultBranch}
		in.projects[at.Project] = ip
	}
	repo := ip.repo
	if at.Ref == "HEAD" && ip.defaultBranch != "" {
		at.Ref = ip.defaultBranch
	}
	commit, err := repo.CommitID(in.ctx, at.Ref)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return ciconfig.Fetched{}, ciconfig.ErrRefNotFound
	}
	if err != nil {
		return ciconfig.Fetched{}, fmt.Errorf("resolve %q in %q: %w", at.Ref, at.Project, err)
	}
	f, err := in.blob(repo, commit, at.Path)
	f.Commit = string(commit)
	return f, err
}

// blob reads a file at a commit, bounded by the configuration size.
func (in *includes) blob(repo *gitrepo.Repo, commit git.ObjectID, path string) (ciconfig.Fetched, error) {
	info, err := repo.ObjectAt(in.ctx, commit, path)
	if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
		return ciconfig.Fetched{}, ciconfig.ErrFileNotFound
	}
	if err != nil {
		return ciconfig.Fetched{}, err
	}
	if info.Size > int64(in.s.cfg.MaxConfigBytes) {
		return ciconfig.Fetched{}, ciconfig.ErrTooBig
	}
	_, data, err := repo.ReadObject(in.ctx, string(info.OID))
	if err != nil {
		return ciconfig.Fetched{}, err
	}
	return ciconfig.Fetched{Data: data}, nil
}

// RemoteFetcher gets include:remote files over HTTP(S) (the app wires
// outbound.Client). Get returns the body of rawURL, at most maxBytes
// long, refusing local addresses unless allowLocal. Its errors are
// matched by behaviour: BlockedReason() string (an address or scheme
// refused), HTTPStatus() int (a status of 400 or more), TooLarge() bool,
// Timeout() bool, ConnectFailed() bool (DNS, refused); anything else is
// an HTTP error.
type RemoteFetcher interface {
	Get(ctx context.Context, rawURL string, allowLocal bool, maxBytes int64) ([]byte, error)
}

// SetRemoteFetcher sets how include:remote files are read; without one
// they fail as unreachable.
func (s *Service) SetRemoteFetcher(f RemoteFetcher) { s.remote = f }

// remote fetches an include:remote file.
func (in *includes) remote(raw string) (ciconfig.Fetched, error) {
	if in.s.remote == nil {
		return ciconfig.Fetched{}, ciconfig.ErrRemoteSocket
	}
	data, err := in.s.remote.Get(in.ctx, raw, in.settings.AllowLocalRequestsFromWebHooksAndServices, int64(in.s.cfg.MaxConfigBytes))
	if err != nil {
		in.s.log.Debug("ci: include:remote", "url", redactURL(raw), "err", err)
		return ciconfig.Fetched{}, remoteError(err)
	}
	return ciconfig.Fetched{Data: data}, nil
}

// redactURL drops a URL's password for the log.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Redacted()
}

// remoteError classifies a failed fetch as GitLab's messages do.
func remoteError(err error) error {
	var blocked interface{ BlockedReason() string }
	var status interface{ HTTPStatus() int }
	var tooLarge interface{ TooLarge() bool }
	var timeout interface{ Timeout() bool }
	var connect interface{ ConnectFailed() bool }
	switch {
	case errors.As(err, &blocked):
		return &ciconfig.RemoteBlockedError{Reason: blocked.BlockedReason()}
	case errors.As(err, &status):
		return &ciconfig.RemoteStatusError{Code: status.HTTPStatus()}
	case errors.As(err, &tooLarge) && tooLarge.TooLarge():
		return ciconfig.ErrTooBig
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &timeout) && timeout.Timeout():
		return ciconfig.ErrRemoteTimeout
	case errors.As(err, &connect) && connect.ConnectFailed():
		return ciconfig.ErrRemoteSocket
	}
	return ciconfig.ErrRemoteHTTP
}
