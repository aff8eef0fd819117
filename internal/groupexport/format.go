package groupexport

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/importexport"
	"quarry/internal/model"
)

// The archive format: GitLab's group export, ndjson layout.
const (
	// Version is the export format version written to VERSION and the
	// only one read (GitLab 15 to 17 write it; older ones differ).
	Version = "0.2.4"
	// treeDir holds the groups: _all.ndjson lists their ids, root
	// first then descendants in pre-order; <id>.json has a group's
	// attributes and <id>/<relation>.ndjson its relations.
	treeDir = "tree/groups"
	// wikiDir holds each group's wiki as <id>.wiki.bundle.
	wikiDir = "repositories"
)

// Bounds on what an archive may hold beyond its unpacked size.
const (
	maxGroups     = 10_000
	maxGroupJSON  = 1 << 20 // one group's attributes
	maxRecordLine = 8 << 20 // one record of a relation (a milestone's description is up to 1 MiB of text)
	maxIDsLine    = 32
)

// The relations an export carries per group; Quarry reads the first
// ones and counts the records of the others as skipped.
var (
	relations        = []string{"milestones", "badges", "labels", "boards", "members"}
	skippedRelations = []string{"namespace_settings", "user_contributions", "epics", "epic_boards", "iterations_cadences", "iterations"}
)

// groupRecord is tree/groups/<id>.json: the group attributes Quarry
// reads (GitLab writes many more; they are ignored).
type groupRecord struct {
	ID                             int64   `json:"id"`
	Name                           string  `json:"name"`
	Path                           string  `json:"path"`
	Description                    *string `json:"description"`
	VisibilityLevel                int     `json:"visibility_level"`
	ParentID                       *int64  `json:"parent_id"`
	RequestAccessEnabled           *bool   `json:"request_access_enabled"`
	ShareWithGroupLock             *bool   `json:"share_with_group_lock"`
	RequireTwoFactorAuthentication *bool   `json:"require_two_factor_authentication"`
	TwoFactorGracePeriod           *int    `json:"two_factor_grace_period"`
	ProjectCreationLevel           *int    `json:"project_creation_level"`
	SubgroupCreationLevel          *int    `json:"subgroup_creation_level"`
	LFSEnabled                     *bool   `json:"lfs_enabled"`
	AutoDevopsEnabled              *bool   `json:"auto_devops_enabled"`
	EmailsDisabled                 *bool   `json:"emails_disabled"`
	EmailsEnabled                  *bool   `json:"emails_enabled"`
	MentionsDisabled               *bool   `json:"mentions_disabled"`
	DefaultBranchProtection        *int    `json:"default_branch_protection"`
	MembershipLock                 bool    `json:"membership_lock"`
}

// labelRecord is a line of labels.ndjson (and a board list's label).
type labelRecord struct {
	ID          int64           `json:"id"`
	Title       string          `json:"title"`
	Color       string          `json:"color"`
	Description *string         `json:"description"`
	GroupID     *int64          `json:"group_id"`
	ProjectID   *int64          `json:"project_id"`
	Template    bool            `json:"template"`
	Type        string          `json:"type"`
	CreatedAt   *time.Time      `json:"created_at,omitempty"`
	UpdatedAt   *time.Time      `json:"updated_at,omitempty"`
	Priorities  json.RawMessage `json:"priorities,omitempty"`
}

// milestoneRecord is a line of milestones.ndjson.
type milestoneRecord struct {
	ID          int64      `json:"id"`
	IID         int64      `json:"iid"`
	Title       string     `json:"title"`
	Description *string    `json:"description"`
	State       string     `json:"state"`
	DueDate     *string    `json:"due_date"`
	StartDate   *string    `json:"start_date"`
	GroupID     *int64     `json:"group_id"`
	ProjectID   *int64     `json:"project_id"`
	CreatedAt   *time.Time `json:"created_at,omitempty"`
	UpdatedAt   *time.Time `json:"updated_at,omitempty"`
}

// badgeRecord is a line of badges.ndjson.
type badgeRecord struct {
	ID        int64      `json:"id"`
	Name      *string    `json:"name"`
	LinkURL   string     `json:"link_url"`
	ImageURL  string     `json:"image_url"`
	GroupID   *int64     `json:"group_id"`
	ProjectID *int64     `json:"project_id"`
	Type      string     `json:"type"`
	CreatedAt *time.Time `json:"created_at,omitempty"`
	UpdatedAt *time.Time `json:"updated_at,omitempty"`
}

