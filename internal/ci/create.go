package ci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// DefaultConfigPath is where a project's CI configuration lives unless
// its ci_config_path says otherwise.
const DefaultConfigPath = ".gitlab-ci.yml"

// request is one pipeline to create, from whichever source.
type request struct {
	project model.Project
	source  string
	ref     string // branch or tag name
	sha     string // "": the ref's tip
	before  string // "": forty zeros
	user    *model.User
	// variables are the pipeline's own (API, trigger, forwarded).
	variables []model.Variable
	// save keeps a pipeline whose configuration is invalid, failed, with
	// its yaml_errors (push, trigger, parent pipelines); the API answers
	// 400 instead.
	save bool
	// skipOption: the push asked not to run CI (push option ci.skip).
	skipOption   bool
	changes      []string
	changesKnown bool
	// include makes a child pipeline of these files instead of the
	// project's configuration; parent and parentJob link it.
	include   []string
	parent    *model.Pipeline
	parentJob *model.Job
	triggered bool
	// eventKey names the refs-changed event of a push pipeline.
	eventKey string
	// resolved is the ref and commit when the caller resolved them
	// already (to check who may run on it).
	resolved *resolvedRef
	// mergeRequest is the merge request a merge_request_event pipeline
	// runs for.
	mergeRequest *model.MergeRequest
	// link, when set, runs in the transaction that stores the pipeline
	// (a schedule's pipeline records its schedule).
	link func(ctx context.Context, tx *store.Tx, p *model.Pipeline) error
	// dry, when set, makes the creation a simulation (the lint API's
	// dry run): the chain runs to the seeded jobs, nothing is stored,
	// and what it found is left in dry.
	dry *dryRun
}

// dryRun is a simulated creation: its configuration (content, not the
// project's file), and what the chain made of it.
type dryRun struct {
	content []byte
	cfg     *ciconfig.Config
	seed    *ciconfig.Pipeline
}

// chainError is a failure of the creation chain with GitLab's message:
// 400 {"message":{"base":["…"]}}.
func chainError(msg string) error { return model.Invalid("base", msg) }

// Chain messages (reference §9.2).
const (
	msgRefNotFound    = "Reference not found"
	msgCommitNotFound = "Commit not found"
	msgRefAmbiguous   = "Ref is ambiguous"
	msgMissingConfig  = "Missing CI config file"
	msgProtectedRef   = "Insufficient permissions for protected ref"
)

var skipCI = regexp.MustCompile(`(?i)\[(ci[ _-]skip|skip[ _-]ci)\]`)

// resolvedRef is a ref of a repository and the commit a pipeline runs.
type resolvedRef struct {
	name string
	tag  bool
	sha  git.ObjectID
	// protected, when not nil, is whether the ref is protected, as the
	// rules read to decide who may run on it said.
	protected *bool
}

// resolveRef finds the branch or tag a pipeline runs for and its commit
// (a tag peeled to the commit it names). A full ref (refs/heads/…,
// refs/tags/…) names one kind; a bare name that is both a branch and a
// tag is ambiguous. sha, when given, is the commit (a push's new value).
func resolveRef(ctx context.Context, repo *gitrepo.Repo, ref, sha string) (resolvedRef, error) {
	kinds := []string{"refs/heads/", "refs/tags/"}
	switch {
	case strings.HasPrefix(ref, "refs/heads/"):
		kinds = kinds[:1]
	case strings.HasPrefix(ref, "refs/tags/"):
		kinds = kinds[1:]
	}
	name := strings.TrimPrefix(strings.TrimPrefix(ref, "refs/heads/"), "refs/tags/")
	if name == "" || strings.HasPrefix(name, "-") || strings.Contains(name, "..") {
		return resolvedRef{}, chainError(msgRefNotFound)
	}
	var found []resolvedRef
	for _, k := range kinds {
		id, err := repo.CommitID(ctx, k+name)
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			continue
		}
		if err != nil {
			return resolvedRef{}, err
		}
		found = append(found, resolvedRef{name: name, tag: k == "refs/tags/", sha: id})
	}
	switch len(found) {
	case 0:
		return resolvedRef{}, chainError(msgRefNotFound)
	case 2:
		return resolvedRef{}, chainError(msgRefAmbiguous)
	}
	r := found[0]
	if sha != "" {
		id, err := repo.CommitID(ctx, sha)
		if errors.Is(err, gitrepo.ErrRefNotFound) {
			return r, chainError(msgCommitNotFound)
		}
		if err != nil {
			return r, err
		}
		r.sha = id
	}
	return r, nil
}

