package entity

import (
	"fmt"

	"quarry/internal/model"
	"quarry/internal/repofiles"
)

type Commit struct {
	ID               string              `json:"id"`
	ShortID          string              `json:"short_id"`
	CreatedAt        Time                `json:"created_at"`
	ParentIDs        []string            `json:"parent_ids"`
	Title            string              `json:"title"`
	Message          string              `json:"message"`
	AuthorName       string              `json:"author_name"`
	AuthorEmail      string              `json:"author_email"`
	AuthoredDate     Time                `json:"authored_date"`
	CommitterName    string              `json:"committer_name"`
	CommitterEmail   string              `json:"committer_email"`
	CommittedDate    Time                `json:"committed_date"`
	Trailers         map[string]string   `json:"trailers"`
	ExtendedTrailers map[string][]string `json:"extended_trailers"`
	WebURL           string              `json:"web_url"`
}

type CommitDetail struct {
	Commit
	Stats        *CommitStats `json:"stats,omitempty"`
	Status       *string      `json:"status"`
	ProjectID    int64        `json:"project_id"`
	LastPipeline *struct{}    `json:"last_pipeline"`
}

type CommitStats struct {
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
	Total     int `json:"total"`
}

// trailers gives a message's trailers as the commit entity shows them:
// the last value of each, and every value.
func trailers(msg string) (map[string]string, map[string][]string) {
	all := repofiles.ParseTrailers(msg)
	one := make(map[string]string, len(all))
	for k, vs := range all {
		one[k] = vs[len(vs)-1]
	}
	return one, all
}

func (r *Renderer) Commit(c repofiles.Commit, webPath string) Commit {
	short := string(c.ID)
	if len(short) > 8 {
		short = short[:8]
	}
	tr, ext := trailers(c.Message)
	return Commit{ID: string(c.ID), ShortID: short, CreatedAt: Time(c.Committer.When), ParentIDs: c.ParentIDs, Title: c.Title(),
		Message: c.Message, AuthorName: c.Author.Name, AuthorEmail: c.Author.Email, AuthoredDate: Time(c.Author.When),
		CommitterName: c.Committer.Name, CommitterEmail: c.Committer.Email, CommittedDate: Time(c.Committer.When),
		Trailers: tr, ExtendedTrailers: ext, WebURL: r.ExternalURL + webPath}
}

func (r *Renderer) CommitDetail(v repofiles.CommitView) CommitDetail {
	j := CommitDetail{Commit: r.Commit(v.Commit, v.WebURL), ProjectID: v.ProjectID}
	if v.Stats != nil {
		j.Stats = &CommitStats{Additions: v.Stats.Additions, Deletions: v.Stats.Deletions, Total: v.Stats.Additions + v.Stats.Deletions}
	}
	return j
}

type Branch struct {
	Name               string `json:"name"`
	Merged             bool   `json:"merged"`
	Protected          bool   `json:"protected"`
	Default            bool   `json:"default"`
	DevelopersCanPush  bool   `json:"developers_can_push"`
	DevelopersCanMerge bool   `json:"developers_can_merge"`
	CanPush            bool   `json:"can_push"`
	WebURL             string `json:"web_url"`
	Commit             Commit `json:"commit"`
}

func (r *Renderer) Branch(b repofiles.Branch) Branch {
	projectPath := b.ProjectPath
	return Branch{Name: b.Name, Merged: b.Merged, Protected: b.Protected, Default: b.Default, DevelopersCanPush: b.DevelopersCanPush,
		DevelopersCanMerge: b.DevelopersCanMerge, CanPush: b.CanPush, WebURL: r.ExternalURL + "/" + projectPath + "/-/tree/" + escapeSegments(b.Name),
		Commit: r.Commit(b.Commit, "/"+projectPath+"/-/commit/"+string(b.Commit.ID))}
}

type Tag struct {
	Name      string    `json:"name"`
	Message   string    `json:"message"`
	Target    string    `json:"target"`
	Commit    Commit    `json:"commit"`
	Release   *struct{} `json:"release"`
	Protected bool      `json:"protected"`
	CreatedAt *Time     `json:"created_at"`
}

func (r *Renderer) Tag(t repofiles.Tag) Tag {
	j := Tag{Name: t.Name, Message: t.Message, Target: string(t.Target), Commit: r.Commit(t.Commit, "/"+t.ProjectPath+"/-/commit/"+string(t.Commit.ID))}
	if !t.Tagger.When.IsZero() {
		ts := Time(t.Tagger.When)
		j.CreatedAt = &ts
	}
	return j
}

type Diff struct {
	Diff          string  `json:"diff"`
	Collapsed     bool    `json:"collapsed"`
	TooLarge      bool    `json:"too_large"`
	NewPath       string  `json:"new_path"`
	OldPath       string  `json:"old_path"`
	AMode         *string `json:"a_mode"`
	BMode         string  `json:"b_mode"`
	NewFile       bool    `json:"new_file"`
	RenamedFile   bool    `json:"renamed_file"`
	DeletedFile   bool    `json:"deleted_file"`
	GeneratedFile bool    `json:"generated_file"`
}

