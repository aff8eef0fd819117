package api

import (
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"

	"quarry/internal/model"
	"quarry/internal/repofiles"
)

type commitJSON struct {
	ID               string              `json:"id"`
	ShortID          string              `json:"short_id"`
	CreatedAt        apiTime             `json:"created_at"`
	ParentIDs        []string            `json:"parent_ids"`
	Title            string              `json:"title"`
	Message          string              `json:"message"`
	AuthorName       string              `json:"author_name"`
	AuthorEmail      string              `json:"author_email"`
	AuthoredDate     apiTime             `json:"authored_date"`
	CommitterName    string              `json:"committer_name"`
	CommitterEmail   string              `json:"committer_email"`
	CommittedDate    apiTime             `json:"committed_date"`
	Trailers         map[string]string   `json:"trailers"`
	ExtendedTrailers map[string][]string `json:"extended_trailers"`
	WebURL           string              `json:"web_url"`
}

type commitDetailJSON struct {
	commitJSON
	Stats        *statsJSON `json:"stats,omitempty"`
	Status       *string    `json:"status"`
	ProjectID    int64      `json:"project_id"`
	LastPipeline *struct{}  `json:"last_pipeline"`
}

type statsJSON struct {
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
	Total     int `json:"total"`
}

// trailers gives a message's trailers as the commit entity shows them:
// the last value of each, and every value.
func trailers(msg string) (map[string]string, map[string][]string) {
	all := repofiles.ParseTrailers(msg)
	one := make(map[string]string, len(all))
	for k, vs := range all {
		one[k] = vs[len(vs)-1]
	}
	return one, all
}

func (s *Server) commit(c repofiles.Commit, webPath string) commitJSON {
	short := string(c.ID)
	if len(short) > 8 {
		short = short[:8]
	}
	tr, ext := trailers(c.Message)
	return commitJSON{ID: string(c.ID), ShortID: short, CreatedAt: apiTime(c.Committer.When), ParentIDs: c.ParentIDs, Title: c.Title(),
		Message: c.Message, AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, AuthoredDate: apiTime(c.Author.When),
		CommitterName: c.Committer.Name, CommitterEmail: c.Committer.Email, CommittedDate: apiTime(c.Committer.When),
		Trailers: tr, ExtendedTrailers: ext, WebURL: s.externalURL + webPath}
}

func (s *Server) commitDetail(v repofiles.CommitView) commitDetailJSON {
	j := commitDetailJSON{commitJSON: s.commit(v.Commit, v.WebURL), ProjectID: v.ProjectID}
	if v.Stats != nil {
		j.Stats = &statsJSON{Additions: v.Stats.Additions, Deletions: v.Stats.Deletions, Total: v.Stats.Additions + v.Stats.Deletions}
	}
	return j
}

type branchJSON struct {
	Name               string     `json:"name"`
	Merged             bool       `json:"merged"`
	Protected          bool       `json:"protected"`
	Default            bool       `json:"default"`
	DevelopersCanPush  bool       `json:"developers_can_push"`
	DevelopersCanMerge bool       `json:"developers_can_merge"`
	CanPush            bool       `json:"can_push"`
	WebURL             string     `json:"web_url"`
	Commit             commitJSON `json:"commit"`
}

func (c *call) branch(b repofiles.Branch, projectPath string) branchJSON {
	return branchJSON{Name: b.Name, Merged: b.Merged, Protected: b.Protected, Default: b.Default, DevelopersCanPush: b.DevelopersCanPush,
		DevelopersCanMerge: b.DevelopersCanMerge, CanPush: b.CanPush, WebURL: c.s.externalURL + "/" + projectPath + "/-/tree/" + b.Name,
		Commit: c.s.commit(b.Commit, "/"+projectPath+"/-/commit/"+string(b.Commit.ID))}
}

// projectPath is the full path of the request's project, for web links.
func (c *call) projectPath() (string, error) {
	p, _, err := c.s.Projects.Resolve(c.r.Context(), c.actor, c.r.PathValue("id"))
	return p.FullPath(), err
}