// configPath is where the project keeps its CI configuration: its
// ci_config_path, else the instance's default_ci_config_path, else
// .gitlab-ci.yml.
func (s *Service) configPath(ctx context.Context, p model.Project) string {
	if c := p.Settings.CIConfigPath; c != nil && strings.TrimSpace(*c) != "" {
		return strings.TrimPrefix(strings.TrimSpace(*c), "/")
	}
	if st, err := s.Settings(ctx); err == nil {
		if c := st.DefaultCIConfigPath; c != nil && strings.TrimSpace(*c) != "" {
			return strings.TrimPrefix(strings.TrimSpace(*c), "/")
		}
	}
	return DefaultConfigPath
}

// configLoad is one load of a configuration: where it is read, and what
// its includes see.
type configLoad struct {
	repo    *gitrepo.Repo
	project model.Project
	commit  git.ObjectID
	path    string
	// include makes a child pipeline's configuration of these files.
	include []string
	// content, when not nil, is the configuration itself (the lint API),
	// read instead of the file at path; it is never cached.
	content []byte
	user    *model.User
	// vars are what includes see: GitLab's config_variables (predefined,
	// instance, group and project variables, the pipeline's own).
	vars map[string]string
	// merged keeps the merged YAML (the lint API).
	merged bool
}

// loadConfig reads and loads a configuration (the project's file, a
// child pipeline's includes, or given content), with its includes read
// as the pipeline's user and seeing ld.vars. found is false when the
// project's file does not exist.
//
// A configuration read from a commit is cached by commit and path
// unless it included a file of another project or a remote one, or its
// variables decided something (a $VARIABLE in an include's location,
// include:rules, expand_vars): only a configuration that is the same
// whatever the variables are is cached, so a cached one is right for
// every pipeline at its commit, and no variable value is ever part of
// the key.
func (s *Service) loadConfig(ctx context.Context, ld configLoad) (cfg *ciconfig.Config, found bool, err error) {
	key := configKey{repo: ld.repo.Path(), commit: string(ld.commit), path: ld.path, include: strings.Join(ld.include, "\x00")}
	cacheable := ld.content == nil && !ld.merged
	if cacheable {
		if c, ok := s.configs.Get(key); ok {
			return c.cfg, true, c.err
		}
	}
	inc := s.newIncludes(ctx, ld.repo, ld.commit, ld.user)
	usedVars := false
	opts := ciconfig.Options{MaxBytes: s.cfg.MaxConfigBytes, Fetch: inc.fetch, MaxIncludes: int(min(inc.settings.CIMaxIncludes, 10_000)),
		Variables: ld.vars, UsedVariables: &usedVars, Exists: s.existsAt(ctx, ld.repo, ld.commit),
		Project: ld.project.FullPath(), SHA: string(ld.commit), FileURLs: s.fileURLs, Merged: ld.merged}
	switch {
	case ld.content != nil:
		cfg, err = ciconfig.Load(ld.content, opts)
	case ld.include != nil:
		cfg, err = ciconfig.LoadIncludes(ld.include, opts)
	default:
		f, rerr := inc.blob(ld.repo, ld.commit, ld.path)
		switch {
		case errors.Is(rerr, ciconfig.ErrFileNotFound):
			return nil, false, nil
		case errors.Is(rerr, ciconfig.ErrTooBig):
			err = &ciconfig.Error{Message: "The parsed YAML is too big", Reason: ciconfig.ReasonConfig}
		case rerr != nil:
			return nil, false, rerr
		default:
			cfg, err = ciconfig.Load(f.Data, opts)
		}
	}
	if err != nil && !isConfigError(err) {
		return nil, true, err
	}
	if cacheable && !inc.external && !usedVars {
		s.configs.Add(key, cachedConfig{cfg: cfg, err: err})
	}
	return cfg, true, err
}

