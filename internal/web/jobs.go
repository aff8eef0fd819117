package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"html/template"
	"io"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// A job's page: its status, stage, runner and duration, its log (the
// end of it, followed live while the job runs), the forms to retry,
// cancel and play it, and its artifacts to download and browse.

// maxLogView is how much of the end of a log the job's page renders; the
// raw log has all of it.
const maxLogView = 512 << 10

// maxTracePiece is the most of a log one trace.json answer renders.
const maxTracePiece = 256 << 10

// jobBody is the data of a job's page.
type jobBody struct {
	projectHead
	Job                      jobItem
	PipelineURL              string
	PipelineID               int64
	Ref, RefURL              string
	SHA, Short, CommitURL    string
	Title                    string
	Runner                   string
	Queued, Started, Created string
	FailureReason            string
	Retried                  bool
	// The log: its last maxLogView bytes rendered, and where the page
	// follows it from.
	Log          template.HTML
	LogTruncated bool
	HasLog       bool
	RawURL       string
	TraceURL     string
	Offset       int64
	State        string
	Following    bool
	// Artifacts: the archive's size and links, when there is one.
	HasArchive                bool
	ArchiveSize               int64
	DownloadURL, BrowseURL    string
	ArtifactsExpire           string
	MayRetry, MayCancel       bool
	MayPlay                   bool
	RetryURL, CancelURL, Play string
}

// jobsRoute serves /-/jobs (the list), /-/jobs/<id> and what is under
// it.
func (h *Handler) jobsRoute(w http.ResponseWriter, r *http.Request, a auth.Actor, full, rest string) {
	if rest == "" {
		h.jobsList(w, r, a, full)
		return
	}
	idPart, sub, _ := strings.Cut(rest, "/")
	id, ok := pathID(idPart)
	if !ok {
		h.notFound(w, r, a)
		return
	}
	switch {
	case sub == "":
		h.job(w, r, a, full, id)
	case sub == "raw":
		h.jobRaw(w, r, a, full, id)
	case sub == "trace.json":
		h.jobTrace(w, r, a, full, id)
	case sub == "artifacts/download":
		h.artifactsDownload(w, r, a, full, id)
	case sub == "artifacts/browse" || strings.HasPrefix(sub, "artifacts/browse/"):
		h.artifactsBrowse(w, r, a, full, id, strings.Trim(strings.TrimPrefix(sub, "artifacts/browse"), "/"))
	case strings.HasPrefix(sub, "artifacts/file/"):
		http.Redirect(w, r, "/"+full+"/-/jobs/"+idPart+"/artifacts/raw/"+escapePath(strings.TrimPrefix(sub, "artifacts/file/")), http.StatusFound)
	case strings.HasPrefix(sub, "artifacts/raw/"):
		h.artifactRaw(w, r, a, full, id, strings.TrimPrefix(sub, "artifacts/raw/"))
	default:
		h.notFound(w, r, a)
	}
}

// jobPage resolves the project and the job of a job's page, or answers
// the failure (ok false).
func (h *Handler) jobPage(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) (projects.View, ci.JobView, bool) {
	v, err := h.resolveProject(r, a, full)
	if err != nil {
		h.fail(w, r, a, err)
		return projects.View{}, ci.JobView{}, false
	}
	j, err := h.CI.Job(r.Context(), a, full, id)
	if err != nil {
		h.fail(w, r, a, err)
		return projects.View{}, ci.JobView{}, false
	}
	return v, j, true
}

