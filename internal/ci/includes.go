package ci

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// Bounds of include:remote: GitLab's timeout for the request, and the
// redirects followed (each hop's address checked again at connect time).
const (
	remoteIncludeTimeout   = 10 * time.Second
	remoteIncludeRedirects = 5
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

// remote fetches an include:remote file.
func (in *includes) remote(raw string) (ciconfig.Fetched, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ciconfig.Fetched{}, &ciconfig.RemoteBlockedError{Reason: "Only allowed schemes are http, https"}
	}
	ctx, cancel := context.WithTimeout(in.ctx, remoteIncludeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return ciconfig.Fetched{}, ciconfig.ErrRemoteHTTP
	}
	resp, err := remoteClient(in.settings.AllowLocalRequestsFromWebHooksAndServices).Do(req)
	if err != nil {
		in.s.log.Debug("ci: include:remote", "url", u.Redacted(), "err", err)
		return ciconfig.Fetched{}, remoteError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		return ciconfig.Fetched{}, &ciconfig.RemoteStatusError{Code: resp.StatusCode}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, int64(in.s.cfg.MaxConfigBytes)+1))
	if err != nil {
		return ciconfig.Fetched{}, remoteError(err)
	}
	if len(data) > in.s.cfg.MaxConfigBytes {
		return ciconfig.Fetched{}, ciconfig.ErrTooBig
	}
	return ciconfig.Fetched{Data: data}, nil
}

// blockedError is an address refused at connect time.
type blockedError struct{ reason string }

func (e *blockedError) Error() string { return e.reason }

// remoteError classifies a failed request as GitLab's messages do.
func remoteError(err error) error {
	var blocked *blockedError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.As(err, &blocked):
		return &ciconfig.RemoteBlockedError{Reason: blocked.reason}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return ciconfig.ErrRemoteTimeout
	case errors.As(err, &dnsErr), errors.As(err, &opErr):
		return ciconfig.ErrRemoteSocket
	}
	return ciconfig.ErrRemoteHTTP
}

// remoteClient is an HTTP client for include:remote: no proxy, a
// bounded number of redirects, and each connection's resolved address
// checked when it is made (so a name that resolves to a local address
// on a second lookup is refused too).
func remoteClient(allowLocal bool) *http.Client {
	dialer := &net.Dialer{Timeout: remoteIncludeTimeout, Control: func(_, address string, _ syscall.RawConn) error {
		if allowLocal {
			return nil
		}
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return &blockedError{"Requests to the local network are not allowed"}
		}
		return checkRemoteIP(net.ParseIP(host))
	}}
	return &http.Client{
		Transport: &http.Transport{DialContext: dialer.DialContext, TLSHandshakeTimeout: remoteIncludeTimeout,
			ResponseHeaderTimeout: remoteIncludeTimeout, DisableKeepAlives: true},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= remoteIncludeRedirects {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return &blockedError{"Only allowed schemes are http, https"}
			}
			return nil
		},
	}
}

// checkRemoteIP refuses loopback, private, link-local and unspecified
// addresses with GitLab's UrlBlocker reasons.
func checkRemoteIP(ip net.IP) error {
	switch {
	case ip == nil:
		return &blockedError{"Requests to the local network are not allowed"}
	case ip.IsLoopback(), ip.IsUnspecified():
		return &blockedError{"Requests to localhost are not allowed"}
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return &blockedError{"Requests to the link local network are not allowed"}
	case ip.IsPrivate(), sharedAddressSpace.Contains(ip):
		return &blockedError{"Requests to the local network are not allowed"}
	}
	return nil
}

// sharedAddressSpace is RFC 6598's carrier-grade NAT range, local too.
var sharedAddressSpace = &net.IPNet{IP: net.IPv4(100, 64, 0, 0), Mask: net.CIDRMask(10, 32)}
