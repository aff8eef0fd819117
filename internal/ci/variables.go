package ci

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/auth"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

var slugUnsafe = regexp.MustCompile(`[^a-z0-9]+`)

// Slug is GitLab's ref and path slug: lower case, anything but letters
// and digits a dash, at most 63 characters, no dash at either end.
func Slug(s string) string {
	s = slugUnsafe.ReplaceAllString(strings.ToLower(s), "-")
	if len(s) > 63 {
		s = s[:63]
	}
	return strings.Trim(s, "-")
}

// vars collects variables in order, later ones winning.
type vars []model.Variable

func (v *vars) add(key, value string) {
	*v = append(*v, model.Variable{Key: key, Value: value, VariableType: model.VarEnv})
}

func (v vars) asMap() map[string]string {
	m := make(map[string]string, len(v))
	for _, x := range v {
		m[x.Key] = x.Value
	}
	return m
}

// serverVariables are the CI_SERVER_* and CI_API_* variables.
func (s *Service) serverVariables(v *vars) {
	v.add("CI", "true")
	v.add("GITLAB_CI", "true")
	v.add("CI_SERVER_URL", s.cfg.ExternalURL)
	if u, err := url.Parse(s.cfg.ExternalURL); err == nil {
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		v.add("CI_SERVER_HOST", u.Hostname())
		v.add("CI_SERVER_PORT", port)
		v.add("CI_SERVER_PROTOCOL", u.Scheme)
		v.add("CI_SERVER_FQDN", u.Host)
	}
	v.add("CI_SERVER_NAME", "GitLab")
	v.add("CI_SERVER_VERSION", s.cfg.ServerVersion)
	parts := strings.SplitN(strings.SplitN(s.cfg.ServerVersion, "-", 2)[0], ".", 3)
	for i, name := range []string{"CI_SERVER_VERSION_MAJOR", "CI_SERVER_VERSION_MINOR", "CI_SERVER_VERSION_PATCH"} {
		if i < len(parts) {
			v.add(name, parts[i])
		}
	}
	v.add("CI_SERVER_REVISION", s.cfg.ServerRevision)
	v.add("CI_API_V4_URL", s.cfg.ExternalURL+"/api/v4")
	v.add("CI_API_GRAPHQL_URL", s.cfg.ExternalURL+"/api/graphql")
}

// projectVariables are the CI_PROJECT_* variables.
func (s *Service) projectVariables(v *vars, p model.Project, path string) {
	ns := p.Namespace
	root := ns.FullPath
	if i := strings.Index(root, "/"); i >= 0 {
		root = root[:i]
	}
	v.add("CI_PROJECT_ID", strconv.FormatInt(p.ID, 10))
	v.add("CI_PROJECT_NAME", p.Path)
	v.add("CI_PROJECT_TITLE", p.Name)
	v.add("CI_PROJECT_DESCRIPTION", p.Description)
	v.add("CI_PROJECT_PATH", p.FullPath())
	v.add("CI_PROJECT_PATH_SLUG", Slug(p.FullPath()))
	v.add("CI_PROJECT_NAMESPACE", ns.FullPath)
	v.add("CI_PROJECT_NAMESPACE_ID", strconv.FormatInt(ns.ID, 10))
	v.add("CI_PROJECT_ROOT_NAMESPACE", root)
	v.add("CI_PROJECT_URL", s.cfg.ExternalURL+"/"+p.FullPath())
	v.add("CI_PROJECT_VISIBILITY", string(p.Visibility))
	v.add("CI_PROJECT_REPOSITORY_LANGUAGES", "")
	v.add("CI_DEFAULT_BRANCH", p.DefaultBranch)
	v.add("CI_CONFIG_PATH", path)
}

