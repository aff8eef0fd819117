package ci

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
)

// LintInput is a CI lint request (GitLab's /projects/:id/ci/lint).
type LintInput struct {
	// Content is the configuration to check (POST); nil checks the
	// project's own file at ContentRef (GET).
	Content *string
	// ContentRef is the commit, branch or tag whose file GET checks
	// ("": the head of the default branch).
	ContentRef string
	// DryRun simulates creating a push pipeline for Ref ("": the default
	// branch): workflow:rules, rules, needs and stages, nothing written.
	DryRun bool
	Ref    string
}

// LintResult is GitLab's Gitlab::Ci::Lint::Result: Valid when Errors is
// empty. MergedYAML and Includes are those of a configuration that
// loaded (nil and empty otherwise); Jobs are the configured jobs of a
// static check, the seeded ones of a dry run.
type LintResult struct {
	Errors     []string
	Warnings   []string
	MergedYAML *string
	Includes   []ciconfig.IncludeRecord
	Jobs       []LintJob
	// DryRun: the jobs are a simulated pipeline's (GitLab then gives no
	// only, except and needs).
	DryRun bool
}

// Valid reports a configuration without errors.
func (r LintResult) Valid() bool { return len(r.Errors) == 0 }

// LintJob is one job of a lint result, as GitLab lists it.
type LintJob struct {
	Name, Stage                       string
	BeforeScript, Script, AfterScript []string
	TagList                           []string
	Only, Except                      *ciconfig.Filter
	Environment                       *string
	When                              string
	AllowFailure                      bool
	Needs                             []ciconfig.Need // nil: no needs:
}

// Lint checks a CI configuration in a project's context. Given content
// needs the right to create pipelines (POST: 403 otherwise); the
// project's own file needs the right to read its code (GET). A dry run
// goes through pipeline creation (the same chain, with its permission
// checks as errors) and stores nothing.
func (s *Service) Lint(ctx context.Context, a auth.Actor, projectRef string, in LintInput) (LintResult, error) {
	p, acc, err := s.projects.Resolve(ctx, a, projectRef)
	if err != nil {
		return LintResult{}, err
	}
	res := auth.Resource{Project: &p, Access: acc}
	if in.Content != nil && !auth.Can(a, auth.RunPipeline, res) {
		return LintResult{}, model.Forbidden("")
	}
	if in.Content == nil && !auth.Can(a, auth.ReadCode, res) {
		return LintResult{}, model.Forbidden("")
	}
	repo, err := s.repo(p)
	if err != nil {
		return LintResult{}, err
	}
	empty, err := repo.Empty(ctx)
	if err != nil {
		return LintResult{}, err
	}
	var content []byte
	var commit git.ObjectID
	if in.Content != nil {
		content = []byte(*in.Content)
		if !empty && p.DefaultBranch != "" {
			if commit, err = repo.CommitID(ctx, "refs/heads/"+p.DefaultBranch); err != nil && !errors.Is(err, gitrepo.ErrRefNotFound) {
				return LintResult{}, err
			}
		}
	} else {
		if empty {
			return LintResult{}, model.NotFound("Repository")
		}
		rev := in.ContentRef
		if rev == "" {
			rev = "refs/heads/" + p.DefaultBranch
		}
		if !validRev(rev) {
			return LintResult{}, model.NotFound("Commit")
		}
		commit, err = repo.CommitID(ctx, rev)
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return LintResult{}, model.NotFound("Commit")
		}
		if err != nil {
			return LintResult{}, err
		}
		f, err := s.newIncludes(ctx, repo, commit, a.User).blob(repo, commit, s.configPath(ctx, p))
		switch {
		case errors.Is(err, ciconfig.ErrTooBig):
			return LintResult{Errors: []string{"The parsed YAML is too big"}}, nil
		case err != nil && !errors.Is(err, ciconfig.ErrFileNotFound):
			return LintResult{}, err
		}
		content = f.Data // a missing file is empty content
	}
	if in.DryRun {
		return s.lintDryRun(ctx, a, p, acc, repo, content, in.Ref)
	}
	return s.lintStatic(ctx, a, p, repo, commit, content)
}

// validRev refuses revisions git would read as options or ranges.
func validRev(rev string) bool {
	return rev != "" && rev[0] != '-' && len(rev) <= 1024 && !strings.ContainsAny(rev, "\x00\n") && !strings.Contains(rev, "..")
}

