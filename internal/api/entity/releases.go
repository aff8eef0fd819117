package entity

import (
	"net/url"
	"strings"

	"quarry/internal/model"
	"quarry/internal/releases"
	"quarry/internal/wikis"
)

// Release is GitLab's Entities::Release.
type Release struct {
	Name              string             `json:"name"`
	TagName           string             `json:"tag_name"`
	Description       string             `json:"description"`
	DescriptionHTML   *string            `json:"description_html,omitempty"`
	CreatedAt         Time               `json:"created_at"`
	ReleasedAt        Time               `json:"released_at"`
	UpcomingRelease   bool               `json:"upcoming_release"`
	HistoricalRelease bool               `json:"historical_release"`
	Author            *UserBasic         `json:"author,omitempty"`
	Commit            *Commit            `json:"commit"`
	Milestones        []ReleaseMilestone `json:"milestones,omitempty"`
	CommitPath        string             `json:"commit_path,omitempty"`
	TagPath           string             `json:"tag_path"`
	Assets            ReleaseAssets      `json:"assets"`
	Evidences         []struct{}         `json:"evidences"`
	Links             map[string]string  `json:"_links"`
}

// ReleaseMilestone is GitLab's Entities::MilestoneWithStats: the
// milestone's issues, all of them (total) and the closed ones.
type ReleaseMilestone struct {
	Milestone
	IssueStats struct {
		Total  int `json:"total"`
		Closed int `json:"closed"`
	} `json:"issue_stats"`
}

// ReleaseAssets are a release's source archives and links.
type ReleaseAssets struct {
	Count   int             `json:"count"`
	Sources []ReleaseSource `json:"sources"`
	Links   []ReleaseLink   `json:"links"`
}

// ReleaseSource is one source archive of a release's tag.
type ReleaseSource struct {
	Format string `json:"format"`
	URL    string `json:"url"`
}

// ReleaseLink is GitLab's Entities::Releases::Link.
type ReleaseLink struct {
	ID             int64  `json:"id"`
	Name           string `json:"name"`
	URL            string `json:"url"`
	DirectAssetURL string `json:"direct_asset_url"`
	LinkType       string `json:"link_type"`
}

// releasePath is a release's web path: "/g/p/-/releases/<tag>".
func releasePath(p model.Project, tag string) string {
	return "/" + p.FullPath() + "/-/releases/" + url.PathEscape(tag)
}

// ReleaseLink renders a link of a release of tag in p.
func (r *Renderer) ReleaseLink(p model.Project, tag string, l model.ReleaseLink) ReleaseLink {
	direct := l.URL
	if l.Filepath != "" {
		fp := l.Filepath
		if !strings.HasPrefix(fp, "/") {
			fp = "/" + fp
		}
		direct = r.ExternalURL + releasePath(p, tag) + "/downloads" + fp
	}
	return ReleaseLink{ID: l.ID, Name: l.Name, URL: l.URL, DirectAssetURL: direct, LinkType: l.LinkType}
}

// Release renders v; html adds description_html.
func (r *Renderer) Release(v releases.View, html bool) Release {
	p := v.Project
	web := r.ExternalURL + "/" + p.FullPath()
	j := Release{Name: v.Name, TagName: v.Tag, Description: v.Description, CreatedAt: Time(v.CreatedAt),
		ReleasedAt: Time(v.ReleasedAt), UpcomingRelease: v.ReleasedAt.After(r.Now()),
		HistoricalRelease: v.ReleasedAt.Before(v.CreatedAt),
		TagPath:           "/" + p.FullPath() + "/-/tags/" + url.PathEscape(v.Tag), Evidences: []struct{}{}}
	if html {
		s := wikis.RenderHTML("markdown", []byte(v.Description))
		j.DescriptionHTML = &s
	}
	if v.Author != nil {
		u := r.UserBasic(v.Author)
		j.Author = &u
	}
	if v.Commit != nil {
		path := "/" + p.FullPath() + "/-/commit/" + string(v.Commit.ID)
		c := r.Commit(*v.Commit, path)
		j.Commit, j.CommitPath = &c, path
	}
	if v.CanReadMilestones {
		for i := range v.Milestones {
			m := ReleaseMilestone{Milestone: r.Milestone(&v.Milestones[i])}
			c := v.IssueStats[v.Milestones[i].ID]
			m.IssueStats.Total, m.IssueStats.Closed = c.Opened+c.Closed, c.Closed
			j.Milestones = append(j.Milestones, m)
		}
	}
	file := p.Path + "-" + strings.ReplaceAll(v.Tag, "/", "-")
	for _, f := range []string{"zip", "tar.gz", "tar.bz2", "tar"} {
		j.Assets.Sources = append(j.Assets.Sources, ReleaseSource{Format: f,
			URL: web + "/-/archive/" + url.PathEscape(v.Tag) + "/" + url.PathEscape(file) + "." + f})
	}
	j.Assets.Links = make([]ReleaseLink, len(v.Links))
	for i, l := range v.Links {
		j.Assets.Links[i] = r.ReleaseLink(p, v.Tag, l)
	}
	j.Assets.Count = len(j.Assets.Sources) + len(j.Assets.Links)
	self := r.ExternalURL + releasePath(p, v.Tag)
	j.Links = map[string]string{
		"self":                      self,
		"closed_issues_url":         web + "/-/issues?release_tag=" + url.QueryEscape(v.Tag) + "&scope=all&state=closed",
		"closed_merge_requests_url": web + "/-/merge_requests?release_tag=" + url.QueryEscape(v.Tag) + "&scope=all&state=closed",
		"merged_merge_requests_url": web + "/-/merge_requests?release_tag=" + url.QueryEscape(v.Tag) + "&scope=all&state=merged",
		"opened_issues_url":         web + "/-/issues?release_tag=" + url.QueryEscape(v.Tag) + "&scope=all&state=opened",
		"opened_merge_requests_url": web + "/-/merge_requests?release_tag=" + url.QueryEscape(v.Tag) + "&scope=all&state=opened",
	}
	if v.Editable {
		j.Links["edit_url"] = self + "/edit"
	}
	return j
}