// job is /-/jobs/<id>.
func (h *Handler) job(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) {
	v, j, ok := h.jobPage(w, r, a, full, id)
	if !ok {
		return
	}
	p := v.Project
	ref := ci.RunRef{Ref: j.Ref, Tag: j.Tag}
	may, err := h.CI.MayRunRefs(r.Context(), a, full, []ci.RunRef{ref})
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	mayRun := may[ref]
	base := "/" + p.FullPath() + "/-/"
	self := base + "jobs/" + strconv.FormatInt(j.ID, 10)
	body := jobBody{projectHead: head(v), Job: h.jobItemOf(p, j), PipelineID: j.PipelineID,
		PipelineURL: base + "pipelines/" + strconv.FormatInt(j.PipelineID, 10), Ref: j.Ref,
		SHA: j.SHA, Short: j.SHA[:min(8, len(j.SHA))], FailureReason: string(j.FailureReason), Retried: j.Retried,
		RawURL: self + "/raw", TraceURL: self + "/trace.json", Created: ago(j.CreatedAt),
		RetryURL: self + "/retry", CancelURL: self + "/cancel", Play: self + "/play"}
	if j.Ref != "" {
		if j.Tag {
			body.RefURL = base + "tree/" + escapePath(j.Ref)
		} else {
			body.RefURL = base + "commits/" + escapePath(j.Ref)
		}
	}
	if j.SHA != "" {
		body.CommitURL = base + "commit/" + j.SHA
	}
	if j.Commit != nil && v.CanReadCode {
		body.Title = j.Commit.Title()
	}
	if j.Runner != nil {
		body.Runner = "#" + strconv.FormatInt(j.Runner.ID, 10)
		if j.Runner.Description != "" {
			body.Runner += " (" + j.Runner.Description + ")"
		}
	}
	if j.QueuedAt != nil && j.StartedAt != nil {
		body.Queued = ciDuration(j.QueuedAt, j.StartedAt, h.Now())
	}
	for _, art := range j.Artifacts {
		if art.FileType == "archive" {
			body.HasArchive, body.ArchiveSize = true, art.Size
			body.DownloadURL, body.BrowseURL = self+"/artifacts/download", self+"/artifacts/browse"
			if art.ExpireAt != nil {
				body.ArtifactsExpire = art.ExpireAt.UTC().Format("Jan 2, 2006 15:04 UTC")
			}
		}
	}
	body.MayRetry, body.MayCancel, body.MayPlay = jobActions(j.Job, mayRun)
	complete := j.Status.Completed()
	if err := h.pageLog(r, a, full, id, complete, &body); err != nil {
		h.failIn(w, r, a, err)
		return
	}
	body.Following = !complete
	h.render(w, r, a, http.StatusOK, "job", view{Title: j.Name + " · Job #" + strconv.FormatInt(j.ID, 10) + " · " + p.FullName(),
		Crumbs: append(projectCrumbs(p), crumb{Name: "Pipelines", URL: base + "pipelines"},
			crumb{Name: "#" + strconv.FormatInt(j.PipelineID, 10), URL: body.PipelineURL}, crumb{Name: j.Name}), Body: body})
}

// jobActions are the forms a job's page and the jobs list offer: retry
// (a latest job that is done), cancel (one not done, a manual one too),
// play (a manual or scheduled one), when the viewer may run its ref.
func jobActions(j model.Job, mayRun bool) (retry, cancel, play bool) {
	if !mayRun {
		return false, false, false
	}
	st := j.Status
	retry = !j.Retried && (st == model.StatusSuccess || st == model.StatusFailed || st == model.StatusCanceled)
	cancel = st.Cancelable() || st == model.StatusManual
	play = st == model.StatusManual || st == model.StatusScheduled
	return retry, cancel, play
}

// pageLog renders the end of a job's log into the page: at most
// maxLogView bytes, from a line's start, whole lines only while the job
// runs (the page follows the rest).
func (h *Handler) pageLog(r *http.Request, a auth.Actor, full string, id int64, complete bool, body *jobBody) error {
	rd, size, err := h.CI.OpenLog(r.Context(), a, full, id)
	if isKind(err, model.KindNotFound) {
		body.State = newLogState().encode()
		return nil // no log yet
	}
	if err != nil {
		return err
	}
	defer rd.Close()
	body.HasLog = true
	start := int64(0)
	if size > maxLogView {
		start = size - maxLogView
		body.LogTruncated = true
	}
	if err := skip(rd, start); err != nil {
		return err
	}
	data := make([]byte, size-start)
	n, err := io.ReadFull(rd, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return err
	}
	data = data[:n]
	if start > 0 {
		// Begin at a line's start.
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data, start = data[i+1:], start+int64(i+1)
		}
	}
	chunks, used, st := renderLog(data, newLogState(), complete)
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString(c.HTML) // a fresh state: every chunk is at depth 0
	}
	body.Log = template.HTML(b.String()) //nolint:gosec // renderLog escapes all text
	body.Offset = start + int64(used)
	body.State = st.encode()
	return nil
}

// skip moves a log reader n bytes on.
func skip(rd io.Reader, n int64) error {
	if n == 0 {
		return nil
	}
	if s, ok := rd.(io.Seeker); ok {
		_, err := s.Seek(n, io.SeekStart)
		return err
	}
	_, err := io.CopyN(io.Discard, rd, n)
	return err
}

// traceAnswer is trace.json's answer: the rendered log from offset to
// Offset, the state to continue from, and whether the job is done (the
// page stops following).
type traceAnswer struct {
	ID       int64      `json:"id"`
	Status   string     `json:"status"`
	Label    string     `json:"status_label"`
	Complete bool       `json:"complete"`
	Offset   int64      `json:"offset"`
	Size     int64      `json:"size"`
	State    string     `json:"state"`
	Chunks   []logChunk `json:"chunks"`
	// Reset: the log is shorter than the offset (erased): the page
	// reloads.
	Reset bool `json:"reset,omitempty"`
}

