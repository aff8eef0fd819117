package entity

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
	"quarry/internal/testreport"
)

// CI entities: pipelines, jobs and bridges, variables, triggers,
// resource groups, test reports, commit statuses.

type PipelineBasic struct {
	ID        int64  `json:"id"`
	IID       int64  `json:"iid"`
	ProjectID int64  `json:"project_id"`
	SHA       string `json:"sha"`
	Ref       string `json:"ref"`
	Status    string `json:"status"`
	Source    string `json:"source"`
	CreatedAt Time   `json:"created_at"`
	UpdatedAt Time   `json:"updated_at"`
	WebURL    string `json:"web_url"`
}

type DetailedStatus struct {
	Icon         string  `json:"icon"`
	Text         string  `json:"text"`
	Label        string  `json:"label"`
	Group        string  `json:"group"`
	Tooltip      string  `json:"tooltip"`
	HasDetails   bool    `json:"has_details"`
	DetailsPath  string  `json:"details_path"`
	Illustration *string `json:"illustration"`
	Favicon      string  `json:"favicon"`
}

type Pipeline struct {
	PipelineBasic
	Name           *string         `json:"name"`
	BeforeSHA      string          `json:"before_sha"`
	Tag            bool            `json:"tag"`
	YAMLErrors     *string         `json:"yaml_errors"`
	User           *UserBasic      `json:"user"`
	StartedAt      *Time           `json:"started_at"`
	FinishedAt     *Time           `json:"finished_at"`
	CommittedAt    *Time           `json:"committed_at"`
	Duration       *int64          `json:"duration"`
	QueuedDuration *int64          `json:"queued_duration"`
	Coverage       *string         `json:"coverage"`
	DetailedStatus *DetailedStatus `json:"detailed_status"`
}

func (r *Renderer) pipelineURL(projectPath string, id int64) string {
	return r.ExternalURL + "/" + projectPath + "/-/pipelines/" + strconv.FormatInt(id, 10)
}

// PipelineBasic is a pipeline's list form.
func (r *Renderer) PipelineBasic(p model.Pipeline, projectPath string) PipelineBasic {
	return PipelineBasic{ID: p.ID, IID: p.IID, ProjectID: p.ProjectID, SHA: p.SHA, Ref: p.Ref, Status: string(p.Status),
		Source: p.Source, CreatedAt: Time(p.CreatedAt), UpdatedAt: Time(p.UpdatedAt), WebURL: r.pipelineURL(projectPath, p.ID)}
}

// Pipeline is a pipeline's full form.
func (r *Renderer) Pipeline(v ci.PipelineView) Pipeline {
	p := v.Pipeline
	j := Pipeline{PipelineBasic: r.PipelineBasic(p, v.ProjectPath), Name: StrPtr(p.Name), BeforeSHA: p.BeforeSHA, Tag: p.Tag,
		YAMLErrors: StrPtr(p.YAMLErrors), StartedAt: TimePtr(p.StartedAt), FinishedAt: TimePtr(p.FinishedAt),
		CommittedAt: TimePtr(p.CommittedAt), Duration: p.Duration}
	if v.User != nil {
		u := r.UserBasic(v.User)
		j.User = &u
	}
	if p.StartedAt != nil {
		if q := int64(p.StartedAt.Sub(p.CreatedAt).Seconds()); q > 0 {
			j.QueuedDuration = &q
		}
	}
	if p.Coverage != nil {
		c := fmt.Sprintf("%.2f", *p.Coverage)
		j.Coverage = &c
	}
	ds := r.detailedStatus(p.Status, r.pipelineURL(v.ProjectPath, p.ID)[len(r.ExternalURL):])
	j.DetailedStatus = &ds
	return j
}

