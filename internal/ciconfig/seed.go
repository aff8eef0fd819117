package ciconfig

import (
	"maps"
	"slices"
	"strconv"
)

// maxNeeds is GitLab's default ci_needs_size_limit.
const maxNeeds = 50

// Seed decides the jobs of one pipeline, as GitLab's creation chain
// does: workflow:rules (no matching rule, or when: never, filters the
// pipeline out), then each job's rules:, or only: and except:, for
// each of its parallel jobs; then each job's final when, allow_failure,
// start_in, variables and needs (parallel needs expanded, optional
// needs on jobs not created dropped). Jobs are in stage order, then in
// the order of the file.
//
// Expressions see Input.Variables over the job's variables (its own,
// a matrix's, the workflow rule's and the global ones it inherits, the
// first winning); workflow:rules see Input.Variables over the global
// variables.
func (c *Config) Seed(in Input) (Pipeline, error) {
	var p Pipeline
	ctx := rulesContext{in: &in, vars: underInput(in.Variables, c.Variables)}
	if c.Workflow.Rules != nil {
		r := ctx.match(c.Workflow.Rules)
		if r == nil || r.When == "never" {
			return p, &Error{Message: msgWorkflow, Reason: ReasonWorkflow}
		}
		p.Variables = r.Variables
	}
	if c.Workflow.Name != "" {
		p.Name = expandVariables(c.Workflow.Name, underInput(in.Variables, c.Variables, p.Variables), false)
	}

	x := newJobIndex(c)
	var jobs []Planned
	for _, j := range c.Jobs {
		inherited := j.InheritedVariables(c.Variables, p.Variables)
		for _, inst := range j.instances() {
			planned, ok := seedJob(j, inst, inherited, in)
			if ok {
				planned.StageIndex = slices.Index(c.Stages, j.Stage)
				jobs = append(jobs, planned)
			}
		}
	}
	// GitLab runs no pipeline of .pre and .post jobs only.
	if !slices.ContainsFunc(jobs, func(j Planned) bool { return j.Stage != ".pre" && j.Stage != ".post" }) {
		return p, &Error{Message: msgFilteredRule, Reason: ReasonRules}
	}
	slices.SortStableFunc(jobs, func(a, b Planned) int { return a.StageIndex - b.StageIndex })
	stageOf := make(map[string]int, len(jobs))
	for _, j := range jobs {
		stageOf[j.Name] = j.StageIndex
	}
	for i := range jobs {
		if err := jobs[i].resolveNeeds(x, stageOf); err != nil {
			return p, err
		}
		if len(p.Stages) == 0 || p.Stages[len(p.Stages)-1] != jobs[i].Stage {
			p.Stages = append(p.Stages, jobs[i].Stage)
		}
	}
	p.Jobs = jobs
	return p, nil
}

// seedJob decides one instance of a job: whether its rules (or only:
// and except:) create it, and with what.
func seedJob(j *Job, inst instance, inherited []Variable, in Input) (Planned, bool) {
	pl := Planned{Job: *j, NodeIndex: inst.index, NodeTotal: inst.total, Matrix: inst.matrix}
	pl.Name = inst.name
	if inst.matrix != nil {
		keys := slices.Sorted(maps.Keys(inst.matrix))
		if j.Parallel != nil && len(j.Parallel.Keys) > 0 {
			keys = matrixKeys(j.Parallel, inst.matrix)
		}
		vars := make([]Variable, len(keys))
		for i, k := range keys {
			vars[i] = Variable{Key: k, Value: inst.matrix[k]}
		}
		pl.Variables = mergeVariables(j.Variables, vars)
	}
	// The variables the job's expressions and tags see, built only for
	// a job that has any (most have neither rules nor tags).
	var vars map[string]string
	if j.Rules != nil || j.Only != nil || j.Except != nil || pl.Tags != nil {
		vars = underInput(in.Variables, inherited, pl.Variables)
	}
	ctx := rulesContext{in: &in, vars: vars}
	switch {
	case j.Rules != nil:
		r := ctx.match(j.Rules)
		if r == nil {
			return pl, false
		}
		if r.When != "" {
			pl.When = r.When
		}
		if pl.When == "never" {
			return pl, false
		}
		if r.AllowFailure != nil {
			pl.AllowFailure, pl.AllowFailureExitCodes = *r.AllowFailure, nil
		}
		pl.StartIn = r.StartIn
		if r.Needs != nil {
			pl.Needs = r.Needs
		}
		if r.Interruptible != nil {
			pl.Interruptible = *r.Interruptible
		}
		pl.Variables = mergeVariables(pl.Variables, r.Variables)
	case j.Only != nil || j.Except != nil:
		if j.Only != nil && slices.Contains(j.Only.clauses(ctx), false) {
			return pl, false
		}
		if j.Except != nil && slices.Contains(j.Except.clauses(ctx), true) {
			return pl, false
		}
	}
	if pl.Tags != nil {
		tags := make([]string, len(pl.Tags))
		for i, t := range pl.Tags {
			tags[i] = expandVariables(t, vars, true)
		}
		pl.Tags = tags
	}
	return pl, true
}

