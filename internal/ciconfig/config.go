// Package ciconfig turns a .gitlab-ci.yml into a typed, validated
// configuration (Load) and a configuration into the jobs of one pipeline
// (Config.Seed). It does no I/O: included files come through a function
// the caller passes in, and everything a pipeline knows (its source, ref,
// variables, changed paths, files) comes in as an Input.
//
// Errors are *Error with GitLab's messages; the first one wins.
package ciconfig

import (
	"errors"
	"fmt"
	"time"
)

// Config is a loaded configuration: includes merged, extends, anchors,
// !reference tags and default: applied, every job validated.
type Config struct {
	// Stages in order, .pre first and .post last (default: .pre, build,
	// test, deploy, .post).
	Stages    []string   `json:"stages"`
	Variables []Variable `json:"variables,omitempty"` // global variables:
	Workflow  Workflow   `json:"workflow"`
	// Jobs are the visible jobs in the order the file defines them
	// (hidden jobs, whose names start with ".", are templates only).
	Jobs []*Job `json:"jobs"`
	// Includes are the files include: read, each inclusion once, a
	// file's own includes before it.
	Includes []IncludeRecord `json:"-"`
	// MergedYAML is the configuration with includes, extends and
	// !reference applied, as YAML (only with Options.Merged).
	MergedYAML string `json:"-"`
	// UsesVariables reports that Options.Variables decided something: a
	// $VARIABLE in an include's location, an include:rules clause, or an
	// expand_vars input function. A configuration that does not is the
	// same whatever the variables are.
	UsesVariables bool `json:"-"`
}

// Variable is a variables: entry: KEY: value or KEY: {value, description,
// expand, options}.
type Variable struct {
	Key         string `json:"key"`
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
	// Raw is expand: false — $references in the value are left alone.
	Raw bool `json:"raw,omitempty"`
	// Options are the values offered when running a pipeline by hand
	// (global variables only); Value is one of them.
	Options []string `json:"options,omitempty"`
}

// Workflow is the workflow: keyword.
type Workflow struct {
	Name string `json:"name,omitempty"`
	// Rules decide whether a pipeline is created at all; nil when the
	// keyword is absent (every pipeline is).
	Rules []Rule `json:"rules,omitempty"`
}

// Rule is one entry of rules: (job or workflow). Empty clauses are not
// part of the rule; a rule without if, changes and exists always matches.
type Rule struct {
	If      string   `json:"if,omitempty"`
	Changes []string `json:"changes,omitempty"` // path globs (changes: or changes:paths:)
	// CompareTo is changes:compare_to, the ref GitLab compares with;
	// Seed matches Changes against Input.Changes whatever it says.
	CompareTo string   `json:"compare_to,omitempty"`
	Exists    []string `json:"exists,omitempty"` // path globs (exists: or exists:paths:)
	// When overrides the job's when ("" keeps it); "never" drops the job
	// (or the pipeline, in workflow rules).
	When         string     `json:"when,omitempty"`
	AllowFailure *bool      `json:"allow_failure,omitempty"`
	StartIn      string     `json:"start_in,omitempty"`
	Variables    []Variable `json:"variables,omitempty"`
	// Needs replaces the job's needs when the rule matches (nil: keep).
	Needs []Need `json:"needs,omitempty"`
	// Interruptible overrides the job's interruptible (nil: keep).
	Interruptible *bool `json:"interruptible,omitempty"`

	expr *Expression // If, parsed by Load
}

// Filter is only: or except:.
type Filter struct {
	// Refs: keywords (branches, tags, and the pipeline's source without
	// _event, singular or plural: api, web, triggers, pipelines,
	// parent_pipelines, pushes, schedules, merge_requests, external,
	// chat, external_pull_requests), ref names, or /regular
	// expressions/, each optionally @project/path.
	Refs       []string `json:"refs,omitempty"`
	Variables  []string `json:"variables,omitempty"` // expressions, any true matches
	Changes    []string `json:"changes,omitempty"`   // path globs
	Kubernetes string   `json:"kubernetes,omitempty"`

	exprs []*Expression // Variables, parsed by Load
}

// Need is one entry of needs:.
type Need struct {
	Job       string `json:"job"`
	Artifacts bool   `json:"artifacts"` // default true
	Optional  bool   `json:"optional,omitempty"`
	// Pipeline is needs:pipeline: the job is one of that pipeline (the
	// parent's, usually $PARENT_PIPELINE_ID), for its artifacts only.
	Pipeline string `json:"pipeline,omitempty"`
}

