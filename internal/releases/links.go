package releases

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"quarry/internal/model"
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

// linkError is a link validation message as GitLab's full_messages
// writes it ("Url can't be blank").
type linkError string

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