// jobTrace is /-/jobs/<id>/trace.json?offset=N&state=S: what the log
// gained since offset, rendered from the state the page had there.
func (h *Handler) jobTrace(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) {
	j, err := h.CI.Job(r.Context(), a, full, id)
	if err != nil {
		h.fail(w, r, a, err)
		return
	}
	q := r.URL.Query()
	offset := int64(0)
	if s := q.Get("offset"); s != "" {
		if offset, err = strconv.ParseInt(s, 10, 64); err != nil || offset < 0 {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "offset is invalid"})
			return
		}
	}
	st, ok := decodeLogState(q.Get("state"))
	if !ok {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "state is invalid"})
		return
	}
	complete := j.Status.Completed()
	ans := traceAnswer{ID: j.ID, Status: string(j.Status), Label: ciStatus(j.Status).Label(), Offset: offset, State: st.encode(), Chunks: []logChunk{}}
	rd, size, err := h.CI.OpenLog(r.Context(), a, full, id)
	switch {
	case isKind(err, model.KindNotFound):
		ans.Complete = complete
		ans.Reset = complete && offset > 0
		writeJSON(w, http.StatusOK, ans)
		return
	case err != nil:
		h.failIn(w, r, a, err)
		return
	}
	defer rd.Close()
	ans.Size = size
	if offset > size {
		ans.Reset, ans.Complete = true, true
		writeJSON(w, http.StatusOK, ans)
		return
	}
	if err := skip(rd, offset); err != nil {
		h.failIn(w, r, a, err)
		return
	}
	data := make([]byte, min(size-offset, maxTracePiece))
	n, err := io.ReadFull(rd, data)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		h.failIn(w, r, a, err)
		return
	}
	data = data[:n]
	last := offset+int64(n) >= size
	// A finished log renders to its end; a piece cut in a line too long
	// for it renders that line as it is.
	chunks, used, next := renderLog(data, st, complete && last)
	if used == 0 && n == maxTracePiece {
		chunks, used, next = renderLog(data, st, true)
	}
	ans.Chunks = append(ans.Chunks, chunks...)
	ans.Offset = offset + int64(used)
	ans.State = next.encode()
	ans.Complete = complete && ans.Offset >= size
	writeJSON(w, http.StatusOK, ans)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "500 Internal Server Error", http.StatusInternalServerError)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "application/json")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// sandboxed sets the headers of bytes a job made (its log, its
// artifacts): never run as a page of this site, never cached publicly.
func sandboxed(hd http.Header, contentType string, size int64) {
	hd.Set("Content-Type", contentType)
	if size >= 0 {
		hd.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	hd.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	hd.Set("Cache-Control", "max-age=0, private, must-revalidate")
}

// jobRaw is /-/jobs/<id>/raw: the whole log as text, streamed.
func (h *Handler) jobRaw(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) {
	if _, err := h.CI.Job(r.Context(), a, full, id); err != nil {
		h.fail(w, r, a, err)
		return
	}
	rd, size, err := h.CI.OpenLog(r.Context(), a, full, id)
	if err != nil {
		h.failIn(w, r, a, err)
		return
	}
	defer rd.Close()
	sandboxed(w.Header(), "text/plain; charset=utf-8", size)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.CopyN(w, rd, size)
	}
}

// jobActionPost retries, cancels or plays a job (run_pipeline, as the
// API) and goes to the job's page (the new job's, for a retry).
func (h *Handler) jobActionPost(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64, verb string) {
	page := "/" + full + "/-/jobs/" + strconv.FormatInt(id, 10)
	if !a.SignedIn() {
		signInThen(w, r, page)
		return
	}
	if _, err := h.CI.Job(r.Context(), a, full, id); err != nil {
		h.fail(w, r, a, err)
		return
	}
	var (
		v   ci.JobView
		err error
	)
	switch verb {
	case "retry":
		v, err = h.CI.RetryJob(r.Context(), a, full, id)
	case "cancel":
		v, err = h.CI.CancelJob(r.Context(), a, full, id)
	default:
		v, err = h.CI.PlayJob(r.Context(), a, full, id, nil)
	}
	if err != nil {
		h.refused(w, r, a, err)
		return
	}
	http.Redirect(w, r, "/"+full+"/-/jobs/"+strconv.FormatInt(v.ID, 10), http.StatusSeeOther)
}