// fileURLs are the web blob and raw URLs of a file of a project at a
// commit (an included file's, in the lint API's includes).
func (s *Service) fileURLs(project, sha, path string) (blob, raw string) {
	base := s.cfg.ExternalURL + "/" + project + "/-/"
	return base + "blob/" + sha + "/" + path, base + "raw/" + sha + "/" + path
}

func isConfigError(err error) bool {
	var ce *ciconfig.Error
	return errors.As(err, &ce)
}

// create runs the creation chain (reference §9.2) and stores the
// pipeline: ref, commit, configuration, [skip ci], YAML, workflow rules,
// job rules; then the pipeline, its variables, jobs and persistent ref,
// processed once, in one transaction. A chain failure is chainError, or,
// for an invalid configuration with save, a stored failed pipeline.
func (s *Service) create(ctx context.Context, req request) (model.Pipeline, error) {
	repo, err := s.repo(req.project)
	if err != nil {
		return model.Pipeline{}, err
	}
	var ref resolvedRef
	if req.resolved != nil {
		ref = *req.resolved
	} else if ref, err = resolveRef(ctx, repo, req.ref, req.sha); err != nil {
		return model.Pipeline{}, err
	}
	commit, err := repo.ReadCommit(ctx, string(ref.sha))
	if err != nil {
		return model.Pipeline{}, fmt.Errorf("read commit %s: %w", ref.sha, err)
	}
	var protected bool
	if ref.protected != nil {
		protected = *ref.protected
	} else if protected, err = s.protectedRef(ctx, req.project.ID, ref); err != nil {
		return model.Pipeline{}, err
	}
	vars, err := s.expressionVariables(ctx, req, ref, commit, protected)
	if err != nil {
		return model.Pipeline{}, err
	}
	ld := configLoad{repo: repo, project: req.project, commit: ref.sha, path: s.configPath(ctx, req.project), include: req.include,
		user: req.user, vars: vars}
	if req.dry != nil {
		ld.content, ld.merged = req.dry.content, true
	}
	cfg, found, cerr := s.loadConfig(ctx, ld)
	if cerr != nil && !isConfigError(cerr) {
		return model.Pipeline{}, cerr
	}
	if !found {
		return model.Pipeline{}, chainError(msgMissingConfig)
	}
	if req.dry != nil {
		req.dry.cfg = cfg
	}
	p := model.Pipeline{ProjectID: req.project.ID, Ref: ref.name, Tag: ref.tag, SHA: string(ref.sha), BeforeSHA: req.before,
		Source: req.source, Status: model.StatusCreated, Protected: protected, EventKey: req.eventKey}
	if p.BeforeSHA == "" {
		p.BeforeSHA = model.ZeroRef
	}
	if req.user != nil {
		p.UserID = req.user.ID
	}
	if !commit.Committer.When.IsZero() {
		at := commit.Committer.When.UTC()
		p.CommittedAt = &at
	}
	if req.parent != nil {
		p.ParentID, p.ParentJobID = req.parent.ID, req.parentJob.ID
	}
	if req.mergeRequest != nil {
		p.MergeRequestID = req.mergeRequest.ID
	}
	// A push can ask not to run CI ([skip ci] in the message, or the
	// ci.skip option): the pipeline is kept, skipped, without jobs.
	if req.dry == nil && req.source == model.SourcePush && (req.skipOption || skipCI.MatchString(commit.Message)) {
		p.Status = model.StatusSkipped
		return p, s.store(ctx, repo, &p, req, nil, nil, nil)
	}
	if cerr != nil {
		return s.failConfig(ctx, repo, p, req, cerr)
	}
	seed, err := cfg.Seed(ciconfig.Input{Source: req.source, Ref: ref.name, Tag: ref.tag, Variables: vars,
		Changes: req.changes, ChangesKnown: req.changesKnown, Exists: s.existsAt(ctx, repo, ref.sha)})
	if err != nil {
		var ce *ciconfig.Error
		if errors.As(err, &ce) && ce.Reason == ciconfig.ReasonConfig {
			return s.failConfig(ctx, repo, p, req, err)
		}
		if ce != nil {
			return p, chainError(ce.Message)
		}
		return p, err
	}
	p.Name = seed.Name
	if req.dry != nil {
		// A dry run stops here: no pipeline, job, ref or task is written.
		req.dry.seed = &seed
		return p, nil
	}
	return p, s.store(ctx, repo, &p, req, &seed, cfg.Variables, vars)
}