func (c *call) listBranches() error {
	search, _ := c.p.String("search")
	regex, _ := c.p.String("regex")
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, err := c.s.Files.Branches(c.r.Context(), c.actor, c.r.PathValue("id"), search, regex)
	if err != nil {
		return err
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	out := make([]branchJSON, len(list))
	for i := range list {
		out[i] = c.branch(list[i], path)
	}
	return pageOf(c, pg, out)
}

func (c *call) getBranch() error {
	b, err := c.s.Files.Branch(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("branch"))
	if err != nil {
		return err
	}
	if c.r.Method == http.MethodHead {
		c.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.branch(b, path))
}

func (c *call) createBranch() error {
	c.p.Require("branch", "ref")
	name, _ := c.p.String("branch")
	ref, _ := c.p.String("ref")
	if err := c.p.Err(); err != nil {
		return err
	}
	b, err := c.s.Files.CreateBranch(c.r.Context(), c.actor, c.r.PathValue("id"), name, ref)
	if err != nil {
		return err
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, c.branch(b, path))
}

func (c *call) deleteBranch() error {
	if err := c.s.Files.DeleteBranch(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("branch")); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) deleteMergedBranches() error {
	if err := c.s.Files.DeleteMergedBranches(c.r.Context(), c.actor, c.r.PathValue("id")); err != nil {
		return err
	}
	return c.json(http.StatusAccepted, messageBody{Message: "202 Accepted"})
}

type tagJSON struct {
	Name      string     `json:"name"`
	Message   string     `json:"message"`
	Target    string     `json:"target"`
	Commit    commitJSON `json:"commit"`
	Release   *struct{}  `json:"release"`
	Protected bool       `json:"protected"`
	CreatedAt *apiTime   `json:"created_at"`
}

func (c *call) tag(t repofiles.Tag, path string) tagJSON {
	j := tagJSON{Name: t.Name, Message: t.Message, Target: string(t.Target), Commit: c.s.commit(t.Commit, "/"+path+"/-/commit/"+string(t.Commit.ID))}
	if !t.Tagger.When.IsZero() {
		ts := apiTime(t.Tagger.When)
		j.CreatedAt = &ts
	}
	return j
}

func (c *call) listTags() error {
	search, _ := c.p.String("search")
	orderBy := "updated"
	if v, ok := c.p.Enum("order_by", "name", "updated", "version"); ok {
		orderBy = v
	}
	desc := true
	if v, ok := c.p.Enum("sort", "asc", "desc"); ok {
		desc = v == "desc"
	}
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, err := c.s.Files.Tags(c.r.Context(), c.actor, c.r.PathValue("id"), search, orderBy, desc)
	if err != nil {
		return err
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	out := make([]tagJSON, len(list))
	for i := range list {
		out[i] = c.tag(list[i], path)
	}
	return pageOf(c, pg, out)
}

func (c *call) getTag() error {
	t, err := c.s.Files.Tag(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("tag"))
	if err != nil {
		return err
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.tag(t, path))
}

func (c *call) createTag() error {
	c.p.Require("tag_name", "ref")
	name, _ := c.p.String("tag_name")
	ref, _ := c.p.String("ref")
	msg, _ := c.p.String("message")
	if err := c.p.Err(); err != nil {
		return err
	}
	t, err := c.s.Files.CreateTag(c.r.Context(), c.actor, c.r.PathValue("id"), name, ref, msg)
	if err != nil {
		return err
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, c.tag(t, path))
}

func (c *call) deleteTag() error {
	if err := c.s.Files.DeleteTag(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("tag")); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) listCommits() error {
	p := c.p
	var in repofiles.CommitsInput
	in.RefName, _ = p.String("ref_name")
	in.Path, _ = p.String("path")
	in.Author, _ = p.String("author")
	in.Since, _ = p.Time("since")
	in.Until, _ = p.Time("until")
	in.All = p.Flag("all")
	in.FirstParent = p.Flag("first_parent")
	in.WithStats = p.Flag("with_stats")
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, total, err := c.s.Files.Commits(c.r.Context(), c.actor, c.r.PathValue("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]commitDetailJSON, len(list))
	for i := range list {
		out[i] = c.s.commitDetail(list[i])
	}
	c.paginate(pg, model.PageInfo{Total: total, TotalKnown: true, HasMore: pg.Offset()+len(list) < total})
	return c.json(http.StatusOK, out)
}

func (c *call) getCommit() error {
	stats := true
	if b, ok := c.p.Bool("stats"); ok {
		stats = b
	}
	v, err := c.s.Files.Commit(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("sha"), stats)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.commitDetail(v))
}

type diffJSON struct {
	Diff          string  `json:"diff"`
	Collapsed     bool    `json:"collapsed"`
	TooLarge      bool    `json:"too_large"`
	NewPath       string  `json:"new_path"`
	OldPath       string  `json:"old_path"`
	AMode         *string `json:"a_mode"`
	BMode         string  `json:"b_mode"`
	NewFile       bool    `json:"new_file"`
	RenamedFile   bool    `json:"renamed_file"`
	DeletedFile   bool    `json:"deleted_file"`
	GeneratedFile bool    `json:"generated_file"`
}

func diffs(files []repofiles.FileDiff) []diffJSON {
	out := make([]diffJSON, len(files))
	for i, f := range files {
		out[i] = diffJSON{Diff: f.Diff, TooLarge: f.TooLarge, Collapsed: f.TooLarge, NewPath: f.NewPath, OldPath: f.OldPath, AMode: strPtr(f.AMode), BMode: f.BMode,
			NewFile: f.NewFile, RenamedFile: f.RenamedFile, DeletedFile: f.DeletedFile}
	}
	return out
}

func (c *call) commitDiff() error {
	pg, err := c.page()
	if err != nil {
		return err
	}
	files, err := c.s.Files.CommitDiff(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("sha"))
	if err != nil {
		return err
	}
	return pageOf(c, pg, diffs(files))
}

type commitRefJSON struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// commitRefs serves GET /repository/commits/:sha/refs.
func (c *call) commitRefs() error {
	kind := "all"
	if v, ok := c.p.Enum("type", "branch", "tag", "all"); ok {
		kind = v
	}
	pg, err := c.page()
	if err != nil {
		return err
	}
	refs, err := c.s.Files.CommitRefs(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("sha"), kind)
	if err != nil {
		return err
	}
	out := make([]commitRefJSON, len(refs))
	for i, r := range refs {
		out[i] = commitRefJSON{Type: r.Type, Name: r.Name}
	}
	return pageOf(c, pg, out)
}

// createCommit serves POST /repository/commits with several actions.
func (c *call) createCommit() error {
	p := c.p
	p.Require("branch", "commit_message", "actions")
	in := commitInput(p)
	stats := true
	if b, ok := p.Bool("stats"); ok {
		stats = b
	}
	raw := p.Objects("actions")
	for _, a := range raw {
		var act struct {
			Action          string  `json:"action"`
			FilePath        string  `json:"file_path"`
			PreviousPath    string  `json:"previous_path"`
			Content         *string `json:"content"`
			Encoding        string  `json:"encoding"`
			LastCommitID    string  `json:"last_commit_id"`
			ExecuteFilemode *bool   `json:"execute_filemode"`
		}
		if err := jsonUnmarshal(a, &act); err != nil {
			p.fail("actions is invalid")
			break
		}
		switch act.Action {
		case "create", "update", "delete", "move", "chmod":
		default:
			p.fail("actions[action] does not have a valid value")
		}
		if act.FilePath == "" {
			p.fail("actions[file_path] is missing")
		}
		content := []byte{}
		if act.Content != nil {
			d, err := decodeContent(*act.Content, act.Encoding)
			if err != nil {
				return err
			}
			content = d
		}
		in.Actions = append(in.Actions, repofiles.Action{Kind: act.Action, Path: act.FilePath, PreviousPath: act.PreviousPath,
			Content: content, HasContent: act.Content != nil || act.Action == "create" || act.Action == "update", Executable: act.ExecuteFilemode})
		if act.LastCommitID != "" {
			in.LastCommitIDs[act.FilePath] = act.LastCommitID
		}
	}
	if err := p.Err(); err != nil {
		return err
	}
	if len(in.Actions) == 0 {
		return model.Param("actions is empty")
	}
	v, err := c.s.Files.CreateCommit(c.r.Context(), c.actor, c.r.PathValue("id"), in, stats)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, c.s.commitDetail(v))
}

type compareJSON struct {
	Commit         *commitJSON  `json:"commit"`
	Commits        []commitJSON `json:"commits"`
	Diffs          []diffJSON   `json:"diffs"`
	CompareTimeout bool         `json:"compare_timeout"`
	CompareSameRef bool         `json:"compare_same_ref"`
	WebURL         string       `json:"web_url"`
}

func (c *call) compare() error {
	p := c.p
	p.Require("from", "to")
	from, _ := p.String("from")
	to, _ := p.String("to")
	straight := p.Flag("straight")
	fromProject := ""
	if id, ok := p.Int("from_project_id"); ok {
		fromProject = strconv.FormatInt(id, 10)
	}
	if err := p.Err(); err != nil {
		return err
	}
	cmp, err := c.s.Files.Compare(c.r.Context(), c.actor, c.r.PathValue("id"), from, to, straight, fromProject)
	if err != nil {
		return err
	}
	path, err := c.projectPath()
	if err != nil {
		return err
	}
	out := compareJSON{Commits: []commitJSON{}, Diffs: diffs(cmp.Diffs), CompareTimeout: cmp.Timeout, CompareSameRef: cmp.SameRef,
		WebURL: fmt.Sprintf("%s/%s/-/compare/%s...%s", c.s.externalURL, path, cmp.From, cmp.To)}
	for _, v := range cmp.Commits {
		out.Commits = append(out.Commits, c.s.commit(v.Commit, v.WebURL))
	}
	if n := len(out.Commits); n > 0 {
		last := out.Commits[n-1]
		out.Commit = &last
	}
	if out.Diffs == nil {
		out.Diffs = []diffJSON{}
	}
	return c.json(http.StatusOK, out)
}

func (c *call) mergeBase() error {
	c.p.Require("refs")
	refs, _ := c.p.Strings("refs")
	if err := c.p.Err(); err != nil {
		return err
	}
	v, err := c.s.Files.MergeBase(c.r.Context(), c.actor, c.r.PathValue("id"), refs)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.commit(v.Commit, v.WebURL))
}

type contributorJSON struct {
	Name      string `json:"name"`
	Email     string `json:"email"`
	Commits   int    `json:"commits"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
}

func (c *call) contributors() error {
	orderBy := "commits"
	if v, ok := c.p.Enum("order_by", "name", "email", "commits"); ok {
		orderBy = v
	}
	desc := false
	if v, ok := c.p.Enum("sort", "asc", "desc"); ok {
		desc = v == "desc"
	}
	ref, _ := c.p.String("ref")
	pg, err := c.page()
	if err != nil {
		return err
	}
	list, err := c.s.Files.Contributors(c.r.Context(), c.actor, c.r.PathValue("id"), ref, orderBy, desc)
	if err != nil {
		return err
	}
	out := make([]contributorJSON, len(list))
	for i, x := range list {
		out[i] = contributorJSON{Name: x.Name, Email: x.Email, Commits: x.Commits}
	}
	return pageOf(c, pg, out)
}

type blameJSON struct {
	Commit struct {
		ID             string   `json:"id"`
		ParentIDs      []string `json:"parent_ids"`
		Message        string   `json:"message"`
		AuthoredDate   apiTime  `json:"authored_date"`
		AuthorName     string   `json:"author_name"`
		AuthorEmail    string   `json:"author_email"`
		CommittedDate  apiTime  `json:"committed_date"`
		CommitterName  string   `json:"committer_name"`
		CommitterEmail string   `json:"committer_email"`
	} `json:"commit"`
	Lines []string `json:"lines"`
}

func (c *call) blame() error {
	ref := refParam(c.p)
	start, hasStart := c.p.Int("range[start]")
	end, hasEnd := c.p.Int("range[end]")
	if hasStart != hasEnd {
		c.p.fail("range[start], range[end] provide all or none of parameters")
	}
	if err := c.p.Err(); err != nil {
		return err
	}
	if hasStart && (start < 1 || end < 1) {
		return model.Param("range[start] is invalid")
	}
	if hasStart && start > end {
		return model.BadRequestRaw("range[start] must be less than or equal to range[end]")
	}
	f, ranges, err := c.s.Files.Blame(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("file_path"), ref, int(start), int(end))
	if err != nil {
		return err
	}
	fileHeaders(c.w.Header(), f)
	if c.r.Method == http.MethodHead {
		c.w.Header().Set("Content-Type", "application/json")
		c.w.WriteHeader(http.StatusOK)
		return nil
	}
	out := make([]blameJSON, len(ranges))
	for i, r := range ranges {
		b := &out[i]
		b.Commit.ID, b.Commit.ParentIDs, b.Commit.Message = string(r.Commit.ID), r.Commit.ParentIDs, r.Commit.Message
		b.Commit.AuthoredDate, b.Commit.AuthorName, b.Commit.AuthorEmail = apiTime(r.Commit.Author.When), r.Commit.Author.Name, r.Commit.Author.Email
		b.Commit.CommittedDate, b.Commit.CommitterName, b.Commit.CommitterEmail = apiTime(r.Commit.Committer.When), r.Commit.Committer.Name, r.Commit.Committer.Email
		b.Lines = r.Lines
	}
	return c.json(http.StatusOK, out)
}

// archive streams GET /repository/archive[.format].
func (c *call) archive(format string) error {
	sha, _ := c.p.String("sha")
	path, _ := c.p.String("path")
	if err := c.p.Err(); err != nil {
		return err
	}
	a, rd, err := c.s.Files.Archive(c.r.Context(), c.actor, c.r.PathValue("id"), sha, format, path, clientIP(c.r))
	if err != nil {
		return err
	}
	defer rd.Close()
	h := c.w.Header()
	ct := "application/octet-stream"
	if format == "zip" {
		ct = "application/zip"
	}
	h.Set("Content-Type", ct)
	h.Set("Content-Disposition", `attachment; filename="`+a.Name+`"; filename*=UTF-8''`+url.PathEscape(a.Name))
	h.Set("Content-Transfer-Encoding", "binary")
	if a.Size > 0 {
		h.Set("Content-Length", strconv.FormatInt(a.Size, 10))
	}
	c.w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(c.w, rd); err != nil {
		c.s.log.Debug("archive stream ended early", "err", err)
	}
	return nil
}
