package entity

import (
	"net/url"
	"strconv"
	"strings"

	"quarry/internal/model"
	"quarry/internal/snippets"
)

// Snippet is GitLab's snippet entity (Entities::Snippet and its personal
// and project twins): the row, its author, its URLs, and the files of its
// repository; repository_storage for administrators only. The clone URLs
// are there when the repository is.
type Snippet struct {
	ID                int64         `json:"id"`
	Title             string        `json:"title"`
	Description       *string       `json:"description"`
	Visibility        string        `json:"visibility"`
	Author            UserBasic     `json:"author"`
	CreatedAt         Time          `json:"created_at"`
	UpdatedAt         Time          `json:"updated_at"`
	ProjectID         *int64        `json:"project_id"`
	WebURL            string        `json:"web_url"`
	RawURL            string        `json:"raw_url"`
	SSHURLToRepo      *string       `json:"ssh_url_to_repo,omitempty"`
	HTTPURLToRepo     *string       `json:"http_url_to_repo,omitempty"`
	FileName          string        `json:"file_name"`
	Files             []SnippetFile `json:"files"`
	Imported          bool          `json:"imported"`
	ImportedFrom      string        `json:"imported_from"`
	RepositoryStorage *string       `json:"repository_storage,omitempty"`
}

// SnippetFile is one file of a snippet and where its raw content is.
type SnippetFile struct {
	Path   string `json:"path"`
	RawURL string `json:"raw_url"`
}

// SnippetWebURL is a snippet's page: <external>/-/snippets/:id, or under
// its project's path.
func (r *Renderer) SnippetWebURL(v snippets.View) string {
	base := r.ExternalURL
	if v.Project != nil {
		base += "/" + v.Project.FullPath()
	}
	return base + "/-/snippets/" + strconv.FormatInt(v.ID, 10)
}

// Snippet renders a snippet; admin shows its repository storage.
func (r *Renderer) Snippet(v snippets.View, admin bool) Snippet {
	web := r.SnippetWebURL(v)
	j := Snippet{ID: v.ID, Title: v.Title, Description: v.Description, Visibility: string(v.Visibility), Author: r.UserBasic(&v.Author),
		CreatedAt: Time(v.CreatedAt), UpdatedAt: Time(v.UpdatedAt), WebURL: web, RawURL: web + "/raw", FileName: v.FirstFile(),
		Files: make([]SnippetFile, 0, len(v.Files)), ImportedFrom: "none"}
	if v.ProjectID != 0 {
		id := v.ProjectID
		j.ProjectID = &id
	}
	if v.HasRepository {
		ssh, http := r.SSHURL(v.FullPath()), r.ExternalURL+"/"+v.FullPath()+".git"
		j.SSHURLToRepo, j.HTTPURLToRepo = &ssh, &http
	}
	for _, f := range v.Files {
		j.Files = append(j.Files, SnippetFile{Path: f, RawURL: web + "/raw/" + escapeSegments(v.Branch) + "/" + escapeSegments(f)})
	}
	if admin {
		st := v.RepositoryStorage
		j.RepositoryStorage = &st
	}
	return j
}

// escapeSegments escapes each segment of a slash-separated path.
func escapeSegments(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// UserAgentDetail is what a snippet's creating request said of itself.
type UserAgentDetail struct {
	UserAgent        string `json:"user_agent"`
	IPAddress        string `json:"ip_address"`
	AkismetSubmitted bool   `json:"akismet_submitted"`
}

// UserAgentDetail renders a user agent detail.
func (r *Renderer) UserAgentDetail(d model.SnippetUserAgent) UserAgentDetail {
	return UserAgentDetail{UserAgent: d.UserAgent, IPAddress: d.IPAddress, AkismetSubmitted: d.AkismetSubmitted}
}