// failConfig answers an invalid configuration: a stored failed pipeline
// with its yaml_errors when the source keeps one, else the chain error.
func (s *Service) failConfig(ctx context.Context, repo *gitrepo.Repo, p model.Pipeline, req request, cerr error) (model.Pipeline, error) {
	var ce *ciconfig.Error
	errors.As(cerr, &ce)
	if !req.save || req.dry != nil {
		return p, chainError(ce.Message)
	}
	now := s.now()
	p.Status, p.FailureReason, p.YAMLErrors, p.FinishedAt = model.StatusFailed, model.PipelineFailureConfig, ce.Message, &now
	return p, s.store(ctx, repo, &p, req, nil, nil, nil)
}

// existsAt answers rules:exists globs against the commit's files.
func (s *Service) existsAt(ctx context.Context, repo *gitrepo.Repo, commit git.ObjectID) func(glob string) bool {
	var paths []string
	loaded := false
	return func(glob string) bool {
		if commit == "" {
			return false
		}
		if !loaded {
			loaded = true
			entries, err := repo.Tree(ctx, commit, "", true)
			if err != nil {
				s.log.Warn("ci: rules exists: list files", "commit", commit, "err", err)
			}
			for _, e := range entries {
				if e.Type == "blob" {
					paths = append(paths, e.Path)
				}
			}
		}
		for _, p := range paths {
			if ciconfig.MatchGlob(glob, p) {
				return true
			}
		}
		return false
	}
}

// protectedRef reports whether a pipeline's ref is protected: a branch
// some protected branch rule covers, or a tag some protected tag rule
// covers.
func (s *Service) protectedRef(ctx context.Context, projectID int64, ref resolvedRef) (bool, error) {
	if ref.tag {
		tags, err := s.db.ProtectedTags(ctx, projectID)
		return len(model.ProtectedTagsMatching(tags, ref.name)) > 0, err
	}
	rules, err := s.db.ProtectedBranches(ctx, projectID, "")
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return false, err
	}
	for _, r := range rules {
		if model.MatchesBranch(r.Name, ref.name) {
			return true, nil
		}
	}
	return false, nil
}

// mayRunOn reports whether the actor may run pipelines for a ref of a
// resolved project: developers, on a protected branch those who may push
// to it or merge into it, on a protected tag those who may create it.
func (s *Service) mayRunOn(ctx context.Context, a auth.Actor, p *model.Project, acc model.AccessLevel, ref string, tag bool) (bool, error) {
	ok, _, err := s.mayRunOnProtected(ctx, a, p, acc, ref, tag)
	return ok, err
}