func Diffs(files []repofiles.FileDiff) []Diff {
	out := make([]Diff, len(files))
	for i, f := range files {
		out[i] = Diff{Diff: f.Diff, TooLarge: f.TooLarge, Collapsed: f.TooLarge, NewPath: f.NewPath, OldPath: f.OldPath, AMode: StrPtr(f.AMode), BMode: f.BMode,
			NewFile: f.NewFile, RenamedFile: f.RenamedFile, DeletedFile: f.DeletedFile}
	}
	return out
}

type CommitRef struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

type Compare struct {
	Commit         *Commit  `json:"commit"`
	Commits        []Commit `json:"commits"`
	Diffs          []Diff   `json:"diffs"`
	CompareTimeout bool     `json:"compare_timeout"`
	CompareSameRef bool     `json:"compare_same_ref"`
	WebURL         string   `json:"web_url"`
}

type Contributor struct {
	Name      string `json:"name"`
	Email     string `json:"email"`
	Commits   int    `json:"commits"`
	Additions int    `json:"additions"`
	Deletions int    `json:"deletions"`
}

type BlameRange struct {
	Commit struct {
		ID             string   `json:"id"`
		ParentIDs      []string `json:"parent_ids"`
		Message        string   `json:"message"`
		AuthoredDate   Time     `json:"authored_date"`
		AuthorName     string   `json:"author_name"`
		AuthorEmail    string   `json:"author_email"`
		CommittedDate  Time     `json:"committed_date"`
		CommitterName  string   `json:"committer_name"`
		CommitterEmail string   `json:"committer_email"`
	} `json:"commit"`
	Lines []string `json:"lines"`
}

type File struct {
	FileName        string `json:"file_name"`
	FilePath        string `json:"file_path"`
	Size            int64  `json:"size"`
	Encoding        string `json:"encoding"`
	Content         string `json:"content"`
	ContentSHA256   string `json:"content_sha256"`
	Ref             string `json:"ref"`
	BlobID          string `json:"blob_id"`
	CommitID        string `json:"commit_id"`
	LastCommitID    string `json:"last_commit_id"`
	ExecuteFilemode bool   `json:"execute_filemode"`
}

type TreeEntry struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
	Path string `json:"path"`
	Mode string `json:"mode"`
}

type Blob struct {
	Size     int64  `json:"size"`
	Encoding string `json:"encoding"`
	Content  string `json:"content"`
	SHA      string `json:"sha"`
}

type Notes struct {
	Notes string `json:"notes"`
}

type BranchAccess struct {
	ID                     int64  `json:"id"`
	AccessLevel            *int   `json:"access_level"`
	AccessLevelDescription string `json:"access_level_description"`
	DeployKeyID            *int64 `json:"deploy_key_id"`
	UserID                 *int64 `json:"user_id"`
	GroupID                *int64 `json:"group_id"`
}

type ProtectedBranch struct {
	ID                        int64          `json:"id"`
	Name                      string         `json:"name"`
	PushAccessLevels          []BranchAccess `json:"push_access_levels"`
	MergeAccessLevels         []BranchAccess `json:"merge_access_levels"`
	UnprotectAccessLevels     []BranchAccess `json:"unprotect_access_levels"`
	AllowForcePush            bool           `json:"allow_force_push"`
	CodeOwnerApprovalRequired bool           `json:"code_owner_approval_required"`
}

func branchAccess(list []model.BranchAccess) []BranchAccess {
	out := make([]BranchAccess, len(list))
	for i, a := range list {
		j := BranchAccess{ID: a.ID, UserID: a.UserID, GroupID: a.GroupID}
		switch {
		case a.AccessLevel != nil:
			l := int(*a.AccessLevel)
			j.AccessLevel, j.AccessLevelDescription = &l, model.BranchAccessDescription(*a.AccessLevel)
		case a.UserID != nil:
			j.AccessLevelDescription = fmt.Sprintf("user %d", *a.UserID)
		case a.GroupID != nil:
			j.AccessLevelDescription = fmt.Sprintf("group %d", *a.GroupID)
		}
		out[i] = j
	}
	return out
}

func (r *Renderer) ProtectedBranch(b model.ProtectedBranch) ProtectedBranch {
	return ProtectedBranch{ID: b.ID, Name: b.Name, PushAccessLevels: branchAccess(b.Push), MergeAccessLevels: branchAccess(b.Merge),
		UnprotectAccessLevels: branchAccess(b.Unprotect), AllowForcePush: b.AllowForcePush, CodeOwnerApprovalRequired: b.CodeOwnerApprovalRequired}
}
