package groupexport

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/badges"
	"quarry/internal/boards"
	"quarry/internal/git/gitrepo"
	"quarry/internal/groups"
	"quarry/internal/importexport"
	"quarry/internal/labels"
	"quarry/internal/milestones"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// importPayload names an import.
type importPayload struct {
	ImportID int64 `json:"import_id"`
}

var importTask = tasks.Define("group_import", tasks.KindOptions[importPayload]{MaxAttempts: 3})

// Staged is an uploaded archive, unpacked and checked, waiting to be
// imported (or removed).
type Staged struct {
	dir      string // relative to the data directory
	manifest manifest
	s        *Service
}

// Remove deletes the unpacked archive (a no-op once an import owns it).
func (st *Staged) Remove() {
	if st != nil && st.dir != "" {
		_ = os.RemoveAll(st.s.path(st.dir))
	}
}

// uploadReader reads an upload up to a limit (0: none), remembering why
// reading stopped.
type uploadReader struct {
	r     io.Reader
	n     int64
	limit int64
	err   error
}

var errUploadTooLarge = errors.New("upload over max_import_size")

func (u *uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	u.n += int64(n)
	if u.limit > 0 && u.n > u.limit {
		u.err = errUploadTooLarge
		return n, u.err
	}
	if err != nil && err != io.EOF {
		u.err = err
	}
	return n, err
}

// Unpack reads an uploaded archive (the actor's, counted against
// group_import_limit) and unpacks it into a fresh directory, checking it
// whole: over max_import_size is a 413; a damaged, hostile or foreign
// archive, or one unpacking past max_decompressed_archive_size, a 400
// saying why. Nothing is left behind on error. A read of r that fails is
// returned wrapped (the caller classifies its body errors).
func (s *Service) Unpack(ctx context.Context, a auth.Actor, r io.Reader) (*Staged, error) {
	st, err := s.settings.Current(ctx)
	if err != nil {
		return nil, err
	}
	if err := allow(s.imports, strconv.FormatInt(a.UserID(), 10), st.GroupImportLimit); err != nil {
		return nil, err
	}
	var random [12]byte
	if _, err := rand.Read(random[:]); err != nil {
		return nil, err
	}
	staged := &Staged{dir: "tmp/group_imports/" + hex.EncodeToString(random[:]), s: s}
	if err := os.MkdirAll(s.path(staged.dir), 0o700); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			staged.Remove()
		}
	}()
	lim := importexport.Limits{MaxUnpacked: st.MaxDecompressedArchiveSize << 20}
	if st.MaxDecompressedArchiveSize == 0 {
		lim.MaxUnpacked = 1 << 62
	}
	up := &uploadReader{r: r, limit: st.MaxImportSize << 20}
	_, err = importexport.Extract(ctx, up, s.path(staged.dir), lim)
	switch {
	case errors.Is(up.err, errUploadTooLarge):
		return nil, model.TooLarge()
	case up.err != nil:
		return nil, fmt.Errorf("read the upload: %w", up.err)
	case err != nil:
		return nil, userError(err)
	}
	if staged.manifest, err = checkArchive(s.path(staged.dir)); err != nil {
		return nil, userError(err)
	}
	ok = true
	return staged, nil
}

// userError turns an archive's format error into a 400 with its reason
// as a sentence (a reason opening with a file's path keeps it as it is);
// other errors pass.
func userError(err error) error {
	var fe *importexport.FormatError
	if !errors.As(err, &fe) {
		return err
	}
	msg := fe.Reason
	first, _, _ := strings.Cut(msg, " ")
	if r, n := utf8.DecodeRuneInString(msg); n > 0 && !strings.Contains(first, "/") {
		msg = string(unicode.ToUpper(r)) + msg[n:]
	}
	return model.BadRequestRaw(msg)
}

// CheckParent refuses early, before an upload is read, an import under a
// parent group the actor may not see (404) or create subgroups in (403).
func (s *Service) CheckParent(ctx context.Context, a auth.Actor, parentID int64) error {
	p, acc, err := s.groups.Resolve(ctx, a, strconv.FormatInt(parentID, 10))
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.CreateSubgroup, auth.Resource{Group: &p, Access: acc}) {
		return model.Forbidden("")
	}
	return nil
}

