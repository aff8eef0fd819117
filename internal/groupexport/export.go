package groupexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/importexport"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// exportPayload names one export of a group: its generation, so a task
// of an export since replaced finds itself stale.
type exportPayload struct {
	GroupID    int64 `json:"group_id"`
	Generation int64 `json:"generation"`
}

var (
	exportTask = tasks.Define("group_export", tasks.KindOptions[exportPayload]{MaxAttempts: 3})
	expireTask = tasks.Define("group_export_expire", tasks.KindOptions[exportPayload]{MaxAttempts: 5})
)

// The download's answers while there is no archive, in GitLab's words.
const (
	msgNotReady = "The group export file is not available yet"
	msgGone     = "404 Not found or has expired"
)

// fileNameLimit is how much of the time and path GitLab keeps in an
// export's file name.
const fileNameLimit = 51

// FileName is GitLab's name for an export of the group at fullPath made
// at t: "<YYYY-MM-DD_HH-MM-mmm>_<full path, / as _>" cut to 51
// characters, then "_export.tar.gz".
func FileName(fullPath string, t time.Time) string {
	base := t.UTC().Format("2006-01-02_15-04-") + fmt.Sprintf("%03d", t.UTC().Nanosecond()/int(time.Millisecond)) + "_" +
		strings.ReplaceAll(fullPath, "/", "_")
	if r := []rune(base); len(r) > fileNameLimit {
		base = string(r[:fileNameLimit])
	}
	return base + "_export.tar.gz"
}

// StartExport schedules an export of the group (its Owner, or an
// administrator), replacing the group's last one; while one is running
// it is that one the caller will download.
func (s *Service) StartExport(ctx context.Context, a auth.Actor, ref string) error {
	g, err := s.owned(ctx, a, ref)
	if err != nil {
		return err
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return err
	}
	if err := allow(s.exports, strconv.FormatInt(a.UserID(), 10), st.GroupExportLimit); err != nil {
		return err
	}
	var replaced model.GroupExport
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		e := model.GroupExport{GroupID: g.ID, UserID: a.UserID()}
		old, ok, err := tx.ScheduleGroupExport(ctx, &e)
		if err != nil || !ok {
			return err
		}
		replaced = old
		_, err = exportTask.Enqueue(ctx, tx, exportPayload{GroupID: g.ID, Generation: e.Generation})
		return err
	})
	if err != nil {
		return err
	}
	s.removeFile(replaced.FilePath)
	return nil
}

// Download is the group's finished export: its archive opened, with its
// file name and size; 404 in GitLab's words while it is being written,
// and when there is none (never exported, failed, expired).
func (s *Service) Download(ctx context.Context, a auth.Actor, ref string) (io.ReadCloser, string, int64, error) {
	g, err := s.owned(ctx, a, ref)
	if err != nil {
		return nil, "", 0, err
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return nil, "", 0, err
	}
	if err := allow(s.downloads, fmt.Sprintf("%d/%d", a.UserID(), g.ID), st.GroupDownloadExportLimit); err != nil {
		return nil, "", 0, err
	}
	e, err := s.db.GroupExport(ctx, g.ID)
	switch {
	case errors.Is(err, model.ErrNotFound):
		return nil, "", 0, model.NotFoundRaw(msgGone)
	case err != nil:
		return nil, "", 0, err
	case e.State.Running():
		return nil, "", 0, model.NotFoundRaw(msgNotReady)
	case e.State != model.TransferFinished || (!e.ExpiresAt.IsZero() && !s.db.Now().Before(e.ExpiresAt)):
		return nil, "", 0, model.NotFoundRaw(msgGone)
	}
	f, err := os.Open(s.path(e.FilePath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, "", 0, model.NotFoundRaw(msgGone)
	}
	if err != nil {
		return nil, "", 0, err
	}
	return f, e.FileName, e.Size, nil
}

// runExport writes the archive of one export generation.
func (s *Service) runExport(ctx context.Context, p exportPayload) error {
	e, err := s.db.GroupExport(ctx, p.GroupID)
	if errors.Is(err, model.ErrNotFound) || (err == nil && (e.Generation != p.Generation || !e.State.Running())) {
		return nil // replaced, removed with its group, or over
	}
	if err != nil {
		return err
	}
	if err := s.moveExport(ctx, &e, model.TransferStart, ""); err != nil {
		return err
	}
	g, err := s.db.GroupByID(ctx, p.GroupID)
	if err != nil {
		return tasks.Permanent{Err: fmt.Errorf("read group %d: %w", p.GroupID, err)}
	}
	st, err := s.settings.Current(ctx)
	if err != nil {
		return err
	}
	work := s.path(fmt.Sprintf("tmp/group_exports/%d-%d", g.ID, e.Generation))
	if err := os.RemoveAll(work); err != nil { // an attempt cut short
		return err
	}
	if err := os.MkdirAll(work, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	archive := filepath.Join(work, "archive.tar.gz")
	size, err := s.writeArchive(ctx, g, work, archive, st.MaxExportSize<<20)
	if err != nil {
		return err
	}
	now := s.db.Now()
	rel := fmt.Sprintf("group_exports/%d/%d-%s", g.ID, e.Generation, FileName(g.FullPath, now))
	if err := os.MkdirAll(filepath.Dir(s.path(rel)), 0o700); err != nil {
		return err
	}
	if err := os.Rename(archive, s.path(rel)); err != nil {
		return err
	}
	e.FileName, e.FilePath, e.Size, e.ExpiresAt = FileName(g.FullPath, now), rel, size, now.Add(s.cfg.ExportTTL)
	moved := false
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if moved, err = tx.FinishGroupExport(ctx, &e); err != nil || !moved {
			return err
		}
		_, err = expireTask.Enqueue(ctx, tx, exportPayload{GroupID: g.ID, Generation: e.Generation}, tasks.At(e.ExpiresAt))
		return err
	})
	if err != nil || !moved {
		s.removeFile(rel)
	}
	return err
}