// statusTexts are GitLab's words for each status: text, label, icon.
var statusTexts = map[model.CIStatus][3]string{
	model.StatusCreated:            {"Created", "created", "status_created"},
	model.StatusWaitingForResource: {"Waiting", "waiting for resource", "status_pending"},
	model.StatusPreparing:          {"Preparing", "preparing", "status_preparing"},
	model.StatusPending:            {"Pending", "pending", "status_pending"},
	model.StatusRunning:            {"Running", "running", "status_running"},
	model.StatusSuccess:            {"Passed", "passed", "status_success"},
	model.StatusFailed:             {"Failed", "failed", "status_failed"},
	model.StatusCanceling:          {"Canceling", "canceling", "status_canceled"},
	model.StatusCanceled:           {"Canceled", "canceled", "status_canceled"},
	model.StatusSkipped:            {"Skipped", "skipped", "status_skipped"},
	model.StatusManual:             {"Blocked", "manual action", "status_manual"},
	model.StatusScheduled:          {"Scheduled", "scheduled", "status_scheduled"},
}

func (r *Renderer) detailedStatus(s model.CIStatus, path string) DetailedStatus {
	t := statusTexts[s]
	group := string(s)
	return DetailedStatus{Icon: t[2], Text: t[0], Label: t[1], Group: group, Tooltip: t[1], HasDetails: true, DetailsPath: path,
		Favicon: "/assets/ci_favicons/favicon_" + t[2] + ".png"}
}

type JobPipeline struct {
	PipelineBasic
}

type ArtifactFile struct {
	Filename string `json:"filename"`
	Size     int64  `json:"size"`
}

type JobArtifact struct {
	FileType   string  `json:"file_type"`
	Size       int64   `json:"size"`
	Filename   string  `json:"filename"`
	FileFormat *string `json:"file_format"`
}

type JobProject struct {
	CIJobTokenScopeEnabled bool `json:"ci_job_token_scope_enabled"`
}

// JobBasic is a job as every job entity shows it.
type JobBasic struct {
	ID             int64         `json:"id"`
	Status         string        `json:"status"`
	Stage          string        `json:"stage"`
	Name           string        `json:"name"`
	Ref            string        `json:"ref"`
	Tag            bool          `json:"tag"`
	Coverage       *float64      `json:"coverage"`
	AllowFailure   bool          `json:"allow_failure"`
	CreatedAt      Time          `json:"created_at"`
	StartedAt      *Time         `json:"started_at"`
	FinishedAt     *Time         `json:"finished_at"`
	ErasedAt       *Time         `json:"erased_at"`
	Duration       *float64      `json:"duration"`
	QueuedDuration *float64      `json:"queued_duration"`
	User           *User         `json:"user"`
	Commit         *Commit       `json:"commit"`
	Pipeline       PipelineBasic `json:"pipeline"`
	FailureReason  string        `json:"failure_reason,omitempty"`
	WebURL         string        `json:"web_url"`
	Project        JobProject    `json:"project"`
}

// Job is a build's full form.
type Job struct {
	JobBasic
	ArtifactsFile     *ArtifactFile `json:"artifacts_file,omitempty"`
	Artifacts         []JobArtifact `json:"artifacts"`
	Runner            *Runner       `json:"runner"`
	RunnerManager     *struct{}     `json:"runner_manager"`
	ArtifactsExpireAt *Time         `json:"artifacts_expire_at,omitempty"`
	Archived          bool          `json:"archived"`
	TagList           []string      `json:"tag_list"`
}

// Bridge is a trigger job with the pipeline it started.
type Bridge struct {
	JobBasic
	DownstreamPipeline *PipelineBasic `json:"downstream_pipeline"`
}

func seconds(d time.Duration) *float64 {
	s := math.Round(d.Seconds()*1000) / 1000
	return &s
}