// boardRecord is a line of boards.ndjson, with its lists.
type boardRecord struct {
	ID              int64        `json:"id"`
	Name            string       `json:"name"`
	GroupID         *int64       `json:"group_id"`
	ProjectID       *int64       `json:"project_id"`
	HideBacklogList bool         `json:"hide_backlog_list"`
	HideClosedList  bool         `json:"hide_closed_list"`
	CreatedAt       *time.Time   `json:"created_at,omitempty"`
	UpdatedAt       *time.Time   `json:"updated_at,omitempty"`
	Lists           []listRecord `json:"lists"`
}

// listRecord is a board list; GitLab adds the list's board, which is
// ignored on import.
type listRecord struct {
	ID        int64        `json:"id"`
	BoardID   int64        `json:"board_id"`
	ListType  string       `json:"list_type"`
	Position  *int         `json:"position"`
	LabelID   *int64       `json:"label_id"`
	Label     *labelRecord `json:"label,omitempty"`
	CreatedAt *time.Time   `json:"created_at,omitempty"`
	UpdatedAt *time.Time   `json:"updated_at,omitempty"`
}

// memberRecord is a line of members.ndjson.
type memberRecord struct {
	ID                int64      `json:"id"`
	AccessLevel       int        `json:"access_level"`
	SourceID          int64      `json:"source_id"`
	SourceType        string     `json:"source_type"`
	UserID            int64      `json:"user_id"`
	NotificationLevel int        `json:"notification_level"`
	ExpiresAt         *string    `json:"expires_at"`
	CreatedByID       *int64     `json:"created_by_id"`
	CreatedAt         *time.Time `json:"created_at,omitempty"`
	UpdatedAt         *time.Time `json:"updated_at,omitempty"`
	User              memberUser `json:"user"`
}

type memberUser struct {
	ID          int64   `json:"id"`
	PublicEmail *string `json:"public_email"`
	Username    string  `json:"username"`
}

// manifest is what a checked archive holds: its groups in import order
// (parents before children), each with its attributes.
type manifest struct {
	Groups []groupRecord
}

func formatError(format string, args ...any) error {
	return &importexport.FormatError{Reason: fmt.Sprintf(format, args...)}
}

// checkArchive checks the unpacked archive at dir: a VERSION Quarry
// reads, the tree of groups with every group's attributes, parents before
// children, and every relation file valid ndjson. Anything wrong is a
// *importexport.FormatError for the uploader.
func checkArchive(dir string) (manifest, error) {
	var m manifest
	v, err := readSmall(filepath.Join(dir, "VERSION"), 64)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return m, formatError("The archive has no VERSION file: it is not a group export")
	case err != nil:
		return m, err
	}
	if got := strings.TrimSpace(string(v)); got != Version {
		return m, formatError("Import version mismatch: Required %s but was %s", Version, got)
	}
	if _, err := os.Stat(filepath.Join(dir, "tree")); errors.Is(err, os.ErrNotExist) {
		if _, err := os.Stat(filepath.Join(dir, "group.json")); err == nil {
			return m, formatError("The archive is in the legacy JSON format (group.json), which is not supported: export it again from GitLab 13.10 or later")
		}
		return m, formatError("The archive has no tree/ folder: it is not a group export")
	}
	ids, err := readIDs(filepath.Join(dir, treeDir, "_all.ndjson"))
	if err != nil {
		return m, err
	}
	seen := map[int64]bool{}
	siblings := map[string]int64{} // "<parent id> path|name <lower-case value>" → group id
	for i, id := range ids {
		g, err := readGroup(dir, id)
		if err != nil {
			return m, err
		}
		if i > 0 {
			if g.ParentID == nil || !seen[*g.ParentID] {
				return m, formatError("Group %d of the archive comes before its parent", id)
			}
			if err := checkSubgroup(g, siblings); err != nil {
				return m, err
			}
		}
		seen[id] = true
		for _, rel := range append(append([]string{}, relations...), skippedRelations...) {
			err := importexport.Lines(relationPath(dir, id, rel), relationName(id, rel), maxRecordLine,
				func(int, json.RawMessage) error { return nil })
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return m, err
			}
		}
		m.Groups = append(m.Groups, g)
	}
	return m, nil
}

