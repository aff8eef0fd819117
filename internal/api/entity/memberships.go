package entity

import "quarry/internal/users"

// Membership is one of a user's direct memberships (GET
// /users/:id/memberships).
type Membership struct {
	SourceID    int64  `json:"source_id"`
	SourceName  string `json:"source_name"`
	SourceType  string `json:"source_type"`
	AccessLevel int    `json:"access_level"`
}

func (r *Renderer) Membership(m *users.Membership) Membership {
	return Membership{SourceID: m.SourceID, SourceName: m.SourceName, SourceType: m.SourceType, AccessLevel: int(m.AccessLevel)}
}