// ImportInput is what POST /groups/import names besides the file.
type ImportInput struct {
	Name, Path string
	ParentID   *int64 // nil: a top-level group
}

// Import creates the group an archive is imported into — the actor its
// Owner, private at the top level, under a parent at most as visible as
// the parent — and schedules the import of the archive's contents into
// it. The staged archive then belongs to the import.
func (s *Service) Import(ctx context.Context, a auth.Actor, in ImportInput, staged *Staged) (model.Group, error) {
	st, err := s.settings.Current(ctx)
	if err != nil {
		return model.Group{}, err
	}
	root := staged.manifest.Groups[0]
	level := 0 // private at the top level
	if in.ParentID != nil {
		parent, _, err := s.groups.Resolve(ctx, a, strconv.FormatInt(*in.ParentID, 10))
		if err != nil {
			return parent, err
		}
		level = min(root.VisibilityLevel, levelOf(parent.Visibility))
	}
	gin := groupInput(root, allowedVisibility(st, a.Admin(), level))
	gin.Name, gin.Path, gin.ParentID = &in.Name, &in.Path, in.ParentID
	g, err := s.groups.CreateWith(ctx, a, gin, func(tx *store.Tx, g *model.Group) error {
		i := model.GroupImport{GroupID: g.ID, UserID: a.UserID(), Dir: staged.dir,
			Progress: model.GroupImportProgress{Groups: map[int64]int64{}, Imported: map[string]int{}, Skipped: map[string]int{}}}
		if err := tx.CreateGroupImport(ctx, &i); err != nil {
			return err
		}
		_, err := importTask.Enqueue(ctx, tx, importPayload{ImportID: i.ID})
		return err
	})
	if err != nil {
		return g, err
	}
	staged.dir = "" // the import's now
	return g, nil
}

// allowedVisibility is the most visible level not above level that the
// instance lets the actor give.
func allowedVisibility(st model.ApplicationSettings, admin bool, level int) model.Visibility {
	for _, v := range []model.Visibility{model.Public, model.Internal, model.Private} {
		if levelOf(v) > level {
			continue
		}
		if _, refused := st.RestrictedFor(admin, v); !refused {
			return v
		}
	}
	return model.Private
}

// GitLab's numbers of creation levels, by number.
var (
	projectCreationNames  = map[int]string{0: "noone", 1: "maintainer", 2: "developer", 3: "administrator", 4: "owner"}
	subgroupCreationNames = map[int]string{0: "owner", 1: "maintainer"}
)

// groupInput is the group attributes of a record, at visibility v.
func groupInput(r groupRecord, v model.Visibility) groups.Input {
	vis := string(v)
	in := groups.Input{Visibility: &vis, Description: r.Description, RequestAccessEnabled: r.RequestAccessEnabled,
		ShareWithGroupLock: r.ShareWithGroupLock, RequireTwoFactorAuthentication: r.RequireTwoFactorAuthentication,
		TwoFactorGracePeriod: r.TwoFactorGracePeriod, LFSEnabled: r.LFSEnabled, AutoDevopsEnabled: r.AutoDevopsEnabled,
		MentionsDisabled: r.MentionsDisabled, EmailsDisabled: r.EmailsDisabled}
	if r.EmailsDisabled == nil && r.EmailsEnabled != nil {
		off := !*r.EmailsEnabled
		in.EmailsDisabled = &off
	}
	if r.ProjectCreationLevel != nil {
		if n, ok := projectCreationNames[*r.ProjectCreationLevel]; ok {
			in.ProjectCreationLevel = &n
		}
	}
	if r.SubgroupCreationLevel != nil {
		if n, ok := subgroupCreationNames[*r.SubgroupCreationLevel]; ok {
			in.SubgroupCreationLevel = &n
		}
	}
	if r.DefaultBranchProtection != nil && *r.DefaultBranchProtection >= 0 && *r.DefaultBranchProtection <= 4 {
		in.DefaultBranchProtection = r.DefaultBranchProtection
	}
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > 500 {
		d := string([]rune(*in.Description)[:500])
		in.Description = &d
	}
	return in
}

