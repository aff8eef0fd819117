package api

import (
	"bufio"
	"encoding/base64"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"

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
func refParam(p *Params) string {
	p.Require("ref")
	ref, _ := p.String("ref")
	if p.Has("ref") && ref == "" {
		p.fail("ref is empty")
	}
	return ref
}

type fileJSON struct {
	FileName        string `json:"file_name"`
	FilePath        string `json:"file_path"`
	Size            int64  `json:"size"`
	Encoding        string `json:"encoding"`
	Content         string `json:"content"`
	ContentSHA256   string `json:"content_sha256"`
	Ref             string `json:"ref"`
	BlobID          string `json:"blob_id"`
	CommitID        string `json:"commit_id"`
	LastCommitID    string `json:"last_commit_id"`
	ExecuteFilemode bool   `json:"execute_filemode"`
}

func (c *call) getFile() error {
	ref := refParam(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	ctx, project, fp := c.r.Context(), c.r.PathValue("id"), c.r.PathValue("file_path")
	if c.r.Method == http.MethodHead {
		f, _, err := c.s.Files.Stat(ctx, c.actor, project, fp, ref)
		if err != nil {
			return err
		}
		fileHeaders(c.w.Header(), f)
		c.w.Header().Set("Content-Type", "application/json")
		c.w.WriteHeader(http.StatusOK)
		return nil
	}
	f, data, err := c.s.Files.Read(ctx, c.actor, project, fp, ref)
	if err != nil {
		return err
	}
	fileHeaders(c.w.Header(), f)
	return c.json(http.StatusOK, fileJSON{FileName: f.Name, FilePath: f.Path, Size: f.Size, Encoding: "base64",
		Content: base64.StdEncoding.EncodeToString(data), ContentSHA256: f.ContentSHA256, Ref: f.Ref, BlobID: f.BlobID,
		CommitID: f.CommitID, LastCommitID: f.LastCommitID, ExecuteFilemode: f.Executable})
}

// streamBytes sends a stored object: sniffed content type (never HTML, so
// a repository cannot serve script), inline disposition, no caching.
func streamBytes(w http.ResponseWriter, r *http.Request, name string, size int64, rd io.Reader) {
	br := bufio.NewReaderSize(rd, 4096)
	head, _ := br.Peek(512)
	ct := http.DetectContentType(head)
	if strings.HasPrefix(ct, "text/html") || strings.HasPrefix(ct, "text/xml") {
		ct = "text/plain; charset=utf-8"
	}
	if byExt := mime.TypeByExtension(strings.ToLower(path.Ext(name))); strings.HasPrefix(byExt, "image/") && !strings.Contains(byExt, "svg") {
		ct = byExt
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Cache-Control", "no-cache")
	if name != "" {
		h.Set("Content-Disposition", `inline; filename="`+strings.ReplaceAll(name, `"`, "")+`"; filename*=UTF-8''`+url.PathEscape(name))
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	_, _ = io.Copy(w, br)
}

func (c *call) getRawFile() error {
	ref, _ := c.p.String("ref")
	ctx := c.r.Context()
	f, repo, err := c.s.Files.Stat(ctx, c.actor, c.r.PathValue("id"), c.r.PathValue("file_path"), ref)
	if err != nil {
		return err
	}
	fileHeaders(c.w.Header(), f)
	if c.r.Method == http.MethodHead {
		streamBytes(c.w, c.r, f.Name, f.Size, strings.NewReader(""))
		return nil
	}
	rd, err := c.s.Files.Open(ctx, repo, f)
	if err != nil {
		return err
	}
	defer rd.Close()
	streamBytes(c.w, c.r, f.Name, f.Size, rd)
	return nil
}

type treeEntryJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
	Mode string `json:"mode"`
}

func (c *call) getTree() error {
	p := c.p
	dir, _ := p.String("path")
	ref, _ := p.String("ref")
	recursive := p.Flag("recursive")
	mode, _ := p.Enum("pagination", "legacy", "keyset", "none")
	token, _ := p.String("page_token")
	pg, err := c.page()
	if err != nil {
		return err
	}
	if mode == "none" && !recursive {
		return model.Param(`pagination cannot be "none" unless "recursive" is true`)
	}
	entries, err := c.s.Files.Tree(c.r.Context(), c.actor, c.r.PathValue("id"), dir, ref, recursive)
	if err != nil {
		return err
	}
	conv := func(list []repofiles.TreeEntry) []treeEntryJSON {
		out := make([]treeEntryJSON, len(list))
		for i, e := range list {
			out[i] = treeEntryJSON{ID: e.ID, Name: e.Name, Type: e.Type, Path: e.Path, Mode: e.Mode}
		}
		return out
	}
	switch mode {
	case "none":
		return c.json(http.StatusOK, conv(entries))
	case "keyset":
		start := 0
		if token != "" {
			start = -1
			for i, e := range entries {
				if e.Path == token || e.ID == token {
					start = i + 1
					break
				}
			}
			if start < 0 {
				return model.Param("page_token is invalid")
			}
		}
		end := min(start+pg.PerPage, len(entries))
		page := entries[start:end]
		if end < len(entries) {
			c.w.Header().Set("Link", `<`+c.linkURL(map[string]string{"page_token": page[len(page)-1].ID, "pagination": "keyset"})+`>; rel="next"`)
		}
		return c.json(http.StatusOK, conv(page))
	}
	start := min(pg.Offset(), len(entries))
	end := min(start+pg.PerPage, len(entries))
	c.paginate(pg, model.PageInfo{Total: len(entries), TotalKnown: true, HasMore: end < len(entries)})
	return c.json(http.StatusOK, conv(entries[start:end]))
}

type blobJSON struct {
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
	SHA      string `json:"sha"`
}

func (c *call) getBlob(raw bool) error {
	b, rd, err := c.s.Files.OpenBlob(c.r.Context(), c.actor, c.r.PathValue("id"), c.r.PathValue("sha"))
	if err != nil {
		return err
	}
	defer rd.Close()
	if raw {
		streamBytes(c.w, c.r, "", b.Size, rd)
		return nil
	}
	data, err := io.ReadAll(rd)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, blobJSON{Size: b.Size, Encoding: "base64", Content: base64.StdEncoding.EncodeToString(data), SHA: b.SHA})
}

// writeFile serves POST (create), PUT (update) and DELETE of one file.
func (c *call) writeFile(kind string) error {
	p := c.p
	p.Require("branch")
	if kind != "delete" {
		p.Require("content")
	}
	p.Require("commit_message")
	in := commitInput(p)
	encoding, _ := p.Enum("encoding", "text", "base64")
	content, _ := p.String("content")
	exec := p.BoolPtr("execute_filemode")
	path := c.r.PathValue("file_path")
	if last, ok := p.String("last_commit_id"); ok {
		in.LastCommitIDs[path] = last
	}
	if err := p.Err(); err != nil {
		return err
	}
	data, err := decodeContent(content, encoding)
	if err != nil {
		return err
	}
	in.Actions = []repofiles.Action{{Kind: kind, Path: path, Content: data, HasContent: kind != "delete", Executable: exec}}
	if _, err := c.s.Files.CommitActions(c.r.Context(), c.actor, c.r.PathValue("id"), in); err != nil {
		return err
	}
	switch kind {
	case "create":
		return c.json(http.StatusCreated, map[string]string{"file_path": in.Actions[0].Path, "branch": in.Branch})
	case "update":
		return c.json(http.StatusOK, map[string]string{"file_path": in.Actions[0].Path, "branch": in.Branch})
	}
	return c.noContent()
}

// decodeContent turns a file's content parameter into bytes per its
// encoding ("text" or "base64").
func decodeContent(content, encoding string) ([]byte, error) {
	if encoding != "base64" {
		return []byte(content), nil
	}
	data, err := base64.StdEncoding.DecodeString(content)
	if err != nil {
		return nil, model.BadRequest("content is not valid Base64")
	}
	return data, nil
}

// clientIP is the caller's address, for limits on anonymous requests.
func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// commitInput reads the parameters every commit-making endpoint shares.
func commitInput(p *Params) repofiles.CommitInput {
	in := repofiles.CommitInput{LastCommitIDs: map[string]string{}}
	in.Branch, _ = p.String("branch")
	in.StartBranch, _ = p.String("start_branch")
	in.Message, _ = p.String("commit_message")
	in.AuthorName, _ = p.String("author_name")
	in.AuthorEmail, _ = p.String("author_email")
	return in
}