// commitVariables are the CI_COMMIT_* variables of a pipeline's commit.
func commitVariables(v *vars, ref resolvedRef, before string, c gitrepo.Commit, protected bool) {
	sha := string(ref.sha)
	v.add("CI_COMMIT_SHA", sha)
	v.add("CI_COMMIT_SHORT_SHA", sha[:min(8, len(sha))])
	if before == "" {
		before = model.ZeroRef
	}
	v.add("CI_COMMIT_BEFORE_SHA", before)
	v.add("CI_COMMIT_REF_NAME", ref.name)
	v.add("CI_COMMIT_REF_SLUG", Slug(ref.name))
	if ref.tag {
		v.add("CI_COMMIT_TAG", ref.name)
	} else {
		v.add("CI_COMMIT_BRANCH", ref.name)
	}
	title := c.Title()
	v.add("CI_COMMIT_MESSAGE", c.Message)
	v.add("CI_COMMIT_TITLE", title)
	v.add("CI_COMMIT_DESCRIPTION", strings.TrimLeft(strings.TrimPrefix(c.Message, title), "\n"))
	v.add("CI_COMMIT_TIMESTAMP", c.Committer.When.Format("2006-01-02T15:04:05-07:00"))
	v.add("CI_COMMIT_AUTHOR", c.Author.Name+" <"+c.Author.Email+">")
	v.add("CI_COMMIT_REF_PROTECTED", strconv.FormatBool(protected))
}

// userVariables are the GITLAB_USER_* variables of who runs a pipeline.
func userVariables(v *vars, u *model.User) {
	if u == nil {
		return
	}
	v.add("GITLAB_USER_ID", strconv.FormatInt(u.ID, 10))
	v.add("GITLAB_USER_EMAIL", u.Email)
	v.add("GITLAB_USER_LOGIN", u.Username)
	v.add("GITLAB_USER_NAME", u.Name)
}

// predefined adds the variables GitLab predefines for a pipeline of the
// project at a ref and commit, run by user from source.
func (s *Service) predefined(ctx context.Context, v *vars, p model.Project, ref resolvedRef, before string, c gitrepo.Commit, protected bool,
	user *model.User, source string, triggered bool) {
	s.serverVariables(v)
	s.projectVariables(v, p, s.configPath(ctx, p))
	commitVariables(v, ref, before, c, protected)
	userVariables(v, user)
	v.add("CI_PIPELINE_SOURCE", source)
	if triggered {
		v.add("CI_PIPELINE_TRIGGERED", "true")
	}
}

// expressionVariables are what a pipeline's rules see before it exists,
// lowest precedence first: predefined, instance, group (outermost first)
// and project CI/CD variables (protected ones only on protected refs, scope
// "*"), and the pipeline's own variables.
func (s *Service) expressionVariables(ctx context.Context, req request, ref resolvedRef, c gitrepo.Commit, protected bool) (map[string]string, error) {
	var v vars
	s.predefined(ctx, &v, req.project, ref, req.before, c, protected, req.user, req.source, req.triggered)
	if req.mergeRequest != nil {
		if err := s.mergeRequestVariables(ctx, &v, *req.mergeRequest); err != nil {
			return nil, err
		}
	}
	secret, err := s.secretVariables(ctx, s.db.Tx, req.project, protected)
	if err != nil {
		return nil, err
	}
	v = append(v, secret...)
	v = append(v, req.variables...)
	return v.asMap(), nil
}