// ImportState is the import that made a group, if one did (ok false
// otherwise): Quarry's import_status and import_error of the group.
func (s *Service) ImportState(ctx context.Context, groupID int64) (model.GroupImport, bool, error) {
	i, err := s.db.GroupImportOf(ctx, groupID)
	if errors.Is(err, model.ErrNotFound) {
		return i, false, nil
	}
	return i, err == nil, err
}

// runImport imports an archive into its group, resuming after the groups
// an earlier attempt imported.
func (s *Service) runImport(ctx context.Context, p importPayload) error {
	i, err := s.db.GroupImport(ctx, p.ImportID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if !i.State.Running() {
		return nil
	}
	if err := s.saveImport(ctx, &i, model.TransferStart, ""); err != nil {
		return err
	}
	u, err := s.db.UserByID(ctx, i.UserID)
	if err != nil {
		return tasks.Permanent{Err: fmt.Errorf("the importing user is gone: %w", err)}
	}
	actor := auth.Actor{User: &u}
	dir := s.path(i.Dir)
	m, err := checkArchive(dir)
	if err != nil {
		return tasks.Permanent{Err: err}
	}
	for n, rec := range m.Groups {
		if _, done := i.Progress.Groups[rec.ID]; done {
			continue
		}
		if n == 0 {
			err = s.db.InTx(ctx, func(tx *store.Tx) error {
				g, err := tx.GroupByID(ctx, i.GroupID)
				if err != nil {
					return err
				}
				return s.importGroup(ctx, tx, &i, actor, rec, g, dir)
			})
		} else {
			err = s.importSubgroup(ctx, &i, actor, rec, dir)
		}
		if err != nil {
			return fmt.Errorf("import group %q: %w", rec.Path, err)
		}
	}
	for _, rec := range m.Groups {
		if err := s.restoreWiki(ctx, &i, rec.ID, dir); err != nil {
			return fmt.Errorf("restore the wiki of group %q: %w", rec.Path, err)
		}
	}
	if err := s.saveImport(ctx, &i, model.TransferFinish, ""); err != nil {
		return err
	}
	_ = os.RemoveAll(dir)
	s.log.Info("group imported", "group_id", i.GroupID, "groups", len(i.Progress.Groups), "imported", i.Progress.Imported,
		"skipped", i.Progress.Skipped)
	return nil
}

// saveImport records an event (or progress, with e "") of an import. A
// lost race means another worker moved the import (a lease that ran out
// under load, and the task taken over): this run ends with an error that
// is retried, not a failure of the import — the retry reads the import
// again and goes on from its progress, or finds it done.
func (s *Service) saveImport(ctx context.Context, i *model.GroupImport, e model.TransferEvent, msg string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return saveImportIn(ctx, tx, i, e, msg) })
}

func saveImportIn(ctx context.Context, tx *store.Tx, i *model.GroupImport, e model.TransferEvent, msg string) error {
	ok, err := tx.SaveGroupImport(ctx, i, e, msg)
	if err == nil && !ok {
		return fmt.Errorf("group import %d changed meanwhile", i.ID)
	}
	return err
}

func (s *Service) importFailed(ctx context.Context, p importPayload, cause error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		i, err := tx.GroupImport(ctx, p.ImportID)
		if err != nil || !i.State.Running() {
			return ignoreNotFound(err)
		}
		_, err = tx.SaveGroupImport(ctx, &i, model.TransferFail, importFailure(cause))
		return err
	})
	if err != nil {
		s.log.Error("record group import failure", "import_id", p.ImportID, "error", err)
	}
	if i, err := s.db.GroupImport(ctx, p.ImportID); err == nil {
		_ = os.RemoveAll(s.path(i.Dir))
	}
}

