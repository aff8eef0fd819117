package releases

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Bounds of a link's fields (GitLab keeps the columns unbounded text but
// caps the file path at 128).
const (
	MaxLinkName     = 255
	MaxLinkURL      = 2048
	MaxFilepath     = 128
	MaxLinksPerCall = 100
)

// filepathFormat is GitLab's Releases::Link::FILEPATH_REGEX: an absolute
// path of word characters, dots and dashes ending in a letter or digit.
var filepathFormat = regexp.MustCompile(`\A/?(?:[\-.\w]+/?)*[\da-zA-Z]+\z`)

// LinkInput is a link's writable fields; nil leaves a field as it is.
type LinkInput struct {
	Name     *string
	URL      *string
	Filepath *string // direct_asset_path, or the deprecated filepath
	LinkType *string
}

// CheckLink validates a link's fields alone (not their uniqueness):
// GitLab's Releases::Link validations, first failure wins. A link type
// outside the list is a parameter error, as Grape's values check.
func CheckLink(l model.ReleaseLink) (msg string, param bool) {
	if !slices.Contains(model.ReleaseLinkTypes, l.LinkType) {
		return "link_type does not have a valid value", true
	}
	if strings.TrimSpace(l.URL) == "" {
		return "Url can't be blank", false
	}
	if utf8.RuneCountInString(l.URL) > MaxLinkURL {
		return "Url is too long (maximum is 2048 characters)", false
	}
	u, err := url.Parse(l.URL)
	if err != nil {
		return "Url is blocked: URI is invalid", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https", "ftp":
	default:
		return "Url is blocked: Only allowed schemes are http, https, ftp", false
	}
	if u.Host == "" {
		return "Url is blocked: URI is invalid", false
	}
	if strings.TrimSpace(l.Name) == "" {
		return "Name can't be blank", false
	}
	if utf8.RuneCountInString(l.Name) > MaxLinkName {
		return "Name is too long (maximum is 255 characters)", false
	}
	if l.Filepath != "" {
		if utf8.RuneCountInString(l.Filepath) > MaxFilepath {
			return "Filepath is too long (maximum is 128 characters)", false
		}
		if !filepathFormat.MatchString(l.Filepath) {
			return "Filepath is in an invalid format", false
		}
	}
	return "", false
}

// apply writes in over l.
func (in LinkInput) apply(l *model.ReleaseLink) {
	if in.Name != nil {
		l.Name = *in.Name
	}
	if in.URL != nil {
		l.URL = *in.URL
	}
	if in.Filepath != nil {
		l.Filepath = *in.Filepath
	}
	if in.LinkType != nil {
		l.LinkType = *in.LinkType
	}
	if l.LinkType == "" {
		l.LinkType = "other"
	}
}

// duplicate names the field of l another link of the same release
// already holds ("" when none), in GitLab's validation order.
func duplicate(l model.ReleaseLink, others []model.ReleaseLink) string {
	for _, field := range []string{"Url", "Name", "Filepath"} {
		for _, o := range others {
			if o.ID == l.ID && l.ID != 0 {
				continue
			}
			switch {
			case field == "Url" && o.URL == l.URL,
				field == "Name" && o.Name == l.Name,
				field == "Filepath" && l.Filepath != "" && o.Filepath == l.Filepath:
				return field
			}
		}
	}
	return ""
}

// LinkView is a link with the project and tag its URLs are made from.
type LinkView struct {
	model.ReleaseLink
	Project model.Project
	Tag     string
}

// linkRelease opens the release of tag for action.
func (s *Service) linkRelease(ctx context.Context, a auth.Actor, projectRef, tag string, action auth.Action) (model.Project, model.Release, []model.ReleaseLink, error) {
	p, _, err := s.open(ctx, a, projectRef, action)
	if err != nil {
		return p, model.Release{}, nil, err
	}
	r, err := s.byTag(ctx, p, tag)
	if err != nil {
		return p, r, nil, err
	}
	links, err := s.db.ReleaseLinks(ctx, []int64{r.ID})
	return p, r, links[r.ID], err
}