// JobBasic renders a job in GitLab's short form (every job entity's
// common part; alone for a resource group's upcoming and current jobs).
func (r *Renderer) JobBasic(v ci.JobView, viewer auth.Actor) JobBasic {
	j := v.Job
	now := r.Now()
	out := JobBasic{ID: j.ID, Status: string(j.Status), Stage: j.Stage, Name: j.Name, Ref: j.Ref, Tag: j.Tag, Coverage: j.Coverage,
		AllowFailure: j.AllowFailure, CreatedAt: Time(j.CreatedAt), StartedAt: TimePtr(j.StartedAt),
		FinishedAt: TimePtr(j.FinishedAt), ErasedAt: TimePtr(j.ErasedAt), Pipeline: r.PipelineBasic(v.Pipeline, v.ProjectPath),
		WebURL: r.ExternalURL + "/" + v.ProjectPath + "/-/jobs/" + strconv.FormatInt(j.ID, 10)}
	if j.Status == model.StatusFailed {
		out.FailureReason = string(j.FailureReason)
		if out.FailureReason == "" {
			out.FailureReason = string(model.FailureUnknown)
		}
	}
	if j.StartedAt != nil {
		end := now
		if j.FinishedAt != nil {
			end = *j.FinishedAt
		}
		out.Duration = seconds(end.Sub(*j.StartedAt))
	}
	if j.QueuedAt != nil {
		end := now
		if j.StartedAt != nil {
			end = *j.StartedAt
		} else if j.Status.Completed() {
			end = j.UpdatedAt
		}
		out.QueuedDuration = seconds(end.Sub(*j.QueuedAt))
	}
	if v.User != nil {
		u := r.User(v.User, viewer)
		out.User = &u
	}
	if v.Commit != nil {
		c := r.Commit(*v.Commit, "/"+v.ProjectPath+"/-/commit/"+string(v.Commit.ID))
		out.Commit = &c
	}
	return out
}

// Job renders a build.
func (r *Renderer) Job(v ci.JobView, viewer auth.Actor) Job {
	out := Job{JobBasic: r.JobBasic(v, viewer), Artifacts: []JobArtifact{}, TagList: v.TagList}
	if out.TagList == nil {
		out.TagList = []string{}
	}
	if v.Runner != nil {
		rn := r.Runner(v.Runner, false)
		out.Runner = &rn
	}
	for _, a := range v.Artifacts {
		f := a.Format
		out.Artifacts = append(out.Artifacts, JobArtifact{FileType: a.FileType, Size: a.Size, Filename: a.FileName, FileFormat: &f})
		if a.FileType == "archive" {
			out.ArtifactsFile = &ArtifactFile{Filename: a.FileName, Size: a.Size}
			out.ArtifactsExpireAt = TimePtr(a.ExpireAt)
		}
	}
	return out
}

// Jobs renders builds.
func (r *Renderer) Jobs(list []ci.JobView, viewer auth.Actor) []Job {
	out := make([]Job, len(list))
	for i := range list {
		out[i] = r.Job(list[i], viewer)
	}
	return out
}

// Bridge renders a trigger job.
func (r *Renderer) Bridge(v ci.JobView, viewer auth.Actor) Bridge {
	out := Bridge{JobBasic: r.JobBasic(v, viewer)}
	if v.Downstream != nil {
		d := r.PipelineBasic(*v.Downstream, v.ProjectPath)
		out.DownstreamPipeline = &d
	}
	return out
}

type Variable struct {
	VariableType     string  `json:"variable_type"`
	Key              string  `json:"key"`
	Value            *string `json:"value"`
	Protected        bool    `json:"protected"`
	Masked           bool    `json:"masked"`
	Hidden           bool    `json:"hidden"`
	Raw              bool    `json:"raw"`
	EnvironmentScope string  `json:"environment_scope"`
	Description      *string `json:"description"`
}

// Variable renders a CI/CD variable; a hidden one's value never leaves.
func (r *Renderer) Variable(v model.CIVariable) Variable {
	out := Variable{VariableType: v.VariableType, Key: v.Key, Protected: v.Protected, Masked: v.Masked, Hidden: v.Hidden, Raw: v.Raw,
		EnvironmentScope: v.EnvironmentScope, Description: StrPtr(v.Description)}
	if !v.Hidden {
		out.Value = &v.Value
	}
	return out
}

type InstanceVariable struct {
	VariableType string  `json:"variable_type"`
	Key          string  `json:"key"`
	Value        string  `json:"value"`
	Protected    bool    `json:"protected"`
	Masked       bool    `json:"masked"`
	Raw          bool    `json:"raw"`
	Description  *string `json:"description"`
}

