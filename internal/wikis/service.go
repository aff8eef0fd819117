// Package wikis keeps the wikis of projects and groups. Each wiki is a
// bare Git repository beside its owner's (a project's "<hash>.wiki.git",
// a group's under "@groups/"), created on its first write; a page is one
// file "<slug>.<extension>" on the wiki's default branch, every change is
// one commit by the caller, and attachments live under "uploads/". The
// same repository is cloned and pushed over HTTP, so pages pushed with git
// are pages of the API.
package wikis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	lru "github.com/hashicorp/golang-lru/v2"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
	// BeginWrite registers a write to the project's repositories, its
	// wiki among them (refused with model.ErrRepositoryReadOnly while a
	// storage move holds them), and sets p's storage to where they are
	// now; end ends it.
	BeginWrite(ctx context.Context, p *model.Project) (end func(), err error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
	// BeginWrite registers a write to the group's wiki, as
	// Projects.BeginWrite does for a project's.
	BeginWrite(ctx context.Context, g *model.Group) (end func(), err error)
}

// Settings reads the instance's application settings (size limits).
type Settings interface {
	Settings(ctx context.Context) (model.ApplicationSettings, error)
}

// Config are the wikis' settings.
type Config struct {
	// DefaultBranch is a new wiki's branch ("main" when empty).
	DefaultBranch string
}

// Service answers every wiki question.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
	settings Settings
	storages *gitrepo.Storages
	log      *slog.Logger
	cfg      Config
	now      func() time.Time
	// housekeeping counts the wiki's writes (nil: not counted).
	housekeeping Housekeeping
}

// Housekeeping counts writes to a wiki (of a project or a group) inside
// the transaction that schedules its refresh.
type Housekeeping interface {
	CountWikiWrite(ctx context.Context, tx *store.Tx, projectID, groupID int64) error
}

// SetHousekeeping gives the service the write counter (before use).
func (s *Service) SetHousekeeping(h Housekeeping) { s.housekeeping = h }

// New returns the wikis service; its background work (sizes,
// housekeeping) runs on queue.
func New(db *store.DB, projects Projects, groups Groups, settings Settings, storages *gitrepo.Storages, queue *tasks.Queue,
	log *slog.Logger, cfg Config) *Service {
	if cfg.DefaultBranch == "" {
		cfg.DefaultBranch = "main"
	}
	s := &Service{db: db, projects: projects, groups: groups, settings: settings, storages: storages, log: log, cfg: cfg, now: db.Now}
	tasks.Handle(queue, refreshTask, s.runRefresh, nil)
	return s
}

// Page is one wiki page. Content is loaded only when asked for.
type Page struct {
	Format string
	Slug   string
	Title  string
	Path   string // the file in the wiki repository
	// Content is the page's text (rendered HTML when asked to render);
	// HasContent tells whether it was loaded.
	Content    []byte
	HasContent bool
	blob       string
}

// Encoding names the content's encoding as GitLab does: "UTF-8", or
// "ASCII-8BIT" for content that is not valid UTF-8.
func (p Page) Encoding() string {
	if utf8.Valid(p.Content) {
		return "UTF-8"
	}
	return "ASCII-8BIT"
}

// Attachment is an uploaded file stored in the wiki.
type Attachment struct {
	FileName string
	FilePath string
	Branch   string
	Markdown string
}

// wiki is a resolved wiki: its owner, the caller's access and the
// repository (which may not exist yet).
type wiki struct {
	project *model.Project
	group   *model.Group
	access  model.AccessLevel
	repo    *gitrepo.Repo
}

func (w *wiki) resource() auth.Resource {
	return auth.Resource{Project: w.project, Group: w.group, Access: w.access}
}

// repoOf opens the wiki repository of a project or a group, on its
// owner's storage.
func (s *Service) repoOf(p *model.Project, g *model.Group) (*gitrepo.Repo, error) {
	if p != nil {
		return s.storages.Open(p.RepositoryStorage, gitrepo.WikiPath(p.DiskPath))
	}
	return s.storages.Open(g.RepositoryStorage, gitrepo.GroupWikiPath(g.ID))
}

