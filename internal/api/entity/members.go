package entity

import "quarry/internal/model"

type Member struct {
	UserBasic
	AccessLevel       int        `json:"access_level"`
	CreatedAt         Time       `json:"created_at"`
	CreatedBy         *UserBasic `json:"created_by,omitempty"`
	ExpiresAt         *string    `json:"expires_at"`
	Email             *string    `json:"email,omitempty"`
	GroupSAMLIdentity *struct{}  `json:"group_saml_identity"`
	MembershipState   string     `json:"membership_state"`
	Override          *bool      `json:"override,omitempty"`
}

type BillableMember struct {
	UserBasic
	Email          *string `json:"email,omitempty"`
	LastActivityOn *string `json:"last_activity_on"`
	MembershipType string  `json:"membership_type"`
	Removable      bool    `json:"removable"`
	CreatedAt      Time    `json:"created_at"`
	IsLastOwner    bool    `json:"is_last_owner"`
}

type BillableMembership struct {
	ID               int64   `json:"id"`
	SourceID         int64   `json:"source_id"`
	SourceFullName   string  `json:"source_full_name"`
	SourceMembersURL string  `json:"source_members_url"`
	CreatedAt        Time    `json:"created_at"`
	ExpiresAt        *string `json:"expires_at"`
	AccessLevel      struct {
		StringValue  string `json:"string_value"`
		IntegerValue int    `json:"integer_value"`
	} `json:"access_level"`
}

type Starrer struct {
	StarredSince Time      `json:"starred_since"`
	User         UserBasic `json:"user"`
}

type GroupLink struct {
	ID          int64   `json:"id"`
	ProjectID   int64   `json:"project_id"`
	GroupID     int64   `json:"group_id"`
	GroupAccess int     `json:"group_access"`
	ExpiresAt   *string `json:"expires_at"`
}

type Token struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Revoked     bool     `json:"revoked"`
	CreatedAt   Time     `json:"created_at"`
	Description string   `json:"description"`
	Scopes      []string `json:"scopes"`
	UserID      int64    `json:"user_id"`
	LastUsedAt  *Time    `json:"last_used_at"`
	Active      bool     `json:"active"`
	ExpiresAt   *string  `json:"expires_at"`
	Expired     bool     `json:"expired"`
	Token       string   `json:"token,omitempty"`
}

func (r *Renderer) Token(t model.PersonalAccessToken, secret string) Token {
	scopes := make([]string, len(t.Scopes))
	for i, s := range t.Scopes {
		scopes[i] = string(s)
	}
	now := r.Now()
	return Token{ID: t.ID, Name: t.Name, Revoked: t.Revoked, CreatedAt: Time(t.CreatedAt), Description: t.Description,
		Scopes: scopes, UserID: t.UserID, LastUsedAt: TimePtr(t.LastUsedAt), Active: t.Active(now),
		ExpiresAt: StrPtr(t.ExpiresAt), Expired: t.Expired(now), Token: secret}
}