// pipelinePredefined are the predefined variables of a pipeline that
// exists (with its id, iid, URL and creation time).
func (s *Service) pipelinePredefined(ctx context.Context, p model.Project, pl model.Pipeline) (vars, error) {
	repo, err := s.repo(p)
	if err != nil {
		return nil, err
	}
	c, err := repo.ReadCommit(ctx, pl.SHA)
	if err != nil {
		return nil, fmt.Errorf("read commit %s: %w", pl.SHA, err)
	}
	var user *model.User
	if pl.UserID != 0 {
		if u, err := s.db.UserByID(ctx, pl.UserID); err == nil {
			user = &u
		} else if !errors.Is(err, model.ErrNotFound) {
			return nil, err
		}
	}
	var v vars
	s.predefined(ctx, &v, p, resolvedRef{name: pl.Ref, tag: pl.Tag, sha: git.ObjectID(pl.SHA)}, pl.BeforeSHA, c, pl.Protected, user,
		pl.Source, pl.Source == model.SourceTrigger)
	v.add("CI_PIPELINE_ID", strconv.FormatInt(pl.ID, 10))
	v.add("CI_PIPELINE_IID", strconv.FormatInt(pl.IID, 10))
	v.add("CI_PIPELINE_URL", s.cfg.ExternalURL+"/"+p.FullPath()+"/-/pipelines/"+strconv.FormatInt(pl.ID, 10))
	v.add("CI_PIPELINE_CREATED_AT", pl.CreatedAt.UTC().Format(time.RFC3339))
	if pl.Name != "" {
		v.add("CI_PIPELINE_NAME", pl.Name)
	}
	if pl.MergeRequestID != 0 {
		m, err := s.db.MergeRequestByID(ctx, pl.MergeRequestID)
		if err == nil {
			if err := s.mergeRequestVariables(ctx, &v, m); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, model.ErrNotFound) {
			return nil, err
		}
	}
	return v, nil
}

// mergeRequestVariables are the CI_MERGE_REQUEST_* variables of a
// merge request's pipeline.
func (s *Service) mergeRequestVariables(ctx context.Context, v *vars, m model.MergeRequest) error {
	target, err := s.db.ProjectByID(ctx, m.TargetProjectID)
	if err != nil {
		return err
	}
	source := target
	if m.SourceProjectID != target.ID {
		if source, err = s.db.ProjectByID(ctx, m.SourceProjectID); err != nil {
			return err
		}
	}
	iid := strconv.FormatInt(m.IID, 10)
	v.add("CI_MERGE_REQUEST_ID", strconv.FormatInt(m.ID, 10))
	v.add("CI_MERGE_REQUEST_IID", iid)
	v.add("CI_MERGE_REQUEST_TITLE", m.Title)
	v.add("CI_MERGE_REQUEST_DESCRIPTION", m.Description)
	v.add("CI_MERGE_REQUEST_EVENT_TYPE", "detached")
	v.add("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", m.SourceBranch)
	v.add("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", m.HeadSHA)
	v.add("CI_MERGE_REQUEST_TARGET_BRANCH_NAME", m.TargetBranch)
	v.add("CI_MERGE_REQUEST_DIFF_BASE_SHA", m.BaseSHA)
	v.add("CI_MERGE_REQUEST_REF_PATH", model.MRHeadRef(m.IID))
	v.add("CI_MERGE_REQUEST_PROJECT_ID", strconv.FormatInt(target.ID, 10))
	v.add("CI_MERGE_REQUEST_PROJECT_PATH", target.FullPath())
	v.add("CI_MERGE_REQUEST_PROJECT_URL", s.cfg.ExternalURL+"/"+target.FullPath())
	v.add("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", strconv.FormatInt(source.ID, 10))
	v.add("CI_MERGE_REQUEST_SOURCE_PROJECT_PATH", source.FullPath())
	v.add("CI_MERGE_REQUEST_SOURCE_PROJECT_URL", s.cfg.ExternalURL+"/"+source.FullPath())
	if len(m.Labels) > 0 {
		v.add("CI_MERGE_REQUEST_LABELS", strings.Join(m.Labels, ","))
	}
	return nil
}