// importFailure is a failure's reason as the group shows it: what failed
// (the group being imported) and why, at most 1,000 characters.
func importFailure(err error) string {
	msg := err.Error()
	if r := []rune(msg); len(r) > 1000 {
		msg = string(r[:1000])
	}
	return msg
}

// importSubgroup creates one subgroup of the archive under its imported
// parent and imports its relations, in one transaction with the
// progress.
func (s *Service) importSubgroup(ctx context.Context, i *model.GroupImport, actor auth.Actor, rec groupRecord, dir string) error {
	parentID, ok := i.Progress.Groups[*rec.ParentID]
	if !ok {
		return tasks.Permanent{Err: fmt.Errorf("its parent %d was not imported", *rec.ParentID)}
	}
	parent, err := s.db.GroupByID(ctx, parentID)
	if err != nil {
		return err
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return err
	}
	in := groupInput(rec, allowedVisibility(st, actor.Admin(), min(rec.VisibilityLevel, levelOf(parent.Visibility))))
	name, path := strings.TrimSpace(rec.Name), rec.Path
	in.Name, in.Path, in.ParentID = &name, &path, &parentID
	_, err = s.groups.CreateWith(ctx, actor, in, func(tx *store.Tx, g *model.Group) error {
		return s.importGroup(ctx, tx, i, actor, rec, *g, dir)
	})
	var me *model.Error
	if errors.As(err, &me) && (me.Kind == model.KindBadRequest || me.Kind == model.KindInvalid || me.Kind == model.KindForbidden) {
		return tasks.Permanent{Err: err}
	}
	return err
}

// importer holds what one group's import has mapped so far.
type importer struct {
	s      *Service
	tx     *store.Tx
	i      *model.GroupImport
	g      model.Group
	dir    string
	rec    groupRecord
	labels map[int64]int64  // archive label id → new id
	titles map[string]int64 // new labels by title
}

// importGroup imports one group's relations into g, then records it as
// done — all in tx.
func (s *Service) importGroup(ctx context.Context, tx *store.Tx, i *model.GroupImport, actor auth.Actor, rec groupRecord, g model.Group, dir string) error {
	im := &importer{s: s, tx: tx, i: i, g: g, dir: dir, rec: rec, labels: map[int64]int64{}, titles: map[string]int64{}}
	for _, step := range []func(context.Context) error{im.importLabels, im.importMilestones, im.importBadges, im.importBoards,
		func(ctx context.Context) error { return im.importMembers(ctx, actor) }} {
		if err := step(ctx); err != nil {
			return err
		}
	}
	for _, rel := range skippedRelations {
		n := 0
		err := importexport.Lines(relationPath(dir, rec.ID, rel), relationName(rec.ID, rel), maxRecordLine,
			func(int, json.RawMessage) error { n++; return nil })
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		im.skip(rel, n)
	}
	i.Progress.Groups[rec.ID] = g.ID
	return saveImportIn(ctx, tx, i, "", "")
}

func (im *importer) count(rel string, n int) {
	if n > 0 {
		im.i.Progress.Imported[rel] += n
	}
}

func (im *importer) skip(rel string, n int) {
	if n > 0 {
		im.i.Progress.Skipped[rel] += n
	}
}

