package entity

import "quarry/internal/ci"

// CILint is GitLab's Entities::Ci::Lint::Result.
type CILint struct {
	Valid      bool            `json:"valid"`
	Errors     []string        `json:"errors"`
	Warnings   []string        `json:"warnings"`
	MergedYAML *string         `json:"merged_yaml"`
	Includes   []CILintInclude `json:"includes"`
	Jobs       *[]any          `json:"jobs,omitempty"`
}

// CILintInclude is one entry of includes: an included file's metadata.
type CILintInclude struct {
	Type           string            `json:"type"`
	Location       string            `json:"location"`
	Blob           *string           `json:"blob"`
	Raw            *string           `json:"raw"`
	Extra          map[string]string `json:"extra"`
	ContextProject *string           `json:"context_project"`
	ContextSHA     *string           `json:"context_sha"`
}

// ciLintStaticJob is a job of a static check (GitLab's
// yaml_processor_result_to_jobs).
type ciLintStaticJob struct {
	ciLintJob
	Only   any          `json:"only"`   // {refs, variables, changes, kubernetes}
	Except any          `json:"except"` // the same
	Needs  []ciLintNeed `json:"needs"`
}

// ciLintJob is a job of a dry run (GitLab's dry_run_convert_to_jobs).
type ciLintJob struct {
	Name         string   `json:"name"`
	Stage        string   `json:"stage"`
	BeforeScript []string `json:"before_script"`
	Script       []string `json:"script"`
	AfterScript  []string `json:"after_script"`
	TagList      []string `json:"tag_list"`
	Environment  *string  `json:"environment"`
	When         string   `json:"when"`
	AllowFailure bool     `json:"allow_failure"`
}

type ciLintNeed struct {
	Name      string `json:"name"`
	Artifacts bool   `json:"artifacts"`
	Optional  bool   `json:"optional"`
}

// CILint renders a lint result; jobs only when asked for (include_jobs).
func (r *Renderer) CILint(res ci.LintResult, includeJobs bool) CILint {
	out := CILint{Valid: res.Valid(), Errors: orEmptyStrings(res.Errors), Warnings: orEmptyStrings(res.Warnings),
		MergedYAML: res.MergedYAML, Includes: []CILintInclude{}}
	for _, in := range res.Includes {
		out.Includes = append(out.Includes, CILintInclude{Type: in.Type, Location: in.Location, Blob: nonEmpty(in.Blob),
			Raw: nonEmpty(in.Raw), Extra: in.Extra, ContextProject: nonEmpty(in.ContextProject), ContextSHA: nonEmpty(in.ContextSHA)})
	}
	if !includeJobs {
		return out
	}
	jobs := []any{}
	out.Jobs = &jobs
	for _, j := range res.Jobs {
		base := ciLintJob{Name: j.Name, Stage: j.Stage, BeforeScript: j.BeforeScript, Script: j.Script, AfterScript: j.AfterScript,
			TagList: j.TagList, Environment: j.Environment, When: j.When, AllowFailure: j.AllowFailure}
		if res.DryRun {
			jobs = append(jobs, base)
			continue
		}
		sj := ciLintStaticJob{ciLintJob: base}
		if j.Only != nil {
			sj.Only = j.Only
		}
		if j.Except != nil {
			sj.Except = j.Except
		}
		if j.Needs != nil {
			sj.Needs = []ciLintNeed{}
			for _, n := range j.Needs {
				sj.Needs = append(sj.Needs, ciLintNeed{Name: n.Job, Artifacts: n.Artifacts, Optional: n.Optional})
			}
		}
		jobs = append(jobs, sj)
	}
	return out
}

func orEmptyStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