// moveExport applies an event to an export; losing the race to a newer
// export (or the group's removal) ends the task without error.
func (s *Service) moveExport(ctx context.Context, e *model.GroupExport, ev model.TransferEvent, msg string) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		moved, err := tx.MoveGroupExport(ctx, e, ev, msg)
		if err == nil && !moved {
			return tasks.Permanent{Err: fmt.Errorf("group export %d: replaced meanwhile", e.GroupID)}
		}
		return err
	})
}

func (s *Service) exportFailed(ctx context.Context, p exportPayload, cause error) {
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.GroupExport(ctx, p.GroupID)
		if err != nil || e.Generation != p.Generation || !e.State.Running() {
			return ignoreNotFound(err)
		}
		_, err = tx.MoveGroupExport(ctx, &e, model.TransferFail, cause.Error())
		return err
	})
	if err != nil {
		s.log.Error("record group export failure", "group_id", p.GroupID, "error", err)
	}
}

// runExpire removes an export past its time, unless replaced since.
func (s *Service) runExpire(ctx context.Context, p exportPayload) error {
	var gone model.GroupExport
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		e, err := tx.GroupExport(ctx, p.GroupID)
		if err != nil || e.Generation != p.Generation {
			return ignoreNotFound(err)
		}
		if ok, err := tx.DeleteGroupExport(ctx, p.GroupID, p.Generation); err != nil || !ok {
			return err
		}
		gone = e
		return nil
	})
	if err == nil {
		s.removeFile(gone.FilePath)
	}
	return err
}

// countingWriter counts what passes, and refuses past a limit (0: none).
type countingWriter struct {
	w     io.Writer
	n     int64
	limit int64
}

var errExportTooLarge = errors.New("export too large")