// matrixKeys orders a matrix job's variables as its entry writes them.
func matrixKeys(p *Parallel, matrix map[string]string) []string {
	for _, keys := range p.Keys {
		if len(keys) == len(matrix) && !slices.ContainsFunc(keys, func(k string) bool { _, ok := matrix[k]; return !ok }) {
			return keys
		}
	}
	return slices.Sorted(maps.Keys(matrix))
}

// resolveNeeds expands needs on parallel jobs and checks that each
// names a job of the pipeline in the same or an earlier stage; optional
// ones that do not are dropped. GitLab says so in the last words.
func (pl *Planned) resolveNeeds(x *jobIndex, stageOf map[string]int) error {
	if pl.Needs == nil {
		pl.Dependencies = expandNames(x, pl.Dependencies)
		return nil
	}
	needs := x.expandNeeds(pl.Needs)
	if len(needs) > maxNeeds {
		return configError("%s: one job can only need %d others, but you have listed %s. See needs keyword documentation for more details",
			pl.Name, maxNeeds, strconv.Itoa(len(needs)))
	}
	kept := []Need{}
	for _, n := range needs {
		if s, ok := stageOf[n.Job]; n.Pipeline != "" || (ok && s <= pl.StageIndex) {
			kept = append(kept, n)
			continue
		}
		if n.Optional {
			continue
		}
		return configError("'%s' job needs '%s' job, but '%s' does not exist in the pipeline. "+
			"This might be because of the only, except, or rules keywords. "+
			"To need a job that sometimes does not exist in the pipeline, use needs:optional.", pl.Name, n.Job, n.Job)
	}
	pl.Needs = kept
	pl.Dependencies = expandNames(x, pl.Dependencies)
	return nil
}

func expandNames(x *jobIndex, names []string) []string {
	if names == nil {
		return nil
	}
	return append([]string{}, x.expand(names)...)
}

// underInput is the variables of lists (a later list's key replacing
// an earlier one's) under input's: a key input has keeps input's value.
// It starts from a copy of input, which costs less than inserting its
// (predefined, many) variables one by one for every job.
func underInput(input map[string]string, lists ...[]Variable) map[string]string {
	m := maps.Clone(input)
	if m == nil {
		m = map[string]string{}
	}
	for _, l := range lists {
		for _, v := range l {
			if _, ok := input[v.Key]; !ok {
				m[v.Key] = v.Value
			}
		}
	}
	return m
}

// InheritedVariables are the job's variables as GitLab gives them to
// it (its yaml_variables): the global and the workflow rule's variables
// its inherit:variables lets through, then its own; a later key
// replaces an earlier one in its place.
func (j *Job) InheritedVariables(global, workflow []Variable) []Variable {
	root := mergeVariables(global, workflow)
	if j.InheritVariables != nil {
		kept := root[:0:0]
		for _, v := range root {
			if slices.Contains(j.InheritVariables, v.Key) {
				kept = append(kept, v)
			}
		}
		root = kept
	}
	return mergeVariables(root, j.Variables)
}