// InstanceVariable renders one of the instance's CI/CD variables: no
// environment scope and no hidden flag, which it never has (GitLab's
// Entities::Ci::Variable shows only what the record has).
func (r *Renderer) InstanceVariable(v model.CIVariable) InstanceVariable {
	return InstanceVariable{VariableType: v.VariableType, Key: v.Key, Value: v.Value, Protected: v.Protected, Masked: v.Masked,
		Raw: v.Raw, Description: StrPtr(v.Description)}
}

type PipelineVariable struct {
	Key          string `json:"key"`
	VariableType string `json:"variable_type"`
	Value        string `json:"value"`
}

type Trigger struct {
	ID          int64      `json:"id"`
	Token       string     `json:"token"`
	Description string     `json:"description"`
	CreatedAt   Time       `json:"created_at"`
	UpdatedAt   Time       `json:"updated_at"`
	LastUsed    *Time      `json:"last_used"`
	ExpiresAt   *string    `json:"expires_at"`
	Owner       *UserBasic `json:"owner"`
}

// Trigger renders a trigger token's record: the token itself only when
// it was just made, otherwise its first characters.
func (r *Renderer) Trigger(v ci.TriggerView) Trigger {
	out := Trigger{ID: v.ID, Token: v.TokenHint, Description: v.Description, CreatedAt: Time(v.CreatedAt),
		UpdatedAt: Time(v.UpdatedAt), LastUsed: TimePtr(v.LastUsed), ExpiresAt: StrPtr(v.ExpiresAt)}
	if v.Token != "" {
		out.Token = v.Token
	}
	if v.Owner != nil {
		u := r.UserBasic(v.Owner)
		out.Owner = &u
	}
	return out
}

type ResourceGroup struct {
	ID          int64  `json:"id"`
	Key         string `json:"key"`
	ProcessMode string `json:"process_mode"`
	CreatedAt   Time   `json:"created_at"`
	UpdatedAt   Time   `json:"updated_at"`
}

func (r *Renderer) ResourceGroup(g model.ResourceGroup) ResourceGroup {
	return ResourceGroup{ID: g.ID, Key: g.Key, ProcessMode: g.ProcessMode, CreatedAt: Time(g.CreatedAt), UpdatedAt: Time(g.UpdatedAt)}
}

type CommitStatus struct {
	ID           int64      `json:"id"`
	SHA          string     `json:"sha"`
	Ref          string     `json:"ref"`
	Status       string     `json:"status"`
	Name         string     `json:"name"`
	TargetURL    *string    `json:"target_url"`
	Description  *string    `json:"description"`
	CreatedAt    Time       `json:"created_at"`
	StartedAt    *Time      `json:"started_at"`
	FinishedAt   *Time      `json:"finished_at"`
	AllowFailure bool       `json:"allow_failure"`
	Coverage     *float64   `json:"coverage"`
	PipelineID   int64      `json:"pipeline_id"`
	Author       *UserBasic `json:"author"`
}

// CommitStatus renders a job as a status of its commit.
func (r *Renderer) CommitStatus(v ci.JobView) CommitStatus {
	out := CommitStatus{ID: v.ID, SHA: v.SHA, Ref: v.Ref, Status: string(v.Status), Name: v.Name, TargetURL: StrPtr(v.TargetURL),
		Description: StrPtr(v.Description), CreatedAt: Time(v.CreatedAt), StartedAt: TimePtr(v.StartedAt),
		FinishedAt: TimePtr(v.FinishedAt), AllowFailure: v.AllowFailure, Coverage: v.Coverage, PipelineID: v.PipelineID}
	if v.User != nil {
		u := r.UserBasic(v.User)
		out.Author = &u
	}
	return out
}

type TestCase struct {
	Status        string  `json:"status"`
	Name          string  `json:"name"`
	Classname     string  `json:"classname"`
	File          *string `json:"file"`
	ExecutionTime float64 `json:"execution_time"`
	SystemOutput  *string `json:"system_output"`
	StackTrace    *string `json:"stack_trace"`
}

