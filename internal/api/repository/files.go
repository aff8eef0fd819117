package repository

import (
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/model"
	"quarry/internal/repofiles"
)

// fileHeaders sets the X-Service-* metadata headers (and their X-Gitlab-*
// twins, which clients read) of a file.
func fileHeaders(h http.Header, f repofiles.File) {
	for k, v := range map[string]string{
		"Blob-Id": f.BlobID, "Commit-Id": f.CommitID, "Content-Sha256": f.ContentSHA256, "Encoding": "base64",
		"File-Name": f.Name, "File-Path": f.Path, "Last-Commit-Id": f.LastCommitID, "Ref": f.Ref,
		"Size": strconv.FormatInt(f.Size, 10), "Execute-Filemode": strconv.FormatBool(f.Executable),
	} {
		h.Set("X-Service-"+k, v)
		h.Set("X-Gitlab-"+k, v)
	}
}

// refParam reads the required ref of the files API.
func refParam(p *endpoint.Params) string {
	p.Require("ref")
	ref, _ := p.String("ref")
	if p.Has("ref") && ref == "" {
		p.Fail("ref is empty")
	}
	return ref
}

func (h *Handlers) getFile(c *endpoint.Call) error {
	ref := refParam(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	ctx, project, fp := c.Ctx(), c.Path("id"), c.Path("file_path")
	if c.R.Method == http.MethodHead {
		f, err := h.files.Stat(ctx, c.Actor, project, fp, ref)
		if err != nil {
			return err
		}
		fileHeaders(c.W.Header(), f)
		c.W.Header().Set("Content-Type", "application/json")
		c.W.WriteHeader(http.StatusOK)
		return nil
	}
	f, data, err := h.files.Read(ctx, c.Actor, project, fp, ref)
	if err != nil {
		return err
	}
	fileHeaders(c.W.Header(), f)
	return c.JSON(http.StatusOK, entity.File{FileName: f.Name, FilePath: f.Path, Size: f.Size, Encoding: "base64",
		Content: base64.StdEncoding.EncodeToString(data), ContentSHA256: f.ContentSHA256, Ref: f.Ref, BlobID: f.BlobID,
		CommitID: f.CommitID, LastCommitID: f.LastCommitID, ExecuteFilemode: f.Executable})
}

func (h *Handlers) getRawFile(c *endpoint.Call) error {
	ref, _ := c.P.String("ref")
	if c.R.Method == http.MethodHead {
		f, err := h.files.Stat(c.Ctx(), c.Actor, c.Path("id"), c.Path("file_path"), ref)
		if err != nil {
			return err
		}
		fileHeaders(c.W.Header(), f)
		return c.Stream(f.Name, f.Size, strings.NewReader(""))
	}
	f, rd, err := h.files.OpenRaw(c.Ctx(), c.Actor, c.Path("id"), c.Path("file_path"), ref)
	if err != nil {
		return err
	}
	defer rd.Close()
	fileHeaders(c.W.Header(), f)
	return c.Stream(f.Name, f.Size, rd)
}

func (h *Handlers) getTree(c *endpoint.Call) error {
	p := c.P
	in := repofiles.TreeInput{Dir: p.Value("path"), Ref: p.Value("ref"), Recursive: p.Flag("recursive"), PageToken: p.Value("page_token")}
	mode, _ := p.Enum("pagination", "legacy", "keyset", "none")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	if mode == "none" && !in.Recursive {
		return model.Param(`pagination cannot be "none" unless "recursive" is true`)
	}
	in.All = mode == "none"
	entries, info, err := h.files.Tree(c.Ctx(), c.Actor, c.Path("id"), in, pg)
	if err != nil {
		return err
	}
	out := make([]entity.TreeEntry, len(entries))
	for i, e := range entries {
		out[i] = entity.TreeEntry{ID: e.ID, Name: e.Name, Type: e.Type, Path: e.Path, Mode: e.Mode}
	}
	switch {
	case in.All:
	case pg.Keyset:
		if info.NextCursor != "" {
			c.NextLink(map[string]string{"page_token": info.NextCursor, "pagination": "keyset"})
		}
	default:
		c.Paginate(pg, info)
	}
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getBlob(c *endpoint.Call, raw bool) error {
	b, rd, err := h.files.OpenBlob(c.Ctx(), c.Actor, c.Path("id"), c.Path("sha"))
	if err != nil {
		return err
	}
	defer rd.Close()
	if raw {
		return c.Stream("", b.Size, rd)
	}
	data, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, entity.Blob{Size: b.Size, Encoding: "base64", Content: base64.StdEncoding.EncodeToString(data), SHA: b.SHA})
}

// writeFile serves POST (create), PUT (update) and DELETE of one file.
func (h *Handlers) writeFile(c *endpoint.Call, kind string) error {
	p := c.P
	p.Require("branch")
	if kind != "delete" {
		p.Require("content")
	}
	p.Require("commit_message")
	in := commitInput(p)
	encoding, _ := p.Enum("encoding", "text", "base64")
	content, _ := p.String("content")
	exec := p.BoolPtr("execute_filemode")
	path := c.Path("file_path")
	if last, ok := p.String("last_commit_id"); ok {
		in.LastCommitIDs[path] = last
	}
	if err := p.Err(); err != nil {
		return err
	}
	data, err := repofiles.DecodeContent(content, encoding)
	if err != nil {
		return err
	}
	in.Actions = []repofiles.Action{{Kind: kind, Path: path, Content: data, HasContent: kind != "delete", Executable: exec}}
	if _, err := h.files.CommitActions(c.Ctx(), c.Actor, c.Path("id"), in); err != nil {
		return err
	}
	switch kind {
	case "create":
		return c.JSON(http.StatusCreated, map[string]string{"file_path": in.Actions[0].Path, "branch": in.Branch})
	case "update":
		return c.JSON(http.StatusOK, map[string]string{"file_path": in.Actions[0].Path, "branch": in.Branch})
	}
	return c.NoContent()
}

// commitInput reads the parameters every commit-making endpoint shares.
func commitInput(p *endpoint.Params) repofiles.CommitInput {
	in := repofiles.CommitInput{LastCommitIDs: map[string]string{}}
	in.Branch, _ = p.String("branch")
	in.StartBranch, _ = p.String("start_branch")
	in.Message, _ = p.String("commit_message")
	in.AuthorName, _ = p.String("author_name")
	in.AuthorEmail, _ = p.String("author_email")
	return in
}

func (h *Handlers) blame(c *endpoint.Call) error {
	ref := refParam(c.P)
	start, hasStart := c.P.Int("range[start]")
	end, hasEnd := c.P.Int("range[end]")
	if hasStart != hasEnd {
		c.P.Fail("range[start], range[end] provide all or none of parameters")
	}
	if err := c.P.Err(); err != nil {
		return err
	}
	if hasStart && (start < 1 || end < 1) {
		return model.Param("range[start] is invalid")
	}
	if hasStart && start > end {
		return model.BadRequestRaw("range[start] must be less than or equal to range[end]")
	}
	f, ranges, err := h.files.Blame(c.Ctx(), c.Actor, c.Path("id"), c.Path("file_path"), ref, int(start), int(end))
	if err != nil {
		return err
	}
	fileHeaders(c.W.Header(), f)
	if c.R.Method == http.MethodHead {
		c.W.Header().Set("Content-Type", "application/json")
		c.W.WriteHeader(http.StatusOK)
		return nil
	}
	out := make([]entity.BlameRange, len(ranges))
	for i, r := range ranges {
		b := &out[i]
		b.Commit.ID, b.Commit.ParentIDs, b.Commit.Message = string(r.Commit.ID), r.Commit.ParentIDs, r.Commit.Message
		b.Commit.AuthoredDate, b.Commit.AuthorName, b.Commit.AuthorEmail = entity.Time(r.Commit.Author.When), r.Commit.Author.Name, r.Commit.Author.Email
		b.Commit.CommittedDate, b.Commit.CommitterName, b.Commit.CommitterEmail = entity.Time(r.Commit.Committer.When), r.Commit.Committer.Name, r.Commit.Committer.Email
		b.Lines = r.Lines
	}
	return c.JSON(http.StatusOK, out)
}

// archive streams GET /repository/archive[.format].
func (h *Handlers) archive(c *endpoint.Call, format string) error {
	sha, _ := c.P.String("sha")
	path, _ := c.P.String("path")
	if err := c.P.Err(); err != nil {
		return err
	}
	a, rd, err := h.files.Archive(c.Ctx(), c.Actor, c.Path("id"), sha, format, path, c.ClientIP())
	if err != nil {
		return err
	}
	defer rd.Close()
	hd := c.W.Header()
	ct := "application/octet-stream"
	if format == "zip" {
		ct = "application/zip"
	}
	hd.Set("Content-Type", ct)
	hd.Set("Content-Disposition", `attachment; filename="`+a.Name+`"; filename*=UTF-8''`+url.PathEscape(a.Name))
	hd.Set("Content-Transfer-Encoding", "binary")
	if a.Size > 0 {
		hd.Set("Content-Length", strconv.FormatInt(a.Size, 10))
	}
	c.W.WriteHeader(http.StatusOK)
	// A copy that ends early is a client gone away; the access log shows
	// the bytes sent.
	_, _ = io.Copy(c.W, rd)
	return nil
}
