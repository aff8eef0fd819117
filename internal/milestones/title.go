package milestones

import (
	"html"
	"strings"

	"github.com/microcosm-cc/bluemonday"
)

// stripTags keeps a title's text and drops its markup (and the content
// of script and style elements).
var stripTags = bluemonday.StrictPolicy()

// SanitizeTitle is GitLab's Timebox#sanitize_title after strip_attributes:
// markup removed, HTML entities decoded, surrounding blanks trimmed.
func SanitizeTitle(s string) string {
	return strings.TrimSpace(html.UnescapeString(stripTags.Sanitize(s)))
}