// pipelineVariables are the variables of a pipeline that exists, lowest
// precedence first: predefined (with its id, iid, URL and creation time),
// instance, group and project CI/CD variables, and its own.
func (s *Service) pipelineVariables(ctx context.Context, p model.Project, pl model.Pipeline) (vars, error) {
	v, err := s.pipelinePredefined(ctx, p, pl)
	if err != nil {
		return nil, err
	}
	secret, err := s.secretVariables(ctx, s.db.Tx, p, pl.Protected)
	if err != nil {
		return nil, err
	}
	own, err := s.db.PipelineVariables(ctx, pl.ID)
	if err != nil {
		return nil, err
	}
	return append(append(v, secret...), own...), nil
}

// secretVariables are the instance, group and project CI/CD variables a
// pipeline of the project gets, as pipeline variables (see
// secretCIVariables).
func (s *Service) secretVariables(ctx context.Context, tx *store.Tx, p model.Project, protected bool) ([]model.Variable, error) {
	list, err := s.secretCIVariables(ctx, tx, p, protected, "")
	out := make([]model.Variable, len(list))
	for i, cv := range list {
		out[i] = model.Variable{Key: cv.Key, Value: cv.Value, VariableType: cv.VariableType, Raw: cv.Raw}
	}
	return out, err
}

// secretCIVariables are the CI/CD variables a pipeline of the project
// gets, lowest precedence first (GitLab's Ci::Variables::Builder): the
// instance's, the groups' outermost first, then the project's; protected
// ones only for protected refs; those whose environment scope covers env
// (model.ScopeMatches: a job without an environment, and a pipeline, get
// only scope "*"; the instance's are all "*"). Within an owner, a more
// specific scope wins: "*" first, then wildcards, then the exact name.
func (s *Service) secretCIVariables(ctx context.Context, tx *store.Tx, p model.Project, protected bool, env string) ([]model.CIVariable, error) {
	var groupIDs []int64
	if p.Namespace.Kind == model.NamespaceGroup {
		for _, part := range strings.Split(strings.TrimSuffix(p.Namespace.Traversal, "/"), "/") {
			if id, err := strconv.ParseInt(part, 10, 64); err == nil {
				groupIDs = append(groupIDs, id)
			}
		}
	}
	instanceVars, groupVars, projectVars, err := tx.CIVariablesInScope(ctx, p.ID, groupIDs)
	if err != nil {
		return nil, err
	}
	depth := make(map[int64]int, len(groupIDs))
	for i, id := range groupIDs {
		depth[id] = i
	}
	var out []model.CIVariable
	for _, cv := range instanceVars {
		if protected || !cv.Protected {
			out = append(out, cv)
		}
	}
	for d := range groupIDs {
		for _, cv := range groupVars {
			if depth[cv.OwnerID] == d && model.ScopeMatches(cv.EnvironmentScope, env) && (protected || !cv.Protected) {
				out = append(out, cv)
			}
		}
	}
	for _, cv := range projectVars {
		if model.ScopeMatches(cv.EnvironmentScope, env) && (protected || !cv.Protected) {
			out = append(out, cv)
		}
	}
	if env != "" {
		// Within each owner's run of variables, the more specific scope
		// comes later and so wins.
		for i := 0; i < len(out); {
			k := i + 1
			for k < len(out) && out[k].OwnerType == out[i].OwnerType && out[k].OwnerID == out[i].OwnerID {
				k++
			}
			slices.SortStableFunc(out[i:k], func(a, b model.CIVariable) int {
				return scopeRank(a.EnvironmentScope) - scopeRank(b.EnvironmentScope)
			})
			i = k
		}
	}
	return out, nil
}

// scopeRank orders environment scopes from least to most specific.
func scopeRank(scope string) int {
	switch {
	case scope == "*":
		return 0
	case strings.Contains(scope, "*"):
		return 1
	}
	return 2
}

// VariableInput carries a CI/CD variable's attributes; nil means "not
// given".
type VariableInput struct {
	Key              *string
	Value            *string
	VariableType     *string
	Protected        *bool
	Masked           *bool
	Hidden           bool // masked_and_hidden, on creation only
	Raw              *bool
	EnvironmentScope *string
	Description      *string
	// Filter selects the variable by environment scope on get, update and
	// delete (filter[environment_scope]).
	Filter string
}