// lease registers a write to w's wiki (refused while a storage move holds
// it) and opens the wiki where it is now; call end once the write is
// over.
func (s *Service) lease(ctx context.Context, w *wiki) (end func(), err error) {
	if w.project != nil {
		end, err = s.projects.BeginWrite(ctx, w.project)
	} else {
		end, err = s.groups.BeginWrite(ctx, w.group)
	}
	if err != nil {
		return nil, err
	}
	if w.repo, err = s.repoOf(w.project, w.group); err != nil {
		end()
		return nil, err
	}
	return end, nil
}

// openWrite is open for a write (action), leased: call end once the
// write is over.
func (s *Service) openWrite(ctx context.Context, a auth.Actor, o model.OwnerRef, action auth.Action) (*wiki, func(), error) {
	w, err := s.open(ctx, a, o, action)
	if err != nil {
		return nil, nil, err
	}
	end, err := s.lease(ctx, w)
	if err != nil {
		return nil, nil, err
	}
	return w, end, nil
}

// open resolves the owner (404 when the caller may not see it) and checks
// the action on its wiki (403).
func (s *Service) open(ctx context.Context, a auth.Actor, o model.OwnerRef, action auth.Action) (*wiki, error) {
	w := &wiki{}
	if o.Group {
		g, acc, err := s.groups.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		w.group, w.access = &g, acc
	} else {
		p, acc, err := s.projects.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		w.project, w.access = &p, acc
	}
	if !auth.Can(a, action, w.resource()) {
		return nil, model.Forbidden("")
	}
	repo, err := s.repoOf(w.project, w.group)
	if err != nil {
		return nil, err
	}
	w.repo = repo
	return w, nil
}

// errPageNotFound is GitLab's answer for a missing page.
var errPageNotFound = model.NotFound("Wiki Page")

// head is the wiki's default branch and its tip ("" for a wiki without
// commits or without a repository).
func (s *Service) head(ctx context.Context, repo *gitrepo.Repo) (string, git.ObjectID, error) {
	if !repo.Exists() {
		return s.newBranch(ctx), "", nil
	}
	branch, err := repo.HeadBranch(ctx)
	if err != nil {
		return "", "", fmt.Errorf("wiki head: %w", err)
	}
	tip, err := repo.BranchTip(ctx, branch)
	return branch, tip, err
}

// indexes caches the page lists of commits: a commit's pages never
// change.
var indexes, _ = lru.New[indexKey, []Page](256)

type indexKey struct{ repo, commit string }