// each decodes every record of a relation into a fresh T; a record that
// does not decode is skipped and counted.
func each[T any](im *importer, rel string, fn func(r *T) error) error {
	err := importexport.Lines(relationPath(im.dir, im.rec.ID, rel), relationName(im.rec.ID, rel), maxRecordLine,
		func(_ int, raw json.RawMessage) error {
			var r T
			if err := json.Unmarshal(raw, &r); err != nil {
				im.skip(rel, 1)
				return nil
			}
			return fn(&r)
		})
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// label creates a group label from a record, unless invalid or its title
// is taken (then the existing one answers); 0 when none.
func (im *importer) label(ctx context.Context, r *labelRecord) (int64, error) {
	title := strings.TrimSpace(r.Title)
	if id, ok := im.titles[title]; ok {
		return id, nil
	}
	color, ok := labels.Color(strings.TrimSpace(r.Color))
	if title == "" || utf8.RuneCountInString(title) > labels.MaxTitleLength || !ok ||
		strings.ContainsAny(title, ",") {
		return 0, nil
	}
	l := model.Label{Title: title, Color: color, GroupID: im.g.ID}
	if r.Description != nil {
		l.Description = *r.Description
		if utf8.RuneCountInString(l.Description) > labels.MaxDescriptionLength {
			l.Description = string([]rune(l.Description)[:labels.MaxDescriptionLength])
		}
	}
	if err := im.tx.CreateLabel(ctx, &l); err != nil {
		return 0, err
	}
	im.titles[title] = l.ID
	im.count("labels", 1)
	return l.ID, nil
}

func (im *importer) importLabels(ctx context.Context) error {
	return each(im, "labels", func(r *labelRecord) error {
		if _, dup := im.titles[strings.TrimSpace(r.Title)]; dup {
			im.skip("labels", 1)
			return nil
		}
		id, err := im.label(ctx, r)
		if err != nil {
			return err
		}
		if id == 0 {
			im.skip("labels", 1)
			return nil
		}
		im.labels[r.ID] = id
		return nil
	})
}

func (im *importer) importMilestones(ctx context.Context) error {
	titles, iids := map[string]bool{}, map[int64]bool{}
	return each(im, "milestones", func(r *milestoneRecord) error {
		m := model.Milestone{GroupID: im.g.ID, IID: r.IID, Title: milestones.SanitizeTitle(r.Title), Description: r.Description,
			State: "active", DueDate: date(r.DueDate), StartDate: date(r.StartDate)}
		if r.State == "closed" {
			m.State = "closed"
		}
		if r.CreatedAt != nil {
			m.CreatedAt = *r.CreatedAt
		}
		if r.UpdatedAt != nil {
			m.UpdatedAt = *r.UpdatedAt
		}
		if len(milestones.Validate(&m)) > 0 || m.IID <= 0 || titles[m.Title] || iids[m.IID] {
			im.skip("milestones", 1)
			return nil
		}
		if err := im.tx.ImportMilestone(ctx, &m); err != nil {
			return err
		}
		titles[m.Title], iids[m.IID] = true, true
		im.count("milestones", 1)
		return nil
	})
}

func (im *importer) importBadges(ctx context.Context) error {
	return each(im, "badges", func(r *badgeRecord) error {
		link, msg1 := badges.CheckURL(r.LinkURL)
		image, msg2 := badges.CheckURL(r.ImageURL)
		if msg1 != "" || msg2 != "" {
			im.skip("badges", 1)
			return nil
		}
		b := model.Badge{GroupID: im.g.ID, Name: r.Name, LinkURL: link, ImageURL: image}
		if err := im.tx.CreateBadge(ctx, &b); err != nil {
			return err
		}
		im.count("badges", 1)
		return nil
	})
}

func (im *importer) importBoards(ctx context.Context) error {
	return each(im, "boards", func(r *boardRecord) error {
		name := strings.TrimSpace(r.Name)
		if name == "" {
			name = "Development"
		}
		if utf8.RuneCountInString(name) > 255 {
			im.skip("boards", 1)
			return nil
		}
		b := model.Board{GroupID: im.g.ID, Name: name, HideBacklogList: r.HideBacklogList, HideClosedList: r.HideClosedList}
		if err := im.tx.CreateBoard(ctx, &b); err != nil {
			return err
		}
		im.count("boards", 1)
		// Label lists in their order; a list's label is the one imported
		// with the same id, else the group's of the same title, else made
		// from the list's own copy.
		lists := make([]listRecord, 0, len(r.Lists))
		for _, l := range r.Lists {
			if l.ListType == model.ListLabel {
				lists = append(lists, l)
			}
		}
		sortLists(lists)
		used := map[int64]bool{}
		for _, l := range lists {
			labelID := int64(0)
			if l.LabelID != nil {
				labelID = im.labels[*l.LabelID]
			}
			if labelID == 0 && l.Label != nil {
				var err error
				if labelID, err = im.label(ctx, l.Label); err != nil {
					return err
				}
			}
			if labelID == 0 || used[labelID] || len(used) >= boards.MaxLists {
				im.skip("board_lists", 1)
				continue
			}
			bl := model.BoardList{BoardID: b.ID, Label: model.Label{ID: labelID}}
			if err := im.tx.CreateBoardList(ctx, &bl); err != nil {
				return err
			}
			used[labelID] = true
			im.count("board_lists", 1)
		}
		return nil
	})
}

// sortLists orders label lists by position (those without one last),
// keeping the archive's order among equals.
func sortLists(lists []listRecord) {
	pos := func(l listRecord) int {
		if l.Position == nil {
			return 1 << 30
		}
		return *l.Position
	}
	for i := 1; i < len(lists); i++ {
		for j := i; j > 0 && pos(lists[j]) < pos(lists[j-1]); j-- {
			lists[j], lists[j-1] = lists[j-1], lists[j]
		}
	}
}

// importMembers keeps the memberships of users who exist here, found by
// the e-mail the archive carries (GitLab's rule); the importer stays the
// Owner they are.
func (im *importer) importMembers(ctx context.Context, actor auth.Actor) error {
	seen := map[int64]bool{actor.UserID(): true}
	var refresh []int64
	now := im.tx.Now().UTC()
	today := now.Format(model.DateLayout)
	err := each(im, "members", func(r *memberRecord) error {
		level := model.AccessLevel(r.AccessLevel)
		email := ""
		if r.User.PublicEmail != nil {
			email = strings.TrimSpace(*r.User.PublicEmail)
		}
		if email == "" || !model.ValidMemberLevel(model.SourceNamespace, level) {
			im.skip("members", 1)
			return nil
		}
		u, err := im.tx.UserByEmail(ctx, email)
		if errors.Is(err, model.ErrNotFound) {
			im.skip("members", 1)
			return nil
		}
		if err != nil {
			return err
		}
		if seen[u.ID] {
			if u.ID != actor.UserID() {
				im.skip("members", 1)
			}
			return nil
		}
		expires := date(r.ExpiresAt)
		if expires != "" && expires <= today {
			im.skip("members", 1)
			return nil
		}
		by := actor.UserID()
		m := model.Member{SourceType: model.SourceNamespace, SourceID: im.g.ID, UserID: u.ID, AccessLevel: level, ExpiresAt: expires,
			CreatedByID: &by, CreatedAt: now, UpdatedAt: now}
		if err := im.tx.CreateMember(ctx, &m); err != nil {
			return err
		}
		seen[u.ID] = true
		refresh = append(refresh, u.ID)
		im.count("members", 1)
		return nil
	})
	if err != nil || len(refresh) == 0 {
		return err
	}
	return im.tx.RefreshAuthorizations(ctx, refresh...)
}

// restoreWiki restores a group's wiki from its bundle, once.
func (s *Service) restoreWiki(ctx context.Context, i *model.GroupImport, archiveID int64, dir string) error {
	bundle := wikiBundlePath(dir, archiveID)
	if _, err := os.Stat(bundle); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	for _, done := range i.Progress.Wikis {
		if done == archiveID {
			return nil
		}
	}
	g, err := s.db.GroupByID(ctx, i.Progress.Groups[archiveID])
	if err != nil {
		return err
	}
	repo, err := s.storages.Open(g.RepositoryStorage, gitrepo.GroupWikiPath(g.ID))
	if err != nil {
		return err
	}
	if err := repo.RestoreBundle(ctx, bundle, s.cfg.DefaultBranch); err != nil {
		return tasks.Permanent{Err: err}
	}
	size, err := repo.Size()
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetGroupWikiSize(ctx, g.ID, size); err != nil {
			return err
		}
		i.Progress.Wikis = append(i.Progress.Wikis, archiveID)
		i.Progress.Imported["wikis"]++
		return saveImportIn(ctx, tx, i, "", "")
	})
}
