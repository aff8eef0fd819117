package model

import (
	"regexp"
	"time"
)

// Pipeline sources (the spec's source values Quarry creates).
const (
	SourcePush           = "push"
	SourceWeb            = "web"
	SourceTrigger        = "trigger"
	SourceSchedule       = "schedule"
	SourceAPI            = "api"
	SourceExternal       = "external"
	SourcePipeline       = "pipeline"
	SourceParentPipeline = "parent_pipeline"
	SourceMergeRequest   = "merge_request_event"
)

// PipelineSources are every source value of the spec.
var PipelineSources = []string{"push", "web", "trigger", "schedule", "api", "external", "pipeline", "chat", "webide",
	"merge_request_event", "external_pull_request_event", "parent_pipeline", "ondemand_dast_scan", "ondemand_dast_validation"}

// Pipeline is one run of a project's CI configuration at a commit.
type Pipeline struct {
	ID            int64
	ProjectID     int64
	IID           int64
	Ref           string // branch or tag name
	Tag           bool
	SHA           string
	BeforeSHA     string
	Source        string
	Status        CIStatus
	FailureReason FailureReason
	YAMLErrors    string // "" when the configuration was valid
	UserID        int64  // 0: no user
	// ParentID and ParentJobID link a child (or multi-project) pipeline
	// to the pipeline and bridge that made it.
	ParentID    int64
	ParentJobID int64
	Name        string
	// EventKey names the refs-changed event a push pipeline came from.
	EventKey string
	// MergeRequestID is the merge request a merge_request_event pipeline
	// runs for.
	MergeRequestID int64
	Protected      bool // the ref was protected when the pipeline was made
	Coverage       *float64
	CreatedAt      time.Time
	UpdatedAt      time.Time
	StartedAt      *time.Time
	FinishedAt     *time.Time
	CommittedAt    *time.Time
	Duration       *int64 // seconds
	Version        int64
}

// Child reports whether the pipeline was made by a parent pipeline's
// bridge in the same project.
func (p Pipeline) Child() bool { return p.Source == SourceParentPipeline }

// Job kinds: a build runs on a runner; a bridge starts a downstream
// pipeline; a generic job is a commit status an external CI reported.
const (
	JobBuild   = "build"
	JobBridge  = "bridge"
	JobGeneric = "generic"
)

// Job is one job (build or bridge) of a pipeline.
type Job struct {
	ID            int64
	ProjectID     int64
	PipelineID    int64
	Kind          string // JobBuild or JobBridge
	Name          string
	Stage         string
	StageIdx      int
	Status        CIStatus
	When          string
	AllowFailure  bool
	FailureReason FailureReason
	ExitCode      *int
	Retried       bool
	// EnqueueImmediately: a retried or played manual job, enqueued by
	// processing instead of waiting for a person again.
	EnqueueImmediately bool
	// RetryCount is how many automatic retries made the chain this job
	// ends (0 for a first run).
	RetryCount    int
	UserID        int64
	Ref           string
	Tag           bool
	SHA           string
	Coverage      *float64
	DAG           bool     // scheduled by needs
	Needs         []string // names of the jobs it needs
	TagList       []string
	Timeout       int // seconds; 0: the project's
	ResourceGroup int64
	// Environment is the job's expanded environment name (environment:);
	// "" for a job that deploys nowhere.
	Environment string
	// Options is the job's configuration as the engine stored it
	// (ciconfig.Planned as JSON): script, image, artifacts, retry, …
	Options string
	// ManualVariables were given when the job was played.
	ManualVariables []Variable
	// DownstreamID is the pipeline a bridge started.
	DownstreamID int64
	RunnerID     int64
	// TargetURL and Description are an external status's (generic jobs).
	TargetURL   string
	Description string
	// TokenDigest is the hashed job token (never the token itself).
	TokenDigest string
	LogSize     int64
	CreatedAt   time.Time
	UpdatedAt   time.Time
	QueuedAt    *time.Time
	ScheduledAt *time.Time
	StartedAt   *time.Time
	FinishedAt  *time.Time
	ErasedAt    *time.Time
	Version     int64
}

// Variable is a key and value with its kind (env_var or file), as
// pipelines, played jobs and triggers carry them.
type Variable struct {
	Key          string `json:"key"`
	Value        string `json:"value"`
	VariableType string `json:"variable_type"`
	Raw          bool   `json:"raw,omitempty"`
}

// Variable types.
const (
	VarEnv  = "env_var"
	VarFile = "file"
)

// CIVariable is a CI/CD variable of a project, a group or the instance.
// The instance's have no environment scope of their own ("*") and are
// never hidden.
type CIVariable struct {
	ID               int64
	OwnerType        string // "project", "group" or "instance"
	OwnerID          int64  // 0 for the instance
	Key              string
	Value            string
	VariableType     string
	Protected        bool
	Masked           bool
	Hidden           bool
	Raw              bool
	EnvironmentScope string
	Description      string
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Variable owners.
const (
	OwnerProject  = "project"
	OwnerGroup    = "group"
	OwnerInstance = "instance"
)

var (
	variableKey  = regexp.MustCompile(`^[a-zA-Z0-9_]{1,255}$`)
	maskableChar = regexp.MustCompile(`^[a-zA-Z0-9_+=/@:.~-]+$`)
)

// ValidVariableKey reports whether key is a valid variable name: letters,
// digits and underscores, at most 255.
func ValidVariableKey(key string) bool { return variableKey.MatchString(key) }

// Maskable reports whether a value can be masked in job logs (GitLab's
// rules): one line, at least 8 characters, only characters from
// [a-zA-Z0-9_+=/@:.~-].
func Maskable(value string) bool { return len(value) >= 8 && maskableChar.MatchString(value) }

// Trigger is a pipeline trigger token's record; the token itself is only
// shown when it is made.
type Trigger struct {
	ID          int64
	ProjectID   int64
	OwnerID     int64
	Description string
	TokenDigest string
	TokenHint   string // the token's first characters, to tell tokens apart
	LastUsed    *time.Time
	ExpiresAt   string // date or ""
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Resource group process modes.
const (
	ProcessUnordered   = "unordered"
	ProcessOldestFirst = "oldest_first"
	ProcessNewestFirst = "newest_first"
)

// ProcessModes are the valid process_mode values.
var ProcessModes = []string{ProcessUnordered, ProcessOldestFirst, ProcessNewestFirst}

// ResourceGroup is a project's resource: at most one job holds it.
type ResourceGroup struct {
	ID          int64
	ProjectID   int64
	Key         string
	ProcessMode string
	HolderID    int64 // the job holding the slot; 0: free
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Artifact is a file a job left: its archive, a report, its log.
type Artifact struct {
	ID        int64
	JobID     int64
	ProjectID int64
	FileType  string // archive, metadata, trace, junit, …
	Format    string // zip, gzip, raw
	FileName  string
	Size      int64
	Path      string // where the file lies in the artifacts folder
	ExpireAt  *time.Time
	CreatedAt time.Time
}