// Links returns one page of a release's links, newest first.
func (s *Service) Links(ctx context.Context, a auth.Actor, projectRef, tag string, page model.Page) ([]LinkView, model.PageInfo, error) {
	p, r, links, err := s.linkRelease(ctx, a, projectRef, tag, auth.ReadRelease)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info := model.PageOf(links, page)
	out := make([]LinkView, len(list))
	for i, l := range list {
		out[i] = LinkView{ReleaseLink: l, Project: p, Tag: r.Tag}
	}
	return out, info, nil
}

var errLinkNotFound = model.NotFound("")

func findLink(links []model.ReleaseLink, id int64) (model.ReleaseLink, error) {
	for _, l := range links {
		if l.ID == id {
			return l, nil
		}
	}
	return model.ReleaseLink{}, errLinkNotFound
}

// Link returns one link of a release.
func (s *Service) Link(ctx context.Context, a auth.Actor, projectRef, tag string, id int64) (LinkView, error) {
	p, r, links, err := s.linkRelease(ctx, a, projectRef, tag, auth.ReadRelease)
	if err != nil {
		return LinkView{}, err
	}
	l, err := findLink(links, id)
	return LinkView{ReleaseLink: l, Project: p, Tag: r.Tag}, err
}

// checked validates l against its siblings, as GitLab answers a link's
// validation failures: {"message":["Name has already been taken"]}.
func checked(l model.ReleaseLink, siblings []model.ReleaseLink) error {
	if msg, param := CheckLink(l); msg != "" {
		if param {
			return model.Param(msg)
		}
		return &model.Error{Kind: model.KindBadRequest, Message: msg, Raw: true, List: true}
	}
	if field := duplicate(l, siblings); field != "" {
		return &model.Error{Kind: model.KindBadRequest, Message: field + " has already been taken", Raw: true, List: true}
	}
	return nil
}

func linkConflict(err error) error {
	if errors.Is(err, model.ErrConflict) {
		return &model.Error{Kind: model.KindBadRequest, Message: "Link has already been taken", Raw: true, List: true}
	}
	return err
}

// CreateLink adds a link to a release.
func (s *Service) CreateLink(ctx context.Context, a auth.Actor, projectRef, tag string, in LinkInput) (LinkView, error) {
	p, r, links, err := s.linkRelease(ctx, a, projectRef, tag, auth.CreateRelease)
	if err != nil {
		return LinkView{}, err
	}
	l := model.ReleaseLink{ReleaseID: r.ID}
	in.apply(&l)
	if err := checked(l, links); err != nil {
		return LinkView{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateReleaseLink(ctx, &l) })
	return LinkView{ReleaseLink: l, Project: p, Tag: r.Tag}, linkConflict(err)
}

// UpdateLink changes a link of a release.
func (s *Service) UpdateLink(ctx context.Context, a auth.Actor, projectRef, tag string, id int64, in LinkInput) (LinkView, error) {
	p, r, links, err := s.linkRelease(ctx, a, projectRef, tag, auth.UpdateRelease)
	if err != nil {
		return LinkView{}, err
	}
	l, err := findLink(links, id)
	if err != nil {
		return LinkView{}, err
	}
	in.apply(&l)
	if err := checked(l, links); err != nil {
		return LinkView{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateReleaseLink(ctx, &l) })
	return LinkView{ReleaseLink: l, Project: p, Tag: r.Tag}, linkConflict(err)
}

// DeleteLink removes a link of a release and returns it.
func (s *Service) DeleteLink(ctx context.Context, a auth.Actor, projectRef, tag string, id int64) (LinkView, error) {
	p, r, links, err := s.linkRelease(ctx, a, projectRef, tag, auth.DestroyRelease)
	if err != nil {
		return LinkView{}, err
	}
	l, err := findLink(links, id)
	if err != nil {
		return LinkView{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteReleaseLink(ctx, id) })
	if errors.Is(err, model.ErrNotFound) {
		return LinkView{}, errLinkNotFound
	}
	return LinkView{ReleaseLink: l, Project: p, Tag: r.Tag}, err
}