// artifactsDownload is /-/jobs/<id>/artifacts/download: the archive,
// streamed, as the API's download allows it.
func (h *Handler) artifactsDownload(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64) {
	if _, err := h.CI.Job(r.Context(), a, full, id); err != nil {
		h.fail(w, r, a, err)
		return
	}
	f, err := h.CI.JobArchive(r.Context(), a, full, id)
	if err != nil {
		h.refused(w, r, a, err)
		return
	}
	defer f.Close()
	hd := w.Header()
	sandboxed(hd, "application/zip", f.Size)
	hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.Name}))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = io.Copy(w, f)
	}
}

// artifactRaw is /-/jobs/<id>/artifacts/raw/<path>: one file of the
// archive, streamed: text shown as text, anything else downloaded.
func (h *Handler) artifactRaw(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64, file string) {
	if _, err := h.CI.Job(r.Context(), a, full, id); err != nil {
		h.fail(w, r, a, err)
		return
	}
	if file == "" || len(file) > 4096 {
		h.notFound(w, r, a)
		return
	}
	f, err := h.CI.JobArtifactFile(r.Context(), a, full, id, file)
	if err != nil {
		h.refused(w, r, a, err)
		return
	}
	defer f.Close()
	var sniff [8000]byte
	n, err := io.ReadFull(f, sniff[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		h.failIn(w, r, a, err)
		return
	}
	ct, disp := "text/plain; charset=utf-8", "inline"
	if isBinary(sniff[:n]) {
		ct, disp = "application/octet-stream", "attachment"
	}
	if r.URL.Query().Get("inline") == "false" {
		disp = "attachment"
	}
	hd := w.Header()
	sandboxed(hd, ct, f.Size)
	hd.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": f.Name}))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	if _, err := w.Write(sniff[:n]); err != nil {
		return
	}
	_, _ = io.Copy(w, f)
}

// artifactItem is a file or folder of a browsed archive.
type artifactItem struct {
	Name, URL string
	Dir       bool
	Size      int64
}

// artifactsBody is the data of the archive's browser.
type artifactsBody struct {
	projectHead
	JobName, JobURL, Path, Parent string
	DownloadURL                   string
	Entries                       []artifactItem
	More                          bool
}

// artifactsBrowse is /-/jobs/<id>/artifacts/browse[/<dir>]: a folder of
// the job's archive.
func (h *Handler) artifactsBrowse(w http.ResponseWriter, r *http.Request, a auth.Actor, full string, id int64, dir string) {
	v, j, ok := h.jobPage(w, r, a, full, id)
	if !ok {
		return
	}
	p := v.Project
	entries, more, err := h.CI.JobArtifactEntries(r.Context(), a, full, id)
	if err != nil {
		h.refused(w, r, a, err)
		return
	}
	self := "/" + p.FullPath() + "/-/jobs/" + strconv.FormatInt(j.ID, 10)
	body := artifactsBody{projectHead: head(v), JobName: j.Name, JobURL: self, Path: dir, DownloadURL: self + "/artifacts/download", More: more}
	prefix := ""
	if dir != "" {
		prefix = dir + "/"
		found := false
		for _, e := range entries {
			if e.Dir && e.Path == prefix {
				found = true
				break
			}
		}
		if !found {
			h.notFound(w, r, a)
			return
		}
		body.Parent = self + "/artifacts/browse"
		if d := path.Dir(dir); d != "." {
			body.Parent += "/" + escapePath(d)
		}
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Path, prefix)
		if !ok || rest == "" {
			continue
		}
		name := strings.TrimSuffix(rest, "/")
		if strings.Contains(name, "/") {
			continue // deeper
		}
		it := artifactItem{Name: name, Dir: e.Dir, Size: e.Size}
		if e.Dir {
			it.URL = self + "/artifacts/browse/" + escapePath(prefix+name)
		} else {
			it.URL = self + "/artifacts/raw/" + escapePath(prefix+name)
		}
		body.Entries = append(body.Entries, it)
	}
	// Folders first, as the archive sorted them by path.
	var dirs, files []artifactItem
	for _, e := range body.Entries {
		if e.Dir {
			dirs = append(dirs, e)
		} else {
			files = append(files, e)
		}
	}
	body.Entries = append(dirs, files...)
	crumbs := append(projectCrumbs(p), crumb{Name: "Pipelines", URL: "/" + p.FullPath() + "/-/pipelines"},
		crumb{Name: j.Name + " #" + strconv.FormatInt(j.ID, 10), URL: self}, crumb{Name: "Artifacts", URL: self + "/artifacts/browse"})
	if dir != "" {
		crumbs = append(crumbs, crumb{Name: dir})
	}
	h.render(w, r, a, http.StatusOK, "job_artifacts", view{Title: "Artifacts · " + j.Name + " · " + p.FullName(), Crumbs: crumbs, Body: body})
}