func (c *countingWriter) Write(p []byte) (int, error) {
	if c.limit > 0 && c.n+int64(len(p)) > c.limit {
		return 0, errExportTooLarge
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeArchive writes the export of g and its subgroups to path, each
// relation through a file in work (so nothing is held in memory), and
// returns the archive's size.
func (s *Service) writeArchive(ctx context.Context, root model.Group, work, path string, limit int64) (int64, error) {
	tree, err := s.subtree(ctx, root)
	if err != nil {
		return 0, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cw := &countingWriter{w: f, limit: limit}
	w := importexport.NewWriter(cw)
	w.SetTime(s.db.Now())
	fail := func(err error) (int64, error) {
		if errors.Is(err, errExportTooLarge) {
			return 0, tasks.Permanent{Err: fmt.Errorf("the export is larger than max_export_size (%d MiB)", limit>>20)}
		}
		return 0, err
	}
	for _, file := range []struct{ name, content string }{
		{"VERSION", Version}, {"GITLAB_VERSION", s.cfg.Version}, {"GITLAB_REVISION", s.cfg.Revision},
	} {
		if err := w.Bytes(file.name, []byte(file.content)); err != nil {
			return fail(err)
		}
	}
	var ids strings.Builder
	for _, g := range tree {
		ids.WriteString(strconv.FormatInt(g.ID, 10) + "\n")
	}
	if err := w.Bytes(treeDir+"/_all.ndjson", []byte(ids.String())); err != nil {
		return fail(err)
	}
	for _, g := range tree {
		if err := s.writeGroup(ctx, w, g, work); err != nil {
			return fail(err)
		}
	}
	if err := w.Close(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return 0, err
	}
	return cw.n, f.Close()
}

// subtree is root and its descendants in pre-order (parents first,
// siblings by id).
func (s *Service) subtree(ctx context.Context, root model.Group) ([]model.Group, error) {
	ids, err := s.db.GroupIDsInTree(ctx, root.Traversal)
	if err != nil {
		return nil, err
	}
	children := map[int64][]model.Group{}
	for _, id := range ids {
		if id == root.ID {
			continue
		}
		g, err := s.db.GroupByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return nil, err
		}
		children[g.ParentID] = append(children[g.ParentID], g)
	}
	var out []model.Group
	var walk func(g model.Group)
	walk = func(g model.Group) {
		out = append(out, g)
		kids := children[g.ID]
		slices.SortFunc(kids, func(a, b model.Group) int { return int(a.ID - b.ID) })
		for _, k := range kids {
			walk(k)
		}
	}
	walk(root)
	return out, nil
}

// GitLab's numbers of a group's creation levels.
var (
	projectCreationNumbers  = map[string]int{"noone": 0, "maintainer": 1, "developer": 2, "administrator": 3, "owner": 4}
	subgroupCreationNumbers = map[string]int{"owner": 0, "maintainer": 1}
)

// writeGroup adds one group's attributes, relations and wiki.
func (s *Service) writeGroup(ctx context.Context, w *importexport.Writer, g model.Group, work string) error {
	attrs := map[string]any{
		"id": g.ID, "name": g.Name, "path": g.Path, "description": g.Description, "visibility_level": levelOf(g.Visibility),
		"parent_id": nullID(g.ParentID), "avatar": map[string]any{"url": nil}, "membership_lock": false,
		"share_with_group_lock": g.Settings.ShareWithGroupLock, "request_access_enabled": g.Settings.RequestAccessEnabled,
		"require_two_factor_authentication": g.Settings.RequireTwoFactorAuthentication,
		"two_factor_grace_period":           g.Settings.TwoFactorGracePeriod, "lfs_enabled": g.Settings.LFSEnabled,
		"project_creation_level":  projectCreationNumbers[g.Settings.ProjectCreationLevel],
		"subgroup_creation_level": subgroupCreationNumbers[g.Settings.SubgroupCreationLevel],
		"auto_devops_enabled":     g.Settings.AutoDevopsEnabled, "emails_disabled": g.Settings.EmailsDisabled,
		"mentions_disabled": g.Settings.MentionsDisabled, "default_branch_protection": g.Settings.DefaultBranchProtection,
	}
	b, err := json.Marshal(attrs)
	if err != nil {
		return err
	}
	if err := w.Bytes(fmt.Sprintf("%s/%d.json", treeDir, g.ID), b); err != nil {
		return err
	}
	for _, rel := range []struct {
		name  string
		write func(enc *json.Encoder) error
	}{
		{"milestones", func(enc *json.Encoder) error { return s.writeMilestones(ctx, enc, g) }},
		{"badges", func(enc *json.Encoder) error { return s.writeBadges(ctx, enc, g) }},
		{"labels", func(enc *json.Encoder) error { return s.writeLabels(ctx, enc, g) }},
		{"boards", func(enc *json.Encoder) error { return s.writeBoards(ctx, enc, g) }},
		{"members", func(enc *json.Encoder) error { return s.writeMembers(ctx, enc, g) }},
	} {
		if err := addRelation(w, work, relationName(g.ID, rel.name), rel.write); err != nil {
			return fmt.Errorf("export %s of group %d: %w", rel.name, g.ID, err)
		}
	}
	repo, err := s.storages.Open(g.RepositoryStorage, gitrepo.GroupWikiPath(g.ID))
	if err != nil {
		return err
	}
	bundle := filepath.Join(work, "wiki.bundle")
	defer os.Remove(bundle)
	ok, err := repo.WriteBundle(ctx, bundle)
	if err != nil || !ok {
		return err
	}
	return w.FromDisk(fmt.Sprintf("%s/%d.wiki.bundle", wikiDir, g.ID), bundle)
}

// addRelation writes one relation file through work and adds it as name.
func addRelation(w *importexport.Writer, work, name string, write func(enc *json.Encoder) error) error {
	tmp := filepath.Join(work, "relation.ndjson")
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	enc := json.NewEncoder(f)
	enc.SetEscapeHTML(false)
	if err := write(enc); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return w.FromDisk(name, tmp)
}

func nullID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// pageSize is how many records an export reads at once.
const pageSize = 500

func (s *Service) writeMilestones(ctx context.Context, enc *json.Encoder, g model.Group) error {
	return pages(func(after int64) ([]model.Milestone, error) { return s.db.GroupMilestones(ctx, g.ID, after, pageSize) },
		func(m model.Milestone) int64 { return m.ID },
		func(m model.Milestone) error {
			return enc.Encode(milestoneRecord{ID: m.ID, IID: m.IID, Title: m.Title, Description: m.Description, State: m.State,
				DueDate: strPtr(m.DueDate), StartDate: strPtr(m.StartDate), GroupID: &g.ID, CreatedAt: timePtr(m.CreatedAt),
				UpdatedAt: timePtr(m.UpdatedAt)})
		})
}

// pages reads a relation a page at a time by id (read gives the records
// after an id, at most pageSize) and writes each record.
func pages[T any](read func(after int64) ([]T, error), id func(T) int64, write func(T) error) error {
	var after int64
	for {
		list, err := read(after)
		if err != nil {
			return err
		}
		for _, r := range list {
			if err := write(r); err != nil {
				return err
			}
			after = id(r)
		}
		if len(list) < pageSize {
			return nil
		}
	}
}

func (s *Service) writeBadges(ctx context.Context, enc *json.Encoder, g model.Group) error {
	page := model.Page{Keyset: true, PerPage: pageSize}
	for {
		list, info, err := s.db.ListBadges(ctx, store.BadgeFilter{GroupIDs: []int64{g.ID}}, page)
		if err != nil {
			return err
		}
		for _, b := range list {
			if err := enc.Encode(badgeRecord{ID: b.ID, Name: b.Name, LinkURL: b.LinkURL, ImageURL: b.ImageURL, GroupID: &g.ID,
				Type: "GroupBadge", CreatedAt: timePtr(b.CreatedAt), UpdatedAt: timePtr(b.UpdatedAt)}); err != nil {
				return err
			}
		}
		if !info.HasMore {
			return nil
		}
		page.Cursor = info.NextCursor
	}
}

func labelOf(l model.Label, groupID int64) labelRecord {
	return labelRecord{ID: l.ID, Title: l.Title, Color: l.Color, Description: strPtr(l.Description), GroupID: &groupID,
		Type: "GroupLabel", CreatedAt: timePtr(l.CreatedAt), UpdatedAt: timePtr(l.UpdatedAt), Priorities: json.RawMessage("[]")}
}

func (s *Service) writeLabels(ctx context.Context, enc *json.Encoder, g model.Group) error {
	return pages(func(after int64) ([]model.Label, error) { return s.db.GroupLabels(ctx, g.ID, after, pageSize) },
		func(l model.Label) int64 { return l.ID },
		func(l model.Label) error { return enc.Encode(labelOf(l, g.ID)) })
}

func (s *Service) writeBoards(ctx context.Context, enc *json.Encoder, g model.Group) error {
	return pages(func(after int64) ([]model.Board, error) { return s.db.GroupBoards(ctx, g.ID, after, pageSize) },
		func(b model.Board) int64 { return b.ID },
		func(b model.Board) error {
			r := boardRecord{ID: b.ID, Name: b.Name, GroupID: &g.ID, HideBacklogList: b.HideBacklogList, HideClosedList: b.HideClosedList,
				CreatedAt: timePtr(b.CreatedAt), UpdatedAt: timePtr(b.UpdatedAt), Lists: []listRecord{}}
			for _, l := range b.Lists {
				lr := listRecord{ID: l.ID, BoardID: b.ID, ListType: l.ListType}
				if l.ListType == model.ListLabel {
					pos, labelID, label := l.Position, l.Label.ID, labelOf(l.Label, l.Label.GroupID)
					lr.Position, lr.LabelID, lr.Label = &pos, &labelID, &label
				}
				r.Lists = append(r.Lists, lr)
			}
			return enc.Encode(r)
		})
}

func (s *Service) writeMembers(ctx context.Context, enc *json.Encoder, g model.Group) error {
	page := model.Page{Keyset: true, PerPage: pageSize}
	pending := false
	for {
		list, info, err := s.db.ListMembers(ctx, model.SourceNamespace, g.ID, store.MemberFilter{Pending: &pending}, page)
		if err != nil {
			return err
		}
		for _, m := range list {
			r := memberRecord{ID: m.ID, AccessLevel: int(m.AccessLevel), SourceID: g.ID, SourceType: model.SourceNamespace,
				UserID: m.UserID, NotificationLevel: 3, ExpiresAt: strPtr(m.ExpiresAt), CreatedByID: m.CreatedByID,
				CreatedAt: timePtr(m.CreatedAt), UpdatedAt: timePtr(m.UpdatedAt),
				User: memberUser{ID: m.UserID, PublicEmail: strPtr(m.User.PublicEmail), Username: m.User.Username}}
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		if !info.HasMore {
			return nil
		}
		page.Cursor = info.NextCursor
	}
}
