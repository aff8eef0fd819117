package model

import "time"

// Snippet is a piece of code or text kept in a Git repository of its own:
// a personal snippet (ProjectID 0) or a project's. The row holds what the
// repository does not: its files are the repository's, FileName only
// remembers the first of them as of the last write.
type Snippet struct {
	ID          int64
	Title       string
	Description *string // nil: none given (GitLab shows null)
	Visibility  Visibility
	AuthorID    int64
	ProjectID   int64 // 0 for a personal snippet
	FileName    string
	// RepositoryStorage names the storage of the repository; while
	// RepositoryReadOnly is set (a move between storages) every write is
	// refused.
	RepositoryStorage  string
	RepositoryReadOnly bool
	// Agent is what the creating request said of itself (nil when it
	// said nothing).
	Agent     *SnippetUserAgent
	CreatedAt time.Time
	UpdatedAt time.Time
	Version   int64
}

// SnippetUserAgent is the user agent detail recorded when a snippet is
// made (GitLab keeps it for spam checks).
type SnippetUserAgent struct {
	UserAgent        string
	IPAddress        string
	AkismetSubmitted bool
}

// Bounds of a snippet, GitLab's: at most SnippetMaxFiles files (its
// Snippet::MAX_FILE_COUNT), a title and a file name of at most 255
// characters; Quarry bounds the description at 1 MiB and every file path
// like the first one's name.
const (
	SnippetMaxFiles       = 10
	SnippetTitleMax       = 255
	SnippetFileNameMax    = 255
	SnippetDescriptionMax = 1 << 20
)