type TestSuite struct {
	Name         string     `json:"name"`
	TotalTime    float64    `json:"total_time"`
	TotalCount   int        `json:"total_count"`
	SuccessCount int        `json:"success_count"`
	FailedCount  int        `json:"failed_count"`
	SkippedCount int        `json:"skipped_count"`
	ErrorCount   int        `json:"error_count"`
	SuiteError   *string    `json:"suite_error"`
	TestCases    []TestCase `json:"test_cases"`
}

type TestReport struct {
	TotalTime    float64     `json:"total_time"`
	TotalCount   int         `json:"total_count"`
	SuccessCount int         `json:"success_count"`
	FailedCount  int         `json:"failed_count"`
	SkippedCount int         `json:"skipped_count"`
	ErrorCount   int         `json:"error_count"`
	TestSuites   []TestSuite `json:"test_suites"`
}

// TestReportOf renders a pipeline's test report.
func TestReportOf(rep testreport.Report) TestReport {
	out := TestReport{TotalTime: rep.TotalTime, TotalCount: rep.TotalCount, SuccessCount: rep.SuccessCount,
		FailedCount: rep.FailedCount, SkippedCount: rep.SkippedCount, ErrorCount: rep.ErrorCount, TestSuites: []TestSuite{}}
	for _, s := range rep.Suites {
		ts := TestSuite{Name: s.Name, TotalTime: s.TotalTime, TotalCount: s.TotalCount, SuccessCount: s.SuccessCount,
			FailedCount: s.FailedCount, SkippedCount: s.SkippedCount, ErrorCount: s.ErrorCount, SuiteError: StrPtr(s.SuiteError),
			TestCases: []TestCase{}}
		for _, c := range s.Cases {
			ts.TestCases = append(ts.TestCases, TestCase{Status: c.Status, Name: c.Name, Classname: c.Classname, File: StrPtr(c.File),
				ExecutionTime: c.ExecutionTime, SystemOutput: c.SystemOutput, StackTrace: c.StackTrace})
		}
		out.TestSuites = append(out.TestSuites, ts)
	}
	return out
}

type SummaryTotal struct {
	Time       float64 `json:"time"`
	Count      int     `json:"count"`
	Success    int     `json:"success"`
	Failed     int     `json:"failed"`
	Skipped    int     `json:"skipped"`
	Error      int     `json:"error"`
	SuiteError *string `json:"suite_error"`
}

type SummarySuite struct {
	Name         string  `json:"name"`
	TotalTime    float64 `json:"total_time"`
	TotalCount   int     `json:"total_count"`
	SuccessCount int     `json:"success_count"`
	FailedCount  int     `json:"failed_count"`
	SkippedCount int     `json:"skipped_count"`
	ErrorCount   int     `json:"error_count"`
	BuildIDs     []int64 `json:"build_ids"`
	SuiteError   *string `json:"suite_error"`
}

type TestReportSummary struct {
	Total      SummaryTotal   `json:"total"`
	TestSuites []SummarySuite `json:"test_suites"`
}

// TestReportSummaryOf renders a pipeline's test report summary.
func TestReportSummaryOf(s testreport.Summary) TestReportSummary {
	out := TestReportSummary{Total: SummaryTotal{Time: s.Total.Time, Count: s.Total.Count, Success: s.Total.Success,
		Failed: s.Total.Failed, Skipped: s.Total.Skipped, Error: s.Total.Error, SuiteError: StrPtr(s.Total.SuiteError)},
		TestSuites: []SummarySuite{}}
	for _, su := range s.Suites {
		out.TestSuites = append(out.TestSuites, SummarySuite{Name: su.Name, TotalTime: su.TotalTime, TotalCount: su.TotalCount,
			SuccessCount: su.SuccessCount, FailedCount: su.FailedCount, SkippedCount: su.SkippedCount, ErrorCount: su.ErrorCount,
			BuildIDs: su.BuildIDs, SuiteError: StrPtr(su.SuiteError)})
	}
	return out
}