// mayRunOnProtected is mayRunOn, and whether the ref is protected (what
// protectedRef answers) when the rules were read to decide (nil when
// they were not).
func (s *Service) mayRunOnProtected(ctx context.Context, a auth.Actor, p *model.Project, acc model.AccessLevel, ref string,
	tag bool) (ok bool, protected *bool, err error) {
	if !auth.Can(a, auth.RunPipeline, auth.Resource{Project: p, Access: acc}) {
		return false, nil, nil
	}
	if tag {
		tags, err := s.db.ProtectedTags(ctx, p.ID)
		if err != nil {
			return false, nil, err
		}
		matching := model.ProtectedTagsMatching(tags, ref)
		isProtected := len(matching) > 0
		if !isProtected {
			return true, &isProtected, nil
		}
		today := s.now().UTC().Format(model.DateLayout)
		inGroup := func(groupID int64) bool {
			ok, err := s.db.UserInGroup(ctx, groupID, a.UserID(), true, today)
			return err == nil && ok
		}
		return auth.CanCreateTag(a, acc, ref, tags, inGroup), &isProtected, nil
	}
	rules, err := s.db.ProtectedBranches(ctx, p.ID, "")
	if err != nil && !errors.Is(err, model.ErrNotFound) {
		return false, nil, err
	}
	isProtected := false
	for _, r := range rules {
		if model.MatchesBranch(r.Name, ref) {
			isProtected = true
			break
		}
	}
	r := auth.Resource{Project: p, Access: acc, Branch: &auth.Branch{Name: ref, Rules: rules}}
	return auth.Can(a, auth.PushCode, r) || auth.Can(a, auth.MergeCode, r), &isProtected, nil
}

// store persists the pipeline with its variables and (seeded) jobs, writes
// its persistent ref, and processes it once, in one transaction.
func (s *Service) store(ctx context.Context, repo *gitrepo.Repo, p *model.Pipeline, req request, seed *ciconfig.Pipeline, globals []ciconfig.Variable,
	vars map[string]string) error {
	var jobs []newJob
	if seed != nil {
		var err error
		if jobs, err = jobsOf(*p, *seed, globals, vars); err != nil {
			return err
		}
	}
	// A new pipeline's first processing is decided before its jobs are
	// stored: each job is inserted once, in the status it starts in.
	var first model.Processed
	if seed != nil {
		procs := make([]model.ProcJob, len(jobs))
		for i, j := range jobs {
			procs[i] = model.ProcJob{ID: int64(i), Name: j.Name, Stage: j.StageIdx, Status: j.Status, When: j.When,
				AllowFailure: j.AllowFailure, DAG: j.DAG, Needs: j.Needs, ResourceGroup: j.resourceKey != ""}
		}
		first = model.Process(procs)
		now := s.now()
		for _, m := range first.Moves {
			j := &jobs[m.ID]
			j.Status = m.To
			switch m.To {
			case model.StatusPending:
				j.QueuedAt = &now
			case model.StatusScheduled:
				at := now.Add(startIn(&j.Job))
				j.ScheduledAt = &at
			}
		}
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		// The pipeline's number (and its deployments') are taken last:
		// each locks a counter of the project until the commit, which
		// other pipelines of the project wait for.
		if err := tx.CreatePipelineNumberLast(ctx, p); err != nil {
			return err
		}
		vars := req.variables
		if len(vars) > 0 {
			if err := tx.AddPipelineVariables(ctx, p.ID, vars); err != nil {
				return err
			}
		}
		if req.link != nil {
			if err := req.link(ctx, tx, p); err != nil {
				return err
			}
		}
		if seed == nil {
			return tx.NumberPipeline(ctx, p)
		}
		fx := &effects{}
		groups := map[string]int64{}
		rows := make([]*model.Job, len(jobs))
		for i := range jobs {
			j := &jobs[i]
			j.PipelineID = p.ID
			if key := j.resourceKey; key != "" {
				if _, ok := groups[key]; !ok {
					g, err := tx.EnsureResourceGroup(ctx, p.ProjectID, key)
					if err != nil {
						return err
					}
					groups[key] = g.ID
				}
				j.ResourceGroup = groups[key]
			}
			rows[i] = &j.Job
		}
		// The jobs in one multi-row insert, their deployments in another.
		if err := tx.CreateJobs(ctx, rows); err != nil {
			return err
		}
		for _, j := range rows {
			fx.entered(j)
		}
		// The persistent ref a runner fetches (refs/pipelines/<id>).
		if err := repo.UpdateRef(ctx, pipelineRef(p.ID), git.ObjectID(p.SHA), ""); err != nil {
			return fmt.Errorf("write %s: %w", pipelineRef(p.ID), err)
		}
		if err := s.savePipeline(ctx, tx, p, first.Status, fx); err != nil {
			return err
		}
		if err := fx.flush(ctx, tx); err != nil {
			return err
		}
		// On PostgreSQL the numbers go with the COMMIT: the pipeline's,
		// then its deployments' (the order the counters are locked in).
		if err := tx.NumberPipeline(ctx, p); err != nil {
			return err
		}
		return s.createDeployments(ctx, tx, jobs)
	})
}

