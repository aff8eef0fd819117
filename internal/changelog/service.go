package changelog

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects is what the service needs of projects.
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	CanPush(ctx context.Context, a auth.Actor, p *model.Project, acc model.AccessLevel, branch string) (bool, error)
}

// Groups finds a group the actor may read (for include_groups).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Files commits one file (the files service): create when lastCommit is
// empty, update otherwise, refused when the file changed since.
type Files interface {
	CommitFile(ctx context.Context, a auth.Actor, projectRef, branch, path string, content []byte, message, lastCommit string) error
}

// Service generates changelogs of project repositories.
type Service struct {
	db          *store.DB
	projects    Projects
	groups      Groups
	files       Files
	storages    *gitrepo.Storages
	externalURL string
	now         func() time.Time
}

// New returns the changelog service; externalURL starts commit links.
func New(db *store.DB, projects Projects, groups Groups, files Files, storages *gitrepo.Storages, externalURL string) *Service {
	return &Service{db: db, projects: projects, groups: groups, files: files, storages: storages,
		externalURL: strings.TrimSuffix(externalURL, "/"), now: db.Now}
}

// Params are the request's parameters (empty for defaults).
type Params struct {
	Version    string
	From, To   string
	Date       *time.Time
	Branch     string
	Trailer    string
	File       string
	Message    string
	ConfigFile string
}

// MaxCommits bounds the commits one changelog reads.
const MaxCommits = 15000

// ConfigFiles are where the configuration is looked for, in order.
var ConfigFiles = []string{".service/changelog_config.yml", ".gitlab/changelog_config.yml"}

// failed is GitLab's 422 for a changelog that cannot be made.
func failed(reason string) error {
	return model.Unprocessable("Failed to generate the changelog: " + reason)
}

// generation is a prepared changelog: the section and where it goes.
type generation struct {
	project model.Project
	access  model.AccessLevel
	repo    *gitrepo.Repo
	branch  string
	section string
}

// Notes renders the section for a version without committing it.
func (s *Service) Notes(ctx context.Context, a auth.Actor, projectRef string, p Params) (string, error) {
	g, err := s.generate(ctx, a, projectRef, p, false)
	if err != nil {
		return "", err
	}
	return g.section, nil
}

// Commit renders the section and commits it into the changelog file on
// the branch (placed by version; a file that has the version already is
// left as it is). It returns the section.
func (s *Service) Commit(ctx context.Context, a auth.Actor, projectRef string, p Params) (string, error) {
	g, err := s.generate(ctx, a, projectRef, p, true)
	if err != nil {
		return "", err
	}
	file := p.File
	if file == "" {
		file = "CHANGELOG.md"
	}
	message := p.Message
	if message == "" {
		message = "Add changelog for version " + p.Version
	}
	// Re-read and retry when someone else changes the file meanwhile.
	for attempt := 0; ; attempt++ {
		tip, err := g.repo.BranchTip(ctx, g.branch)
		if err != nil {
			return "", err
		}
		existing, last, err := readFile(ctx, g.repo, tip, file)
		if err != nil {
			return "", err
		}
		content, changed := Insert(string(existing), p.Version, g.section)
		if !changed {
			return g.section, nil
		}
		err = s.files.CommitFile(ctx, a, projectRef, g.branch, file, []byte(content), message, string(last))
		if err == nil || attempt >= 3 || model.KindOf(err) != model.KindBadRequest {
			return g.section, err
		}
	}
}

func (s *Service) generate(ctx context.Context, a auth.Actor, projectRef string, p Params, commit bool) (*generation, error) {
	version, ok := ParseVersion(p.Version)
	if !ok {
		return nil, failed("The requested `version` attribute format is not correct. Use formats such as `1.0.0` or `v1.0.0`.")
	}
	project, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return nil, err
	}
	if !auth.Can(a, auth.ReadCode, auth.Resource{Project: &project, Access: acc}) {
		return nil, model.Forbidden("")
	}
	g := &generation{project: project, access: acc, branch: p.Branch}
	if g.branch == "" {
		g.branch = project.DefaultBranch
	}
	if commit {
		if !a.SignedIn() {
			return nil, model.Unauthorized("")
		}
		ok, err := s.projects.CanPush(ctx, a, &project, acc, g.branch)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, model.Forbidden("You are not allowed to commit a changelog on this branch")
		}
	}
	if g.repo, err = s.storages.Open(project.RepositoryStorage, project.DiskPath); err != nil {
		return nil, err
	}
	cfg, err := s.config(ctx, g.repo, project, p.ConfigFile)
	if err != nil {
		return nil, err
	}
	to := p.To
	if to == "" {
		to = g.branch
	}
	toID, err := g.repo.CommitID(ctx, to)
	if err != nil {
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return nil, failed("Invalid or not found commit value in the given range")
		}
		return nil, err
	}
	var fromID git.ObjectID
	if p.From != "" {
		if fromID, err = g.repo.CommitID(ctx, p.From); err != nil {
			if errors.Is(err, gitrepo.ErrRefNotFound) {
				return nil, failed("Invalid or not found commit value in the given range")
			}
			return nil, err
		}
	} else {
		refs, err := g.repo.Refs(ctx, "refs/tags/")
		if err != nil {
			return nil, err
		}
		tags := make([]Tag, 0, len(refs))
		for _, r := range refs {
			tags = append(tags, Tag{Name: r.Name, Commit: string(r.Commit)})
		}
		prev, ok := PreviousTag(version, tags, cfg.TagRegex)
		if !ok {
			return nil, failed("The commit start range is unspecified, and no previous tag could be found to use instead")
		}
		fromID = git.ObjectID(prev.Commit)
	}
	commits, err := s.commits(ctx, g.repo, fromID, toID)
	if err != nil {
		return nil, err
	}
	trailer := p.Trailer
	if trailer == "" {
		trailer = "Changelog"
	}
	entries, err := s.entries(ctx, a, project, cfg, Select(commits, trailer), trailer)
	if err != nil {
		return nil, err
	}
	date := s.now()
	if p.Date != nil {
		date = *p.Date
	}
	g.section, err = Render(p.Version, date.UTC(), cfg, Group(entries, cfg.Categories))
	if err != nil {
		return nil, failed("Failed to parse the template: " + err.Error())
	}
	return g, nil
}

