package entity

import "quarry/internal/badges"

// BadgeDetails is a badge's URLs, as written and rendered (GitLab's
// BasicBadgeDetails: the render endpoint's answer).
type BadgeDetails struct {
	Name             *string `json:"name"`
	LinkURL          string  `json:"link_url"`
	RenderedLinkURL  string  `json:"rendered_link_url"`
	ImageURL         string  `json:"image_url"`
	RenderedImageURL string  `json:"rendered_image_url"`
}

// Badge is a stored badge: its details, id and kind ("project" or
// "group").
type Badge struct {
	BadgeDetails
	ID   int64  `json:"id"`
	Kind string `json:"kind"`
}

// BadgeDetails renders a previewed badge.
func (r *Renderer) BadgeDetails(v badges.View) BadgeDetails {
	return BadgeDetails{Name: v.Name, LinkURL: v.LinkURL, RenderedLinkURL: v.RenderedLinkURL,
		ImageURL: v.ImageURL, RenderedImageURL: v.RenderedImageURL}
}

// Badge renders a stored badge.
func (r *Renderer) Badge(v badges.View) Badge {
	return Badge{BadgeDetails: r.BadgeDetails(v), ID: v.ID, Kind: v.Kind()}
}
