package web

import (
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/repofiles"
)

// commitsPerPage is the length of a history's pages.
const commitsPerPage = 40

// commitItem is a commit as a history or a branch list shows it.
type commitItem struct {
	ID, Short, Title, Author, URL string
	When, Date, Ago               string
}

func commitItemOf(p model.Project, c repofiles.Commit) commitItem {
	id := string(c.ID)
	when := c.Committer.When
	return commitItem{ID: id, Short: id[:min(8, len(id))], Title: c.Title(), Author: c.Author.Name,
		URL: "/" + p.FullPath() + "/-/commit/" + url.PathEscape(id), When: when.UTC().Format("2006-01-02T15:04:05Z"),
		Date: when.UTC().Format("Jan 2, 2006"), Ago: ago(when)}
}

// refPageCrumbs are the project's crumbs and the page's name.
func refPageCrumbs(p model.Project, name string) []crumb {
	return append(projectCrumbs(p), crumb{Name: name})
}

// commitsBody is the data of a history page.
type commitsBody struct {
	projectHead
	Ref, Path  string
	Commits    []commitItem
	Page       int
	Prev, Next string
}

// commits is /-/commits/<ref>/<path>: the history of a ref, or of one
// path at it, a page at a time.
func (h *Handler) commits(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	n, ok := h.pageNumber(w, r, a)
	if !ok {
		return
	}
	if rest == "" {
		rest = p.DefaultBranch
	}
	ref, file, _, err := h.splitRef(r, a, full, strings.TrimSuffix(rest, "/"))
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	cs, info, err := h.Files.Commits(r.Context(), a, full, repofiles.CommitsInput{RefName: ref, Path: file},
		model.Page{Number: n, PerPage: commitsPerPage})
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	body := commitsBody{projectHead: head(v), Ref: ref, Path: file, Page: n}
	for _, c := range cs {
		body.Commits = append(body.Commits, commitItemOf(p, c.Commit))
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	title := "Commits · " + ref
	if file != "" {
		title += " · " + file
	}
	h.render(w, r, a, http.StatusOK, "commits", view{Title: title + " · " + p.FullName(), Crumbs: refPageCrumbs(p, "Commits"), Body: body})
}

// commitBody is the data of a commit's page.
type commitBody struct {
	projectHead
	Commit                 commitItem
	Message                string // past the title
	AuthorEmail            string
	Committer              string // when not the author
	Parents                []commitItem
	Diff                   diffView
	InlineURL, ParallelURL string
	Additions, Deletions   int
	TreeURL                string
}

// maxDiffFiles bounds the files a commit or compare page lists.
const maxDiffFiles = 1000

// commit is /-/commit/<sha>: the message, author, parents and the diff
// against the first parent (inline, or ?view=parallel side by side).
func (h *Handler) commit(w http.ResponseWriter, r *http.Request, a auth.Actor, full, sha string) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	if sha == "" || len(sha) > 255 || strings.Contains(sha, "..") {
		h.notFound(w, r, a)
		return
	}
	c, err := h.Files.Commit(r.Context(), a, full, sha, false)
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	files, _, err := h.Files.CommitDiff(r.Context(), a, full, string(c.ID), model.Page{Number: 1, PerPage: maxDiffFiles})
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	parallel := r.URL.Query().Get("view") == "parallel"
	item := commitItemOf(p, c.Commit)
	body := commitBody{projectHead: head(v), Commit: item, AuthorEmail: c.Author.Email,
		Diff: buildDiff(files, parallel), InlineURL: item.URL + "?view=inline", ParallelURL: item.URL + "?view=parallel",
		TreeURL: "/" + p.FullPath() + "/-/tree/" + url.PathEscape(string(c.ID))}
	_, msg, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n")
	body.Message = strings.TrimSpace(msg)
	if c.Committer.Name != c.Author.Name {
		body.Committer = c.Committer.Name
	}
	for _, id := range c.ParentIDs {
		body.Parents = append(body.Parents, commitItem{ID: id, Short: id[:min(8, len(id))],
			URL: "/" + p.FullPath() + "/-/commit/" + url.PathEscape(id)})
	}
	body.Additions, body.Deletions = body.Diff.Additions, body.Diff.Deletions
	h.render(w, r, a, http.StatusOK, "commit", view{Title: item.Title + " · " + item.Short + " · " + p.FullName(),
		Crumbs: refPageCrumbs(p, item.Short), Body: body})
}