// pipelineRef is the persistent ref of a pipeline.
func pipelineRef(id int64) string { return "refs/pipelines/" + strconv.FormatInt(id, 10) }

// newJob is a job about to be stored, with its resource group's key and
// where it deploys.
type newJob struct {
	model.Job
	resourceKey string
	deploy      *deployTarget
}

// optionBuffers hold a pipeline's jobs' options while jobsOf encodes
// them.
var optionBuffers = sync.Pool{New: func() any { return bytes.NewBuffer(make([]byte, 0, 64<<10)) }}

// jobsOf turns seeded jobs into job rows; vars expand their environments.
// The jobs' options are encoded one after the other into one buffer and
// share one string (json.Encoder writes what json.Marshal returns, and a
// newline).
func jobsOf(p model.Pipeline, seed ciconfig.Pipeline, globals []ciconfig.Variable, vars map[string]string) ([]newJob, error) {
	out := make([]newJob, len(seed.Jobs))
	buf := optionBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= 1<<20 {
			optionBuffers.Put(buf)
		}
	}()
	enc := json.NewEncoder(buf)
	ends := make([]int, len(seed.Jobs))
	var opts jobOptions
	jv := jobVars{vars: vars}
	for i, pl := range seed.Jobs {
		yamlVars := pl.InheritedVariables(globals, seed.Variables)
		deploy, envErr := jv.targetOf(pl, yamlVars)
		opts = jobOptions{Planned: pl, YAMLVariables: yamlVars, Deploy: deploy}
		if err := enc.Encode(&opts); err != nil {
			return nil, fmt.Errorf("job %q options: %w", pl.Name, err)
		}
		buf.Truncate(buf.Len() - 1) // the newline
		ends[i] = buf.Len()
		j := model.Job{ProjectID: p.ProjectID, Kind: model.JobBuild, Name: pl.Name, Stage: pl.Stage, StageIdx: pl.StageIndex,
			Status: model.StatusCreated, When: pl.When, AllowFailure: pl.AllowFailure, UserID: p.UserID, Ref: p.Ref, Tag: p.Tag,
			SHA: p.SHA, DAG: pl.Needs != nil, TagList: pl.Tags, Timeout: int(pl.Timeout.Seconds())}
		if j.When == "" {
			j.When = model.WhenOnSuccess
		}
		if pl.Trigger != nil {
			j.Kind = model.JobBridge
		}
		if len(pl.Needs) > 0 {
			j.Needs = make([]string, len(pl.Needs))
			for k, n := range pl.Needs {
				j.Needs[k] = n.Job
			}
		}
		if deploy != nil {
			j.Environment = deploy.Name
		}
		if envErr {
			// GitLab drops a job whose environment name is invalid once
			// expanded.
			reason := model.FailureEnvironmentCreation
			j.Status, j.FailureReason = model.StatusFailed, reason
		}
		out[i] = newJob{Job: j, resourceKey: pl.ResourceGroup, deploy: deploy}
	}
	all, start := buf.String(), 0
	for i, end := range ends {
		out[i].Options = all[start:end]
		start = end
	}
	return out, nil
}