// Image is image: or one entry of services:.
type Image struct {
	Name       string            `json:"name"`
	Entrypoint []string          `json:"entrypoint,omitempty"`
	Command    []string          `json:"command,omitempty"`
	Alias      string            `json:"alias,omitempty"`
	PullPolicy []string          `json:"pull_policy,omitempty"`
	Ports      []map[string]any  `json:"ports,omitempty"`
	Variables  map[string]string `json:"variables,omitempty"`
	// Docker is the docker: executor options, as written.
	Docker map[string]any `json:"docker,omitempty"`
}

// Artifacts is artifacts:.
type Artifacts struct {
	Name      string   `json:"name,omitempty"`
	Paths     []string `json:"paths,omitempty"`
	Exclude   []string `json:"exclude,omitempty"`
	Untracked bool     `json:"untracked,omitempty"`
	When      string   `json:"when,omitempty"`      // on_success (default), on_failure, always
	ExpireIn  string   `json:"expire_in,omitempty"` // as written ("1 week", "never")
	ExposeAs  string   `json:"expose_as,omitempty"`
	Public    *bool    `json:"public,omitempty"`
	Access    string   `json:"access,omitempty"` // none, developer, all
	// Reports by type: junit → paths, and the others kept as written.
	Reports map[string]any `json:"reports,omitempty"`
}