// lintStatic loads the configuration at a commit of the project (its
// local includes read there) with the variables of a push pipeline on
// the default branch, unprotected (GitLab's static check gives the
// ref only to a user who may push to it; protected variables never
// reach a static check here).
func (s *Service) lintStatic(ctx context.Context, a auth.Actor, p model.Project, repo *gitrepo.Repo, commit git.ObjectID, content []byte) (LintResult, error) {
	var vars map[string]string
	if commit != "" {
		c, err := repo.ReadCommit(ctx, string(commit))
		if err != nil {
			return LintResult{}, fmt.Errorf("read commit %s: %w", commit, err)
		}
		req := request{project: p, source: model.SourcePush, user: a.User}
		if vars, err = s.expressionVariables(ctx, req, resolvedRef{name: p.DefaultBranch, sha: commit}, c, false); err != nil {
			return LintResult{}, err
		}
	}
	cfg, _, err := s.loadConfig(ctx, configLoad{repo: repo, project: p, commit: commit, content: content, user: a.User, vars: vars, merged: true})
	if err != nil {
		var ce *ciconfig.Error
		if errors.As(err, &ce) {
			return LintResult{Errors: []string{ce.Message}, Warnings: []string{}}, nil
		}
		return LintResult{}, err
	}
	out := loadedResult(cfg)
	for _, stage := range cfg.Stages {
		for _, j := range cfg.Jobs {
			if j.Stage == stage {
				out.Jobs = append(out.Jobs, lintJob(*j))
			}
		}
	}
	return out, nil
}

// lintDryRun runs the creation chain of a push pipeline for ref with the
// content as its configuration and stops before anything is written.
// Chain failures (a ref that does not exist, permissions, workflow or
// rules leaving nothing to run, an invalid configuration) are errors of
// the result, as GitLab's pipeline error messages.
func (s *Service) lintDryRun(ctx context.Context, a auth.Actor, p model.Project, acc model.AccessLevel, repo *gitrepo.Repo, content []byte, ref string) (LintResult, error) {
	if ref == "" {
		ref = p.DefaultBranch
	}
	fail := func(msg string) (LintResult, error) {
		return LintResult{Errors: []string{msg}, Warnings: []string{}, DryRun: true}, nil
	}
	if !auth.Can(a, auth.RunPipeline, auth.Resource{Project: &p, Access: acc}) {
		return fail("Insufficient permissions to create a new pipeline")
	}
	r, err := resolveRef(ctx, repo, ref, "")
	if msg, ok := chainMessage(err); ok {
		return fail(msg)
	} else if err != nil {
		return LintResult{}, err
	}
	may, err := s.mayRunOn(ctx, a, &p, acc, r.name, r.tag)
	if err != nil {
		return LintResult{}, err
	}
	if !may {
		return fail(msgProtectedRef)
	}
	dry := &dryRun{content: content}
	_, err = s.create(ctx, request{project: p, source: model.SourcePush, resolved: &r, user: a.User, dry: dry})
	if msg, ok := chainMessage(err); ok {
		out := LintResult{Errors: []string{msg}, Warnings: []string{}, DryRun: true}
		if dry.cfg != nil {
			out.MergedYAML, out.Includes = &dry.cfg.MergedYAML, dry.cfg.Includes
		}
		return out, nil
	} else if err != nil {
		return LintResult{}, err
	}
	out := loadedResult(dry.cfg)
	out.DryRun = true
	for _, j := range dry.seed.Jobs {
		out.Jobs = append(out.Jobs, lintJob(j.Job))
	}
	return out, nil
}

// loadedResult is the result of a configuration that loaded.
func loadedResult(cfg *ciconfig.Config) LintResult {
	merged := cfg.MergedYAML
	return LintResult{Errors: []string{}, Warnings: []string{}, MergedYAML: &merged, Includes: cfg.Includes, Jobs: []LintJob{}}
}

// chainMessage is the message of a creation chain failure.
func chainMessage(err error) (string, bool) {
	var me *model.Error
	if errors.As(err, &me) && me.Kind == model.KindInvalid {
		if msgs := me.Fields["base"]; len(msgs) > 0 {
			return msgs[0], true
		}
	}
	return "", false
}

// lintJob is a configured or seeded job as the lint result lists it.
func lintJob(j ciconfig.Job) LintJob {
	out := LintJob{Name: j.Name, Stage: j.Stage, BeforeScript: orEmpty(j.BeforeScript), Script: orEmpty(j.Script),
		AfterScript: orEmpty(j.AfterScript), TagList: orEmpty(j.Tags), Only: j.Only, Except: j.Except, When: j.When,
		AllowFailure: j.AllowFailure, Needs: j.Needs}
	if out.When == "" {
		out.When = model.WhenOnSuccess
	}
	switch e := j.Kept["environment"].(type) {
	case string:
		out.Environment = &e
	case map[string]any:
		if name, ok := e["name"].(string); ok {
			out.Environment = &name
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