// checkSubgroup refuses a subgroup whose name or path the import could
// not create (the root's come from the request): a format GitLab refuses,
// or one a sibling of the archive has already (ignoring case).
func checkSubgroup(g groupRecord, siblings map[string]int64) error {
	name := strings.TrimSpace(g.Name)
	if !model.ValidGroupName(name) || utf8.RuneCountInString(name) > 255 {
		return formatError("Group %d of the archive has an invalid name %q: it %s", g.ID, name, model.GroupNameMessage)
	}
	if msgs := model.ValidateNamespacePath(g.Path, false); len(msgs) > 0 {
		return formatError("Group %d of the archive has an invalid path %q: it %s", g.ID, g.Path, msgs[0])
	}
	for _, k := range []struct{ attr, value string }{{"path", g.Path}, {"name", name}} {
		key := fmt.Sprintf("%d %s %s", *g.ParentID, k.attr, strings.ToLower(k.value))
		if other, ok := siblings[key]; ok {
			return formatError("Groups %d and %d of the archive have the same parent and the same %s %q", other, g.ID, k.attr, k.value)
		}
		siblings[key] = g.ID
	}
	return nil
}

// readIDs reads _all.ndjson: one group id a line, at least one, at most
// maxGroups, none twice.
func readIDs(path string) ([]int64, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, formatError("The archive has no %s/_all.ndjson: it is not a group export", treeDir)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []int64
	seen := map[int64]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, int64(maxGroups+1)*maxIDsLine))
	sc.Buffer(make([]byte, maxIDsLine), maxIDsLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		id, err := strconv.ParseInt(line, 10, 64)
		if err != nil || id <= 0 {
			return nil, formatError("%s/_all.ndjson line %d is not a group id", treeDir, len(ids)+1)
		}
		if seen[id] {
			return nil, formatError("%s/_all.ndjson lists group %d twice", treeDir, id)
		}
		if len(ids) == maxGroups {
			return nil, formatError("The archive holds more than %d groups", maxGroups)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	if err := sc.Err(); err != nil {
		return nil, formatError("%s/_all.ndjson does not list group ids", treeDir)
	}
	if len(ids) == 0 {
		return nil, formatError("%s/_all.ndjson lists no group", treeDir)
	}
	return ids, nil
}

// readGroup reads and checks tree/groups/<id>.json.
func readGroup(dir string, id int64) (groupRecord, error) {
	var g groupRecord
	name := fmt.Sprintf("%s/%d.json", treeDir, id)
	b, err := readSmall(filepath.Join(dir, filepath.FromSlash(name)), maxGroupJSON)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return g, formatError("The archive has no %s", name)
	case errors.Is(err, errTooBig):
		return g, formatError("%s is larger than %d bytes", name, maxGroupJSON)
	case err != nil:
		return g, err
	}
	if err := json.Unmarshal(b, &g); err != nil {
		return g, formatError("%s is not a group's attributes: %s", name, jsonReason(err))
	}
	g.ID = id
	if strings.TrimSpace(g.Name) == "" || strings.TrimSpace(g.Path) == "" {
		return g, formatError("%s has no name or path", name)
	}
	return g, nil
}

// jsonReason is a decoding failure without Go's type names.
func jsonReason(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("%s has the wrong type", te.Field)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return "invalid JSON"
	}
	return "invalid JSON"
}

var errTooBig = errors.New("file too big")

// readSmall reads a file of at most limit bytes.
func readSmall(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errTooBig
	}
	return b, nil
}

func relationPath(dir string, id int64, rel string) string {
	return filepath.Join(dir, filepath.FromSlash(treeDir), strconv.FormatInt(id, 10), rel+".ndjson")
}

func relationName(id int64, rel string) string {
	return fmt.Sprintf("%s/%d/%s.ndjson", treeDir, id, rel)
}

func wikiBundlePath(dir string, id int64) string {
	return filepath.Join(dir, wikiDir, strconv.FormatInt(id, 10)+".wiki.bundle")
}

// levelOf is GitLab's visibility_level number of v.
func levelOf(v model.Visibility) int {
	switch v {
	case model.Public:
		return 20
	case model.Internal:
		return 10
	}
	return 0
}

// date reads a GitLab date ("2024-01-31", or a timestamp whose date part
// is taken); "" when absent or not a date.
func date(s *string) string {
	if s == nil || len(*s) < 10 {
		return ""
	}
	d := (*s)[:10]
	if _, err := time.Parse(model.DateLayout, d); err != nil {
		return ""
	}
	return d
}