// JUnit lists the artifacts:reports:junit paths.
func (a *Artifacts) JUnit() []string {
	if a == nil || a.Reports == nil {
		return nil
	}
	switch v := a.Reports["junit"].(type) {
	case string:
		return []string{v}
	case []string:
		return v
	case []any:
		var out []string
		for _, x := range v {
			if s, ok := x.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Cache is one cache: entry, GitLab's defaults filled in (key
// "default" unless key:files, policy pull-push, when on_success).
type Cache struct {
	Key      string   `json:"key,omitempty"`       // key: as a string
	KeyFiles []string `json:"key_files,omitempty"` // key:files
	// KeyFilesCommits is key:files_commits.
	KeyFilesCommits []string `json:"key_files_commits,omitempty"`
	KeyPrefix       string   `json:"key_prefix,omitempty"`
	Paths           []string `json:"paths,omitempty"`
	Untracked       bool     `json:"untracked,omitempty"`
	Policy          string   `json:"policy,omitempty"` // pull-push (default), pull, push
	When            string   `json:"when,omitempty"`   // on_success (default), on_failure, always
	FallbackKeys    []string `json:"fallback_keys,omitempty"`
	Unprotect       bool     `json:"unprotect,omitempty"`
}

// Retry is retry:.
type Retry struct {
	Max       int      `json:"max,omitempty"`        // 0..2
	When      []string `json:"when,omitempty"`       // failure reasons; empty: always
	ExitCodes []int    `json:"exit_codes,omitempty"` // retry only for these exit codes
}

// Parallel is parallel: N or parallel:matrix.
type Parallel struct {
	Total int `json:"total,omitempty"` // parallel: N (1..200)
	// Matrix: each entry maps variable names to their values; the jobs
	// are every combination of each entry (at most 200 in all).
	Matrix []map[string][]string `json:"matrix,omitempty"`
	// Keys are the variable names of each Matrix entry in the order
	// written, which is the order of the values in the jobs' names.
	Keys [][]string `json:"keys,omitempty"`
}

// Trigger makes a job a bridge that starts a downstream pipeline.
type Trigger struct {
	// Include: a child pipeline from these files of the same project
	// (local paths).
	Include []string `json:"include,omitempty"`
	// Project and Branch: a multi-project pipeline.
	Project  string `json:"project,omitempty"`
	Branch   string `json:"branch,omitempty"`
	Strategy string `json:"strategy,omitempty"` // "depend" or ""
	// Forward: which variables reach the downstream pipeline (default
	// yaml_variables true, pipeline_variables false).
	ForwardYAMLVariables     bool `json:"forward_yaml_variables"`
	ForwardPipelineVariables bool `json:"forward_pipeline_variables"`
}

// Job is one visible job of a configuration.
type Job struct {
	Name         string   `json:"name"`
	Stage        string   `json:"stage"` // default "test"
	Script       []string `json:"script,omitempty"`
	BeforeScript []string `json:"before_script,omitempty"`
	AfterScript  []string `json:"after_script,omitempty"`
	// When: on_success (default), on_failure, always, manual, delayed.
	When    string `json:"when"`
	StartIn string `json:"start_in,omitempty"` // for delayed
	// AllowFailure as configured; for when: manual outside rules the
	// default is true.
	AllowFailure bool `json:"allow_failure"`
	// AllowFailureExitCodes: allow_failure:exit_codes — the failure is
	// allowed only for these codes.
	AllowFailureExitCodes []int `json:"allow_failure_exit_codes,omitempty"`
	// Needs: nil when the job has no needs: keyword (stage scheduling);
	// empty but not nil for needs: [] (starts at once). In a Planned job
	// a parallel job is named by its jobs, and optional needs on jobs
	// the pipeline does not have are dropped.
	Needs []Need `json:"needs"`
	// Dependencies: nil for the default (every earlier job, or the needs
	// with artifacts); in a Planned job a parallel job is named by its
	// jobs.
	Dependencies []string `json:"dependencies"`
	Rules        []Rule   `json:"rules,omitempty"` // nil: no rules:
	Only         *Filter  `json:"only,omitempty"`
	Except       *Filter  `json:"except,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	Image        *Image   `json:"image,omitempty"`
	Services     []Image  `json:"services,omitempty"`
	// Variables are the job's own variables (the global ones are in
	// Config.Variables, not copied here; InheritedVariables joins them).
	// In a Planned job they include its matrix values and its matching
	// rule's variables.
	Variables []Variable `json:"variables,omitempty"`
	// InheritVariables is inherit:variables: nil inherits every global
	// variable, an empty list none, a list those named.
	InheritVariables []string      `json:"inherit_variables"`
	Artifacts        *Artifacts    `json:"artifacts,omitempty"`
	Cache            []Cache       `json:"cache,omitempty"`
	ResourceGroup    string        `json:"resource_group,omitempty"`
	Retry            Retry         `json:"retry"`
	Timeout          time.Duration `json:"timeout,omitempty"`  // 0: the project's
	Coverage         string        `json:"coverage,omitempty"` // the regular expression, without slashes (flags as (?i))
	Interruptible    bool          `json:"interruptible,omitempty"`
	Parallel         *Parallel     `json:"parallel,omitempty"`
	Trigger          *Trigger      `json:"trigger,omitempty"`
	// Release is release: (nil without it): the job's release step.
	Release *Release `json:"release,omitempty"`
	// Kept holds the keys the engine does not act on (environment,
	// pages, secrets, id_tokens, hooks, inherit, identity, …) as
	// written, so that nothing the file says is lost.
	Kept map[string]any `json:"kept,omitempty"`
}

// Bridge reports whether the job triggers a downstream pipeline.
func (j *Job) Bridge() bool { return j.Trigger != nil }

// Options tune Load.
type Options struct {
	// Fetch reads an included file (local, project or remote); see
	// Location and the Err* errors it may answer. When it is nil, local
	// files of the pipeline's own project are read with Include and the
	// other kinds fail as unreachable.
	Fetch func(loc Location) (Fetched, error)
	// Include reads an included local file by its path in the repository
	// (without a leading "/"); found is false when there is none. Fetch,
	// when set, is used instead.
	Include func(path string) (data []byte, found bool, err error)
	// Inputs are the configuration's own spec:inputs arguments (the
	// pipeline's inputs).
	Inputs map[string]any
	// MaxIncludes bounds the included files, each inclusion counted
	// (GitLab's ci_max_includes, default 150).
	MaxIncludes int
	// MaxBytes bounds the configuration and each included file (default
	// 1 MiB); all included files together are bounded by ten times it.
	MaxBytes int
	// MaxJobs bounds the jobs a configuration makes, parallel ones
	// counted one by one (default 5000).
	MaxJobs int
	// Variables are what include: sees: $VARIABLES in included paths,
	// and include:rules:if (GitLab gives includes the project's and the
	// predefined variables).
	Variables map[string]string
	// Exists answers include:rules:exists globs (nil: no file exists).
	Exists func(glob string) bool
	// Project and SHA are the full path and commit of the pipeline's own
	// project, the context of its local includes in Config.Includes.
	Project, SHA string
	// FileURLs gives the web blob and raw URLs of a file of a project
	// (full path) at a commit, for Config.Includes (nil: none).
	FileURLs func(project, sha, path string) (blob, raw string)
	// Merged keeps the merged configuration in Config.MergedYAML.
	Merged bool
	// UsedVariables, when set, is set to true when Variables decided
	// something (as Config.UsesVariables), also for a load that fails.
	UsedVariables *bool
}

// Kinds of included files Fetch reads.
const (
	IncludeLocal   = "local"
	IncludeProject = "project"
	IncludeRemote  = "remote"
)

// Location is an included file to read.
type Location struct {
	Kind string // IncludeLocal, IncludeProject or IncludeRemote
	// Project is the full path (lower case) of the project whose
	// repository holds the file; "" is the pipeline's own project (at the
	// pipeline's commit).
	Project string
	// Ref is, for IncludeProject, the ref as written ("HEAD": the
	// project's default branch); for IncludeLocal in another project,
	// the commit its project include read (Fetched.Commit).
	Ref  string
	Path string // local and project files: the path, without a leading "/"
	URL  string // remote files
}

// Fetched is an included file's content.
type Fetched struct {
	Data []byte
	// Commit is, for IncludeProject, the commit Ref named: the file's own
	// local includes are read there.
	Commit string
}

// Errors Fetch answers for a file that cannot be read; each becomes
// GitLab's message for the include. Any other error stops Load and is
// returned as it is.
var (
	ErrFileNotFound    = errors.New("file not found")                     // local or project file, or a template
	ErrProjectNotFound = errors.New("project not found or access denied") // the pipeline's user may not read its code
	ErrRefNotFound     = errors.New("reference not found")
	ErrTooBig          = errors.New("file too big") // more than Options.MaxBytes
	ErrRemoteTimeout   = errors.New("remote: timeout")
	ErrRemoteSocket    = errors.New("remote: socket error") // DNS, connection refused
	ErrRemoteHTTP      = errors.New("remote: HTTP error")   // any other failure of the request
)

// RemoteStatusError is a remote file answered with an HTTP status of
// 400 or more.
type RemoteStatusError struct{ Code int }

func (e *RemoteStatusError) Error() string { return fmt.Sprintf("remote: HTTP %d", e.Code) }

// RemoteBlockedError is a remote file whose address is refused (a local
// address when local requests are not allowed); Reason is GitLab's, as
// "Requests to localhost are not allowed".
type RemoteBlockedError struct{ Reason string }

func (e *RemoteBlockedError) Error() string { return "remote: blocked: " + e.Reason }

// Input is what a pipeline being created knows, for workflow:rules,
// rules:, only: and except:.
type Input struct {
	// Source is the pipeline source: push, web, api, trigger, schedule,
	// pipeline, parent_pipeline, merge_request_event, external, chat, …
	Source string
	Ref    string // branch or tag name, without refs/heads/ or refs/tags/
	Tag    bool
	// ProjectPath is the project's full path, for only:/except: refs
	// written ref@project/path.
	ProjectPath string
	// Variables are every variable the expressions see (predefined,
	// instance, group, project and pipeline variables); Seed adds the
	// configuration's global variables under them.
	Variables map[string]string
	// Changes are the paths the pipeline's push changed; ChangesKnown is
	// false when there is no comparison (a new branch, a non-push source),
	// and then changes: always matches.
	Changes      []string
	ChangesKnown bool
	// Exists reports whether a path matching the glob exists at the
	// pipeline's commit; nil: none do.
	Exists func(glob string) bool
}

// Pipeline is the outcome of seeding a configuration for one pipeline.
type Pipeline struct {
	Name      string     // workflow:name, with variables expanded
	Variables []Variable // variables of the matching workflow rule
	// Stages that hold at least one job, in order.
	Stages []string
	// Jobs in stage order, then in the order of the file (a parallel
	// job's jobs in their order).
	Jobs []Planned
}

// Planned is one job of a pipeline: the configured job with what rules
// decided applied, and parallel jobs expanded.
type Planned struct {
	Job
	// StageIndex is the position of the job's stage in Config.Stages.
	StageIndex int `json:"stage_index"`
	// NodeIndex and NodeTotal number the jobs of parallel: N or
	// parallel:matrix (1-based; 0 when the job is not parallel).
	NodeIndex int `json:"node_index,omitempty"`
	NodeTotal int `json:"node_total,omitempty"`
	// Matrix holds the variables of a parallel:matrix job.
	Matrix map[string]string `json:"matrix,omitempty"`
}