// config reads the configuration file from the default branch: the one
// named, or the first of ConfigFiles that exists.
func (s *Service) config(ctx context.Context, repo *gitrepo.Repo, p model.Project, name string) (Config, error) {
	head, err := repo.CommitID(ctx, p.DefaultBranch)
	if errors.Is(err, gitrepo.ErrRefNotFound) {
		return DefaultConfig(), nil
	}
	if err != nil {
		return Config{}, err
	}
	names := ConfigFiles
	if name != "" {
		names = []string{name}
	}
	for _, n := range names {
		info, err := repo.ObjectAt(ctx, head, n)
		if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
			continue
		}
		if err != nil {
			return Config{}, err
		}
		if info.Size > MaxConfigSize { // refused unread
			return Config{}, failed(configTooLarge.Msg)
		}
		_, data, err := repo.ReadObject(ctx, string(info.OID))
		if err != nil {
			return Config{}, err
		}
		cfg, err := ParseConfig(data)
		var ce *ConfigError
		if errors.As(err, &ce) {
			return Config{}, failed(ce.Msg)
		}
		return cfg, err
	}
	return DefaultConfig(), nil
}

// readFile reads path at commit; last is the last commit that changed it
// ("" when there is no such file).
func readFile(ctx context.Context, repo *gitrepo.Repo, commit git.ObjectID, path string) ([]byte, git.ObjectID, error) {
	if commit == "" {
		return nil, "", nil
	}
	info, err := repo.ObjectAt(ctx, commit, path)
	if errors.Is(err, gitrepo.ErrPathNotFound) || (err == nil && info.Type != "blob") {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	_, data, err := repo.ReadObject(ctx, string(info.OID))
	if err != nil {
		return nil, "", err
	}
	last, err := repo.LastCommit(ctx, commit, path)
	return data, last, err
}

// commits lists from..to newest first with what selection needs.
func (s *Service) commits(ctx context.Context, repo *gitrepo.Repo, from, to git.ObjectID) ([]Commit, error) {
	ids, err := repo.Log(ctx, gitrepo.LogOptions{Rev: string(from) + ".." + string(to), Max: MaxCommits + 1})
	if err != nil {
		return nil, err
	}
	if len(ids) > MaxCommits {
		return nil, failed(fmt.Sprintf("The commits range exceeds %d elements.", MaxCommits))
	}
	out := make([]Commit, 0, len(ids))
	for _, id := range ids {
		c, err := repo.ReadCommit(ctx, string(id))
		if err != nil {
			return nil, err
		}
		out = append(out, Commit{ID: string(c.ID), Title: c.Title(), Message: c.Message, AuthorEmail: c.Author.Email,
			Trailers: gitrepo.ParseTrailers(c.Message)})
	}
	return out, nil
}

// entries turns selected commits into entries: links, the author when
// the e-mail belongs to a user, and credit for members of include_groups
// (only groups the requester can read count).
func (s *Service) entries(ctx context.Context, a auth.Actor, p model.Project, cfg Config, commits []Commit, trailer string) ([]Entry, error) {
	var groups []model.Group
	for _, path := range cfg.IncludeGroups {
		g, _, err := s.groups.Resolve(ctx, a, path)
		if model.KindOf(err) == model.KindNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	today := s.now().UTC().Format(model.DateLayout)
	type author struct {
		reference string
		credit    bool
	}
	authors := map[string]*author{}
	out := make([]Entry, 0, len(commits))
	for _, c := range commits {
		vals := c.Trailers[trailer]
		e := Entry{Commit: c, Category: vals[len(vals)-1], CommitURL: s.externalURL + "/" + p.FullPath() + "/-/commit/" + c.ID,
			CommitReference: p.FullPath() + "@" + c.ID}
		email := strings.ToLower(c.AuthorEmail)
		au, seen := authors[email]
		if !seen {
			u, err := s.db.UserByEmail(ctx, c.AuthorEmail)
			switch {
			case errors.Is(err, model.ErrNotFound):
			case err != nil:
				return nil, err
			default:
				au = &author{reference: "@" + u.Username}
				for _, g := range groups {
					lvl, err := s.db.DirectMemberLevel(ctx, model.SourceNamespace, g.ID, u.ID, today)
					if err != nil {
						return nil, err
					}
					if lvl > 0 {
						au.credit = true
						break
					}
				}
			}
			authors[email] = au
		}
		if au != nil {
			e.AuthorReference, e.Credit = au.reference, au.credit
		}
		out = append(out, e)
	}
	return out, nil
}