// branchItem is a branch as the branches page lists it.
type branchItem struct {
	Name, URL, CompareURL string
	Default, Protected    bool
	Commit                commitItem
}

// refsBody is the data of the branches and tags pages.
type refsBody struct {
	projectHead
	Branches   []branchItem
	Tags       []tagItem
	Search     string
	Page       int
	Prev, Next string
}

// refsPerPage is the length of the branch and tag lists' pages.
const refsPerPage = 20

func (h *Handler) refsPage(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) (projectsView projectHead, p model.Project, search string, n int, ok bool) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return projectHead{}, p, "", 0, false
	}
	if rest != "" {
		h.notFound(w, r, a)
		return projectHead{}, p, "", 0, false
	}
	if !v.CanReadCode {
		h.notFound(w, r, a)
		return projectHead{}, p, "", 0, false
	}
	if n, ok = h.pageNumber(w, r, a); !ok {
		return projectHead{}, p, "", 0, false
	}
	search = strings.TrimSpace(r.URL.Query().Get("search"))
	if len(search) > 255 {
		search = search[:255]
	}
	return head(v), v.Project, search, n, true
}

// branches is /-/branches: the branches with the default and protected
// ones marked, each with its last commit.
func (h *Handler) branches(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	ph, p, search, n, ok := h.refsPage(w, r, a, full, rest)
	if !ok {
		return
	}
	bs, info, err := h.Files.Branches(r.Context(), a, full, repofiles.BranchFilter{Search: search},
		model.Page{Number: n, PerPage: refsPerPage})
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	body := refsBody{projectHead: ph, Search: search, Page: n}
	base := "/" + p.FullPath() + "/-/"
	for _, b := range bs {
		it := branchItem{Name: b.Name, URL: base + "tree/" + escapePath(b.Name), Default: b.Default, Protected: b.Protected,
			Commit: commitItemOf(p, b.Commit)}
		if !b.Default && p.DefaultBranch != "" {
			it.CompareURL = base + "compare/" + escapePath(p.DefaultBranch) + "..." + escapePath(b.Name)
		}
		body.Branches = append(body.Branches, it)
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "branches", view{Title: "Branches · " + p.FullName(), Crumbs: refPageCrumbs(p, "Branches"), Body: body})
}

// tagItem is a tag as the tags page lists it.
type tagItem struct {
	Name, URL, Message string
	Commit             commitItem
}

// tags is /-/tags: the tags, newest commit first.
func (h *Handler) tags(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	ph, p, search, n, ok := h.refsPage(w, r, a, full, rest)
	if !ok {
		return
	}
	ts, info, err := h.Files.Tags(r.Context(), a, full, search, "updated", true, model.Page{Number: n, PerPage: refsPerPage})
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	body := refsBody{projectHead: ph, Search: search, Page: n}
	for _, t := range ts {
		body.Tags = append(body.Tags, tagItem{Name: t.Name, URL: "/" + p.FullPath() + "/-/tree/" + escapePath(t.Name),
			Message: strings.TrimSpace(t.Message), Commit: commitItemOf(p, t.Commit)})
	}
	body.Prev, body.Next = pager(r, n, info.HasMore)
	h.render(w, r, a, http.StatusOK, "tags", view{Title: "Tags · " + p.FullName(), Crumbs: refPageCrumbs(p, "Tags"), Body: body})
}

// compareBody is the data of the compare page.
type compareBody struct {
	projectHead
	From, To               string
	Compared               bool
	SameRef                bool
	Commits                []commitItem
	Diff                   diffView
	InlineURL, ParallelURL string
}