// MaxInstanceVariables is how many CI/CD variables the instance may have
// (GitLab's plan limit ci_instance_level_variables, at its default).
const MaxInstanceVariables = 25

// owner resolves a variables owner the actor administers: a project
// (maintainers), a group (maintainers and owners) or the instance
// (administrators; ref is unused, the id 0).
func (s *Service) owner(ctx context.Context, a auth.Actor, ownerType, ref string) (int64, error) {
	switch ownerType {
	case model.OwnerInstance:
		if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
			return 0, model.Forbidden("")
		}
		return 0, nil
	case model.OwnerGroup:
		g, acc, err := s.groups.Resolve(ctx, a, ref)
		if err != nil {
			return 0, err
		}
		if !a.Admin() && acc < model.Maintainer {
			return 0, model.Forbidden("")
		}
		return g.ID, nil
	}
	p, _, err := s.project(ctx, a, ref, auth.AdminCI)
	return p.ID, err
}

// Variables lists the CI/CD variables of a project, a group or the
// instance.
func (s *Service) Variables(ctx context.Context, a auth.Actor, ownerType, ref string, page model.Page) ([]model.CIVariable, model.PageInfo, error) {
	id, err := s.owner(ctx, a, ownerType, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	return s.db.CIVariables(ctx, ownerType, id, page)
}

// variableByKey finds the one variable of an owner with key (and scope,
// when filtered): 404 Variable Not Found (InstanceVariable for the
// instance's, as GitLab's admin API says; they have no scopes to
// filter), or 409 when several scopes share the key and no filter picks
// one. A key no variable can have is not looked for.
func variableByKey(ctx context.Context, tx *store.Tx, ownerType string, ownerID int64, key, filter string) (model.CIVariable, error) {
	notFound := model.NotFound("Variable")
	if ownerType == model.OwnerInstance {
		notFound, filter = model.NotFound("InstanceVariable"), ""
	}
	if !model.ValidVariableKey(key) {
		return model.CIVariable{}, notFound
	}
	list, err := tx.CIVariablesByKey(ctx, ownerType, ownerID, key)
	if err != nil {
		return model.CIVariable{}, err
	}
	var found []model.CIVariable
	for _, v := range list {
		if filter == "" || v.EnvironmentScope == filter {
			found = append(found, v)
		}
	}
	switch len(found) {
	case 0:
		return model.CIVariable{}, notFound
	case 1:
		return found[0], nil
	}
	return model.CIVariable{}, model.Conflict("There are multiple variables with provided parameters. Please use 'filter[environment_scope]'")
}

// Variable returns one CI/CD variable by key.
func (s *Service) Variable(ctx context.Context, a auth.Actor, ownerType, ref, key, filter string) (model.CIVariable, error) {
	id, err := s.owner(ctx, a, ownerType, ref)
	if err != nil {
		return model.CIVariable{}, err
	}
	return variableByKey(ctx, s.db.Tx, ownerType, id, key, filter)
}

// applyVariable validates in onto v with GitLab's messages. The
// instance's variables keep scope "*" and are never hidden.
func applyVariable(v *model.CIVariable, in VariableInput, creating bool) model.FieldErrors {
	var f model.FieldErrors
	if v.OwnerType == model.OwnerInstance {
		in.EnvironmentScope, in.Hidden = nil, false
	}
	if in.Key != nil {
		v.Key = *in.Key
	}
	if in.Value != nil {
		v.Value = *in.Value
	}
	if in.VariableType != nil {
		v.VariableType = *in.VariableType
	}
	if in.Protected != nil {
		v.Protected = *in.Protected
	}
	if in.Masked != nil {
		v.Masked = *in.Masked
	}
	if creating && in.Hidden {
		v.Masked, v.Hidden = true, true
	}
	if in.Raw != nil {
		v.Raw = *in.Raw
	}
	if in.EnvironmentScope != nil {
		v.EnvironmentScope = *in.EnvironmentScope
	}
	if in.Description != nil {
		v.Description = *in.Description
	}
	switch {
	case v.Key == "":
		f.Add("key", "can't be blank")
	case len(v.Key) > 255:
		f.Add("key", "is too long (maximum is 255 characters)")
	case !model.ValidVariableKey(v.Key):
		f.Add("key", "can contain only letters, digits and '_'.")
	}
	if v.Masked && !model.Maskable(v.Value) {
		f.Add("value", "is invalid")
	}
	if len(v.Value) > 10000 {
		if v.OwnerType == model.OwnerInstance {
			f.Add("value", "The value of the provided variable exceeds the 10000 character limit")
		} else {
			f.Add("value", "is too long (maximum is 10000 characters)")
		}
	}
	if v.EnvironmentScope == "" {
		f.Add("environment_scope", "can't be blank")
	} else if len(v.EnvironmentScope) > 255 {
		f.Add("environment_scope", "is too long (maximum is 255 characters)")
	}
	if len(v.Description) > 255 {
		f.Add("description", "is too long (maximum is 255 characters)")
	}
	return f
}

// CreateVariable adds a CI/CD variable; the instance holds at most
// MaxInstanceVariables (counted under a lock, so racing creators cannot
// pass it together).
func (s *Service) CreateVariable(ctx context.Context, a auth.Actor, ownerType, ref string, in VariableInput) (model.CIVariable, error) {
	id, err := s.owner(ctx, a, ownerType, ref)
	if err != nil {
		return model.CIVariable{}, err
	}
	v := model.CIVariable{OwnerType: ownerType, OwnerID: id, VariableType: model.VarEnv, EnvironmentScope: "*"}
	invalid := applyVariable(&v, in, true)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		f := maps.Clone(invalid)
		if ownerType == model.OwnerInstance {
			if err := tx.LockCIVariables(ctx, ownerType, id); err != nil {
				return err
			}
			n, err := tx.CountCIVariables(ctx, ownerType, id)
			if err != nil {
				return err
			}
			if n >= MaxInstanceVariables {
				f.Add("base", fmt.Sprintf("Maximum number of ci instance level variables (%d) exceeded", MaxInstanceVariables))
			}
		}
		if err := f.Err(); err != nil {
			return err
		}
		return tx.CreateCIVariable(ctx, &v)
	})
	if store.IsUnique(err, store.UniqueCIVariable) {
		return v, model.Invalid("key", "("+v.Key+") has already been taken")
	}
	return v, err
}

// UpdateVariable changes a CI/CD variable found by key (and filter).
func (s *Service) UpdateVariable(ctx context.Context, a auth.Actor, ownerType, ref, key string, in VariableInput) (model.CIVariable, error) {
	id, err := s.owner(ctx, a, ownerType, ref)
	if err != nil {
		return model.CIVariable{}, err
	}
	var v model.CIVariable
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if v, err = variableByKey(ctx, tx, ownerType, id, key, in.Filter); err != nil {
			return err
		}
		if err := applyVariable(&v, in, false).Err(); err != nil {
			return err
		}
		return tx.UpdateCIVariable(ctx, &v)
	})
	if store.IsUnique(err, store.UniqueCIVariable) {
		return v, model.Invalid("key", "("+v.Key+") has already been taken")
	}
	return v, err
}

// DeleteVariable removes a CI/CD variable found by key (and filter).
func (s *Service) DeleteVariable(ctx context.Context, a auth.Actor, ownerType, ref, key, filter string) error {
	id, err := s.owner(ctx, a, ownerType, ref)
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		v, err := variableByKey(ctx, tx, ownerType, id, key, filter)
		if err != nil {
			return err
		}
		return tx.DeleteCIVariable(ctx, v.ID)
	})
}
