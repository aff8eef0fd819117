package runner

// job is the payload of a 201 answer to POST /jobs/request: the parts a
// shell executor uses. Unknown keys (image, services, credentials,
// hooks, …) are ignored.
type job struct {
	ID            int64        `json:"id"`
	Token         string       `json:"token"`
	AllowGitFetch bool         `json:"allow_git_fetch"`
	JobInfo       jobInfo      `json:"job_info"`
	GitInfo       gitInfo      `json:"git_info"`
	RunnerInfo    jobRunner    `json:"runner_info"`
	Variables     []variable   `json:"variables"`
	Steps         []step       `json:"steps"`
	Artifacts     []artifact   `json:"artifacts"`
	Dependencies  []dependency `json:"dependencies"`
	Cache         []cache      `json:"cache"`
	Features      jobFeatures  `json:"features"`
	// Release is the job's release: (Quarry's servers only): the
	// release step is then made here (runRelease), not by release-cli.
	Release *release `json:"release"`
}

type jobInfo struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Stage       string `json:"stage"`
	ProjectID   int64  `json:"project_id"`
	ProjectName string `json:"project_name"`
}

type gitInfo struct {
	RepoURL   string   `json:"repo_url"` // carries the job token: never log it
	Ref       string   `json:"ref"`
	Sha       string   `json:"sha"`
	BeforeSha string   `json:"before_sha"`
	RefType   string   `json:"ref_type"` // "branch" or "tag"
	Refspecs  []string `json:"refspecs"`
	Depth     int      `json:"depth"` // 0: full history
}

type jobRunner struct {
	Timeout int `json:"timeout"` // seconds
}

// variable is one entry of the job's variables (ci.md §4.1). Later entries
// override earlier ones.
type variable struct {
	Key    string `json:"key"`
	Value  string `json:"value"`
	Public bool   `json:"public"`
	Masked bool   `json:"masked"`
	File   bool   `json:"file,omitempty"` // the value goes into a file; the variable names the file
	Raw    bool   `json:"raw,omitempty"`  // no $VAR expansion
}

// step is one script of the job: "script" (before_script and script) and
// "after_script"; "release" for release jobs.
type step struct {
	Name         string   `json:"name"`
	Script       []string `json:"script"`
	Timeout      int      `json:"timeout"`
	When         string   `json:"when"` // on_success, on_failure, always
	AllowFailure bool     `json:"allow_failure"`
}

// artifact is one upload the job asks for: the archive (artifact_type
// "archive", format "zip") or a report (junit, cobertura, dotenv, …; format
// "gzip" or "raw").
type artifact struct {
	Name           string   `json:"name"`
	Untracked      bool     `json:"untracked"`
	Paths          []string `json:"paths"`
	Exclude        []string `json:"exclude"`
	When           string   `json:"when"` // on_success (default), on_failure, always
	ExpireIn       string   `json:"expire_in"`
	ArtifactType   string   `json:"artifact_type"`
	ArtifactFormat string   `json:"artifact_format"`
}

// dependency is a job whose archive this job downloads.
type dependency struct {
	ID            int64          `json:"id"`
	Name          string         `json:"name"`
	Token         string         `json:"token"`
	ArtifactsFile *artifactsFile `json:"artifacts_file"`
}

type artifactsFile struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

type jobFeatures struct {
	TraceSections  bool     `json:"trace_sections"`
	FailureReasons []string `json:"failure_reasons"`
}

// Failure reasons the runner reports in the final PUT /jobs/:id.
const (
	reasonScript  = "script_failure"
	reasonTimeout = "job_execution_timeout"
	reasonSystem  = "runner_system_failure"
	reasonUnknown = "unknown_failure"
)
