package model

// AccessLevel is a member's role in a project or group.
type AccessLevel int

// Access levels as the API numbers them.
const (
	NoAccess      AccessLevel = 0
	MinimalAccess AccessLevel = 5
	Guest         AccessLevel = 10
	Reporter      AccessLevel = 20
	Developer     AccessLevel = 30
	Maintainer    AccessLevel = 40
	Owner         AccessLevel = 50
)

// Visibility is who may see a project or group.
type Visibility string

// Visibility levels.
const (
	Private  Visibility = "private"
	Internal Visibility = "internal"
	Public   Visibility = "public"
)

// Member source types, as stored and as GitLab names them.
const (
	SourceProject   = "Project"
	SourceNamespace = "Namespace"
)