// pages lists the pages at a commit, sorted by path. The slice is shared:
// callers must not modify it.
func pages(ctx context.Context, repo *gitrepo.Repo, commit git.ObjectID) ([]Page, error) {
	if commit == "" {
		return []Page{}, nil
	}
	key := indexKey{repo.Path(), string(commit)}
	if list, ok := indexes.Get(key); ok {
		return list, nil
	}
	entries, err := repo.Tree(ctx, commit, "", true)
	if err != nil {
		return nil, fmt.Errorf("list wiki: %w", err)
	}
	out := []Page{}
	for _, e := range entries {
		if e.Type != "blob" {
			continue
		}
		f, slug, ok := PageFormat(e.Path)
		if !ok {
			continue
		}
		out = append(out, Page{Format: f.Name, Slug: slug, Title: TitleOf(e.Path), Path: e.Path, blob: e.ID})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	indexes.Add(key, out)
	return out, nil
}

// find looks a page up as GitLab does: by the slug as given, then by the
// slug its text makes as a title; case-insensitively, a page whose slug
// matches exactly first.
func find(list []Page, raw string) (Page, bool) {
	for _, want := range []string{raw, Slug(raw)} {
		if want == "" {
			continue
		}
		var folded *Page
		for i := range list {
			if list[i].Slug == want {
				return list[i], true
			}
			if folded == nil && strings.EqualFold(list[i].Slug, want) {
				folded = &list[i]
			}
		}
		if folded != nil {
			return *folded, true
		}
	}
	return Page{}, false
}

// load reads a page's content.
func load(ctx context.Context, repo *gitrepo.Repo, p *Page) error {
	_, data, err := repo.ReadObject(ctx, p.blob)
	if err != nil {
		return fmt.Errorf("read wiki page %q: %w", p.Path, err)
	}
	p.Content, p.HasContent = data, true
	return nil
}

// List returns the wiki's pages sorted by path, with their content when
// withContent.
func (s *Service) List(ctx context.Context, a auth.Actor, o model.OwnerRef, withContent bool) ([]Page, error) {
	w, err := s.open(ctx, a, o, auth.ReadWiki)
	if err != nil {
		return nil, err
	}
	_, tip, err := s.head(ctx, w.repo)
	if err != nil {
		return nil, err
	}
	shared, err := pages(ctx, w.repo, tip)
	if err != nil || !withContent {
		return shared, err
	}
	list := slices.Clone(shared)
	for i := range list {
		if err := load(ctx, w.repo, &list[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// versionFormat is what a page version may be: a commit id, full or
// abbreviated.
var versionFormat = regexp.MustCompile(`^[0-9a-fA-F]{4,64}$`)

// Get returns a page with its content, at the default branch or at
// version (a commit of the wiki), rendered as HTML when renderHTML.
func (s *Service) Get(ctx context.Context, a auth.Actor, o model.OwnerRef, slug, version string, renderHTML bool) (Page, error) {
	w, err := s.open(ctx, a, o, auth.ReadWiki)
	if err != nil {
		return Page{}, err
	}
	_, commit, err := s.head(ctx, w.repo)
	if err != nil {
		return Page{}, err
	}
	if version != "" {
		if !versionFormat.MatchString(version) || !w.repo.Exists() {
			return Page{}, errPageNotFound
		}
		if commit, err = w.repo.CommitID(ctx, version); errors.Is(err, gitrepo.ErrRefNotFound) {
			return Page{}, errPageNotFound
		} else if err != nil {
			return Page{}, err
		}
	}
	list, err := pages(ctx, w.repo, commit)
	if err != nil {
		return Page{}, err
	}
	p, ok := find(list, slug)
	if !ok {
		return Page{}, errPageNotFound
	}
	if err := load(ctx, w.repo, &p); err != nil {
		return Page{}, err
	}
	if renderHTML {
		p.Content = []byte(RenderHTML(p.Format, p.Content))
	}
	return p, nil
}

// Create adds a page: title (its slashes make folders), content and
// format (a writable one; the API checks it).
func (s *Service) Create(ctx context.Context, a auth.Actor, o model.OwnerRef, title, content, format string) (Page, error) {
	w, end, err := s.openWrite(ctx, a, o, auth.CreateWiki)
	if err != nil {
		return Page{}, err
	}
	defer end()
	f, ok := FormatNamed(format)
	if !ok || !f.Writable {
		return Page{}, model.Invalid("base", "Invalid format selected")
	}
	title = NormalizeTitle(title)
	var fields model.FieldErrors
	for _, m := range ValidateTitle(title) {
		fields.Add("title", m)
	}
	if err := s.checkContent(ctx, &fields, content); err != nil {
		return Page{}, err
	}
	if err := fields.Err(); err != nil {
		return Page{}, err
	}
	slug := Slug(title)
	path := slug + "." + f.Ext
	msg := a.User.Username + " created page: " + title
	branch, _, err := s.head(ctx, w.repo)
	if err != nil {
		return Page{}, err
	}
	_, err = s.commit(ctx, w, a, branch, "", func(base git.ObjectID, list []Page) ([]gitrepo.Action, func() string, error) {
		if dup, ok := findFolded(list, slug); ok {
			return nil, nil, model.Invalid("base", "Duplicate page: A page with that title already exists in the file "+dup.Path)
		}
		// A new page at a renamed page's old slug ends that redirect.
		redirect, err := redirectActions(ctx, w.repo, base, slug, "")
		if err != nil {
			return nil, nil, err
		}
		return append([]gitrepo.Action{{Kind: "create", Path: path, Content: []byte(content)}}, redirect...), fixed(msg), nil
	})
	if err != nil {
		return Page{}, err
	}
	return Page{Format: f.Name, Slug: slug, Title: TitleOf(path), Path: path, Content: []byte(content), HasContent: true}, nil
}

// findFolded finds the page whose slug equals slug in any case.
func findFolded(list []Page, slug string) (Page, bool) {
	for _, p := range list {
		if strings.EqualFold(p.Slug, slug) {
			return p, true
		}
	}
	return Page{}, false
}

// checkContent adds the content's size error, if any, to fields.
func (s *Service) checkContent(ctx context.Context, fields *model.FieldErrors, content string) error {
	st, err := s.settings.Settings(ctx)
	if err != nil {
		return err
	}
	if max := st.WikiPageMaxContentBytes; max > 0 && int64(len(content)) > max {
		fields.Add("content", fmt.Sprintf("is too long (%s). The maximum size is %s.", HumanSize(int64(len(content))), HumanSize(max)))
	}
	return nil
}

// Update is a page edit; nil fields keep what the page has.
type Update struct {
	Title   *string
	Content *string
	Format  *string
}

// Update edits a page: its content, its format (a new format takes its
// default extension) and its title (a new title moves the page and the
// folder of pages below it; a title without "/" keeps the page's folder,
// a leading "/" moves it to the root; the rename is recorded in the
// wiki's redirect file).
func (s *Service) Update(ctx context.Context, a auth.Actor, o model.OwnerRef, slug string, in Update) (Page, error) {
	w, end, err := s.openWrite(ctx, a, o, auth.CreateWiki)
	if err != nil {
		return Page{}, err
	}
	defer end()
	var contentErrs model.FieldErrors
	if in.Format != nil {
		if f, ok := FormatNamed(*in.Format); !ok || !f.Writable {
			return Page{}, model.Invalid("base", "Invalid format selected")
		}
	}
	if in.Content != nil {
		if err := s.checkContent(ctx, &contentErrs, *in.Content); err != nil {
			return Page{}, err
		}
	}
	branch, _, err := s.head(ctx, w.repo)
	if err != nil {
		return Page{}, err
	}
	var out Page
	_, err = s.commit(ctx, w, a, branch, "", func(base git.ObjectID, list []Page) ([]gitrepo.Action, func() string, error) {
		cur, ok := find(list, slug)
		if !ok {
			return nil, nil, errPageNotFound
		}
		f, _ := FormatNamed(cur.Format)
		ext := cur.Path[len(cur.Slug)+1:]
		if in.Format != nil && *in.Format != cur.Format {
			f, _ = FormatNamed(*in.Format)
			ext = f.Ext
		}
		newSlug, title := cur.Slug, cur.Title
		invalid := model.FieldErrors{}
		for k, v := range contentErrs {
			invalid[k] = v
		}
		if in.Title != nil {
			title = NormalizeTitle(*in.Title)
			full := title
			// A title that is blank on its own stays blank in a folder.
			if dir, _, ok := cutLast(cur.Slug); ok && !strings.Contains(title, "/") && Slug(title) != "" {
				full = dir + "/" + title
			}
			for _, m := range ValidateTitle(full) {
				invalid.Add("title", m)
			}
			newSlug = Slug(full)
		}
		if err := invalid.Err(); err != nil {
			return nil, nil, err
		}
		path := newSlug + "." + ext
		out = Page{Format: f.Name, Slug: newSlug, Title: TitleOf(path), Path: path, blob: cur.blob}
		message := fixed(a.User.Username + " updated page: " + title)
		update := gitrepo.Action{Kind: "update", Path: cur.Path}
		if in.Content != nil {
			update.Content, update.HasContent = []byte(*in.Content), true
		}
		if path == cur.Path {
			if in.Content == nil {
				return nil, nil, gitrepo.ErrNoChanges
			}
			return []gitrepo.Action{update}, message, nil
		}
		if other, ok := findFolded(list, newSlug); ok && other.Path != cur.Path {
			return nil, nil, model.Invalid("base", "There is already a page with the same title in that path.")
		}
		update.Kind, update.PreviousPath, update.Path = "move", cur.Path, path
		actions := []gitrepo.Action{update}
		if newSlug != cur.Slug && !strings.HasPrefix(newSlug+"/", cur.Slug+"/") {
			moved, err := folderMoves(ctx, w.repo, base, cur.Slug, newSlug)
			if err != nil {
				return nil, nil, err
			}
			actions = append(actions, moved...)
		}
		if newSlug != cur.Slug {
			redirect, err := redirectActions(ctx, w.repo, base, newSlug, cur.Slug)
			if err != nil {
				return nil, nil, err
			}
			actions = append(actions, redirect...)
		}
		return actions, message, nil
	})
	if errors.Is(err, gitrepo.ErrNoChanges) {
		err = nil
	}
	if err != nil {
		return Page{}, err
	}
	if in.Content != nil {
		out.Content = []byte(*in.Content)
	} else if err := load(ctx, w.repo, &out); err != nil {
		return Page{}, err
	}
	out.HasContent = true
	return out, nil
}

// cutLast splits a slug at its last "/".
func cutLast(slug string) (dir, name string, ok bool) {
	i := strings.LastIndexByte(slug, '/')
	if i < 0 {
		return "", slug, false
	}
	return slug[:i], slug[i+1:], true
}

// folderMoves moves every file in the folder named like a renamed page
// (its sub-pages and anything else) at base to the folder of its new name.
func folderMoves(ctx context.Context, repo *gitrepo.Repo, base git.ObjectID, from, to string) ([]gitrepo.Action, error) {
	entries, err := repo.Tree(ctx, base, from, true)
	if errors.Is(err, gitrepo.ErrPathNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []gitrepo.Action
	for _, e := range entries {
		if e.Type == "tree" {
			continue
		}
		out = append(out, gitrepo.Action{Kind: "move", PreviousPath: e.Path, Path: to + e.Path[len(from):]})
	}
	return out, nil
}

// fixed is a commit message known before the change is built.
func fixed(msg string) func() string { return func() string { return msg } }

// Delete removes a page (its folder of sub-pages stays).
func (s *Service) Delete(ctx context.Context, a auth.Actor, o model.OwnerRef, slug string) error {
	w, end, err := s.openWrite(ctx, a, o, auth.AdminWiki)
	if err != nil {
		return err
	}
	defer end()
	branch, _, err := s.head(ctx, w.repo)
	if err != nil {
		return err
	}
	_, err = s.commit(ctx, w, a, branch, "", func(_ git.ObjectID, list []Page) ([]gitrepo.Action, func() string, error) {
		p, ok := find(list, slug)
		if !ok {
			return nil, nil, errPageNotFound
		}
		return []gitrepo.Action{{Kind: "delete", Path: p.Path}}, fixed(a.User.Username + " deleted page: " + p.Title), nil
	})
	return err
}

// Attach stores an uploaded file under uploads/<random>/ on branch (the
// wiki's default branch when empty; a new branch starts from it). size is
// the upload's length, checked against the instance's attachment limit
// before anything is stored.
func (s *Service) Attach(ctx context.Context, a auth.Actor, o model.OwnerRef, fileName string, size int64, content io.Reader, branch string) (Attachment, error) {
	w, end, err := s.openWrite(ctx, a, o, auth.CreateWiki)
	if err != nil {
		return Attachment{}, err
	}
	defer end()
	name, ok := AttachmentName(fileName)
	if !ok {
		return Attachment{}, model.BadRequestRaw("The file name cannot be empty")
	}
	st, err := s.settings.Settings(ctx)
	if err != nil {
		return Attachment{}, err
	}
	if max := int64(st.MaxAttachmentSize) << 20; max > 0 && size > max {
		return Attachment{}, model.TooLarge()
	}
	def, _, err := s.head(ctx, w.repo)
	if err != nil {
		return Attachment{}, err
	}
	if branch == "" {
		branch = def
	}
	if !git.ValidRefName(branch) {
		return Attachment{}, model.BadRequestRaw("Branch name is invalid")
	}
	if err := s.ensure(ctx, w.repo); err != nil {
		return Attachment{}, err
	}
	blob, err := w.repo.WriteBlob(ctx, content)
	if err != nil {
		return Attachment{}, fmt.Errorf("store attachment: %w", err)
	}
	var random [16]byte
	if _, err := rand.Read(random[:]); err != nil {
		return Attachment{}, err
	}
	path := "uploads/" + hex.EncodeToString(random[:]) + "/" + name
	_, err = s.commit(ctx, w, a, branch, def, func(git.ObjectID, []Page) ([]gitrepo.Action, func() string, error) {
		return []gitrepo.Action{{Kind: "create", Path: path, Blob: blob}}, fixed("Upload attachment " + name), nil
	})
	if err != nil {
		return Attachment{}, err
	}
	return Attachment{FileName: name, FilePath: path, Branch: branch, Markdown: AttachmentMarkdown(name, path)}, nil
}

// maxCommitTries bounds the rebuilds of a commit whose branch moved while
// it was built (another writer landed first).
const maxCommitTries = 10

// change builds one commit: the actions for the pages at base (a commit
// of the wiki, "" for none) and its message, asked after the actions.
type change func(base git.ObjectID, list []Page) (actions []gitrepo.Action, message func() string, err error)

// commit writes one change on branch: build sees the pages at the
// branch's tip (or at from's tip when branch does not exist yet); the
// branch moves by compare-and-swap, and a lost race builds again on the
// new tip, so concurrent writers never overwrite each other. Writers of
// one branch in this process take turns; the compare-and-swap guards
// against pushes and other processes.
func (s *Service) commit(ctx context.Context, w *wiki, a auth.Actor, branch, from string, build change) (git.ObjectID, error) {
	unlock, err := w.repo.LockBranch(ctx, branch)
	if err != nil {
		return "", err
	}
	defer unlock()
	for try := 0; ; try++ {
		var tip, base git.ObjectID
		if w.repo.Exists() {
			var err error
			if tip, err = w.repo.BranchTip(ctx, branch); err != nil {
				return "", err
			}
			base = tip
			if base == "" && from != "" && from != branch {
				if base, err = w.repo.BranchTip(ctx, from); err != nil {
					return "", err
				}
			}
		}
		list, err := pages(ctx, w.repo, base)
		if err != nil {
			return "", err
		}
		actions, message, err := build(base, list)
		if err != nil {
			return "", err
		}
		if err := s.ensure(ctx, w.repo); err != nil {
			return "", err
		}
		msg := message()
		sig := gitrepo.Signature{Name: a.User.Name, Email: commitEmail(a.User), When: s.now()}
		id, err := w.repo.BuildCommit(ctx, base, actions, sig, sig, msg)
		var ae *gitrepo.ActionError
		if errors.As(err, &ae) {
			return "", model.Invalid("base", ae.Message)
		}
		if err != nil {
			return "", err
		}
		err = w.repo.UpdateRef(ctx, "refs/heads/"+branch, id, tip)
		if errors.Is(err, gitrepo.ErrRefMoved) && try+1 < maxCommitTries {
			continue
		}
		if errors.Is(err, gitrepo.ErrRefMoved) {
			return "", model.Conflict("Someone edited the wiki at the same time; try again.")
		}
		if err != nil {
			return "", err
		}
		if err := s.scheduleRefresh(context.WithoutCancel(ctx), w.project, w.group); err != nil {
			s.log.Error("schedule wiki refresh", "repository", w.repo.Rel, "err", err)
		}
		return id, nil
	}
}

// commitEmail is the address a user's commits carry.
func commitEmail(u *model.User) string {
	if u.CommitEmail != "" {
		return u.CommitEmail
	}
	return u.Email
}

// newBranch is a new wiki's branch: the instance's default_branch_name,
// else the configured default.
func (s *Service) newBranch(ctx context.Context) string {
	st, err := s.settings.Settings(ctx)
	if err != nil {
		return s.cfg.DefaultBranch
	}
	return st.NewRepositoryBranch(s.cfg.DefaultBranch)
}

// ensure creates the wiki repository if it does not exist yet: built
// aside and renamed into place, so nobody sees a half-made repository and
// a racing creator (in this process or another) loses cleanly.
func (s *Service) ensure(ctx context.Context, repo *gitrepo.Repo) error {
	if repo.Exists() {
		return nil
	}
	// Create builds the repository aside and renames it into place: no
	// reader sees half a repository, and a racing creator's is as good.
	if err := repo.Create(ctx, s.newBranch(ctx)); err != nil && !errors.Is(err, gitrepo.ErrRepositoryExists) {
		return fmt.Errorf("create wiki repository: %w", err)
	}
	return nil
}

// refreshTask records a wiki's size (statistics read it) and packs its
// loose objects once enough gathered, a second after a write or a push;
// requests for one wiki fold into one pending task.
var refreshTask = tasks.Define("refresh_wiki", tasks.KindOptions[wikiPayload]{MaxAttempts: 3, Delay: time.Second,
	Dedupe: func(p wikiPayload) string { return fmt.Sprintf("%d/%d", p.ProjectID, p.GroupID) }})

// wikiPayload names a wiki by its owner: a project or a group.
type wikiPayload struct {
	ProjectID int64 `json:"project_id,omitempty"`
	GroupID   int64 `json:"group_id,omitempty"`
}

// scheduleRefresh asks for the wiki's refresh soon.
func (s *Service) scheduleRefresh(ctx context.Context, p *model.Project, g *model.Group) error {
	var pl wikiPayload
	if p != nil {
		pl.ProjectID = p.ID
	} else {
		pl.GroupID = g.ID
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if _, err := refreshTask.Enqueue(ctx, tx, pl); err != nil {
			return err
		}
		if s.housekeeping != nil {
			return s.housekeeping.CountWikiWrite(ctx, tx, pl.ProjectID, pl.GroupID)
		}
		return nil
	})
}

func (s *Service) runRefresh(ctx context.Context, pl wikiPayload) error {
	var p *model.Project
	var g *model.Group
	if pl.ProjectID != 0 {
		pr, err := s.db.ProjectByID(ctx, pl.ProjectID)
		if err != nil {
			return ignoreGone(err)
		}
		p = &pr
	} else {
		gr, err := s.db.GroupByID(ctx, pl.GroupID)
		if err != nil {
			return ignoreGone(err)
		}
		g = &gr
	}
	repo, err := s.repoOf(p, g)
	if err != nil {
		return err
	}
	if !repo.Exists() {
		return nil
	}
	repo.Tidy()
	size, err := repo.Size()
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if p != nil {
			return tx.SetProjectWikiSize(ctx, p.ID, size)
		}
		return tx.SetGroupWikiSize(ctx, g.ID, size)
	})
}

// ignoreGone drops "not found": the wiki's owner was removed meanwhile.
func ignoreGone(err error) error {
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	return err
}

// RemoveGroupWiki deletes a group's wiki repository (the group is being
// removed).
func (s *Service) RemoveGroupWiki(ctx context.Context, groupID int64) error {
	g, err := s.db.GroupByID(ctx, groupID)
	if err != nil {
		return ignoreGone(err)
	}
	repo, err := s.repoOf(nil, &g)
	if err != nil {
		return err
	}
	return repo.Remove()
}