// compare is /-/compare/<from>...<to>: the commits of to since the merge
// base with from, and their diff; /-/compare alone (or with ?from= and
// ?to=) is the form that picks them.
func (h *Handler) compare(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, ok := h.projectPage(w, r, a, full)
	if !ok {
		return
	}
	p := v.Project
	self := "/" + p.FullPath() + "/-/compare"
	q := r.URL.Query()
	if rest == "" {
		from, to := q.Get("from"), q.Get("to")
		if from != "" && to != "" && len(from) <= 255 && len(to) <= 255 {
			http.Redirect(w, r, self+"/"+escapePath(from)+"..."+escapePath(to), http.StatusFound)
			return
		}
		body := compareBody{projectHead: head(v), From: p.DefaultBranch}
		h.render(w, r, a, http.StatusOK, "compare", view{Title: "Compare · " + p.FullName(), Crumbs: refPageCrumbs(p, "Compare"), Body: body})
		return
	}
	from, to, ok := strings.Cut(rest, "...")
	if !ok || from == "" || to == "" || len(rest) > 512 || strings.HasPrefix(from, "-") || strings.HasPrefix(to, "-") {
		h.notFound(w, r, a)
		return
	}
	cmp, err := h.Files.Compare(r.Context(), a, full, from, to, false, "")
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	parallel := q.Get("view") == "parallel"
	body := compareBody{projectHead: head(v), From: from, To: to, Compared: true, SameRef: cmp.SameRef,
		Diff: buildDiff(cmp.Diffs, parallel)}
	if len(cmp.Diffs) > maxDiffFiles {
		body.Diff = buildDiff(cmp.Diffs[:maxDiffFiles], parallel)
		body.Diff.Truncated = true
	}
	here := self + "/" + escapePath(from) + "..." + escapePath(to)
	body.InlineURL, body.ParallelURL = here+"?view=inline", here+"?view=parallel"
	for i := len(cmp.Commits) - 1; i >= 0; i-- {
		body.Commits = append(body.Commits, commitItemOf(p, cmp.Commits[i].Commit))
	}
	h.render(w, r, a, http.StatusOK, "compare", view{Title: from + "..." + to + " · " + p.FullName(), Crumbs: refPageCrumbs(p, "Compare"), Body: body})
}

// blameGroup is a run of lines one commit last changed.
type blameGroup struct {
	Commit commitItem
	Lines  []blameLine
}

type blameLine struct {
	N    int
	Text string
}

// blameBody is the data of a blame page.
type blameBody struct {
	projectHead
	Ref, Path, Name  string
	BlobURL, RawURL  string
	Groups           []blameGroup
	TooLarge, Binary bool
}

// blame is /-/blame/<ref>/<path>: each line of a file with the commit
// that last changed it.
func (h *Handler) blame(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	v, ref, file, f, ok := h.fileAt(w, r, a, full, rest)
	if !ok {
		return
	}
	p := v.Project
	base := "/" + p.FullPath() + "/-/"
	body := blameBody{projectHead: head(v), Ref: ref, Path: file, Name: f.Name,
		BlobURL: base + "blob/" + escapePath(ref) + "/" + escapePath(file), RawURL: base + "raw/" + escapePath(ref) + "/" + escapePath(file)}
	if f.Size > maxBlobView {
		body.TooLarge = true
	} else {
		_, ranges, err := h.Files.Blame(r.Context(), a, full, file, ref, 0, 0)
		if err != nil {
			h.failIn(w, r, a, err)
			return
		}
		n := 0
		for _, rg := range ranges {
			g := blameGroup{Commit: commitItemOf(p, rg.Commit)}
			for _, l := range rg.Lines {
				n++
				g.Lines = append(g.Lines, blameLine{N: n, Text: l})
				if strings.IndexByte(l, 0) >= 0 || !utf8.ValidString(l) {
					body.Binary = true
				}
			}
			body.Groups = append(body.Groups, g)
		}
		if body.Binary {
			body.Groups = nil
		}
	}
	h.render(w, r, a, http.StatusOK, "blame", view{Title: "Blame · " + file + " · " + ref + " · " + p.FullName(),
		Crumbs: pathCrumbs(p, ref, file), Body: body})
}
