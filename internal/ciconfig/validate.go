package ciconfig

import (
	"slices"
	"strings"
)

// instanceCount is how many jobs j makes.
func (j *Job) instanceCount() int {
	switch p := j.Parallel; {
	case p == nil:
		return 1
	case p.Matrix == nil:
		return p.Total
	default:
		n := 0
		for _, vars := range p.Matrix {
			combos := 1
			for _, values := range vars {
				combos *= len(values)
			}
			n += combos
		}
		return n
	}
}

// jobIndex knows the configuration's jobs by the names of their
// instances (a parallel job is its instances, as GitLab's normalizer
// makes them).
type jobIndex struct {
	stages    []string
	order     []string        // instance names in order
	jobs      map[string]*Job // by instance name
	instances map[string][]string
}

func newJobIndex(c *Config) *jobIndex {
	x := &jobIndex{stages: c.Stages, jobs: map[string]*Job{}, instances: map[string][]string{}}
	for _, j := range c.Jobs {
		for _, in := range j.instances() {
			x.order = append(x.order, in.name)
			x.jobs[in.name] = j
			if j.Parallel != nil {
				x.instances[j.Name] = append(x.instances[j.Name], in.name)
			}
		}
	}
	return x
}

// expand names parallel jobs by their instances.
func (x *jobIndex) expand(names []string) []string {
	var out []string
	for _, n := range names {
		if all, ok := x.instances[n]; ok {
			out = append(out, all...)
		} else {
			out = append(out, n)
		}
	}
	return out
}

func (x *jobIndex) expandNeeds(needs []Need) []Need {
	var out []Need
	for _, n := range needs {
		if all, ok := x.instances[n.Job]; ok && n.Pipeline == "" {
			for _, name := range all {
				e := n
				e.Job = name
				out = append(out, e)
			}
			continue
		}
		out = append(out, n)
	}
	return out
}

func (x *jobIndex) stageIndex(name string) int {
	j, ok := x.jobs[name]
	if !ok {
		return -1
	}
	return slices.Index(x.stages, j.Stage)
}

// validate is GitLab's logical validation of a loaded configuration, on
// the jobs' instances in order: each stage exists; dependencies and
// needs (the job's and its rules') name jobs of the same or an earlier
// stage, none twice; environment:on_stop names a stopping job; then no
// needs form a cycle.
func (c *Config) validate() error {
	x := newJobIndex(c)
	for _, name := range x.order {
		j := x.jobs[name]
		if !slices.Contains(c.Stages, j.Stage) {
			return configError("%s job: chosen stage %s does not exist; available stages are %s", name, j.Stage, strings.Join(c.Stages, ", "))
		}
		for _, d := range x.expand(j.Dependencies) {
			if err := x.dependency(name, d, "dependency", false); err != nil {
				return err
			}
		}
		lists := [][]Need{j.Needs}
		for _, r := range j.Rules {
			lists = append(lists, r.Needs)
		}
		for _, needs := range lists {
			if err := x.needs(name, x.expandNeeds(needs)); err != nil {
				return err
			}
		}
		if err := x.onStop(name, j); err != nil {
			return err
		}
	}
	return x.acyclic()
}

func (x *jobIndex) needs(name string, needs []Need) error {
	seen := map[string]int{}
	var dups []string
	for _, n := range needs {
		if n.Pipeline != "" {
			continue
		}
		if err := x.dependency(name, n.Job, "need", n.Optional); err != nil {
			return err
		}
		if seen[n.Job]++; seen[n.Job] == 2 {
			dups = append(dups, n.Job)
		}
	}
	if len(dups) > 0 {
		return configError("%s has the following needs duplicated: %s.", name, strings.Join(dups, ", "))
	}
	return nil
}

func (x *jobIndex) dependency(name, dep, kind string, optional bool) error {
	if _, ok := x.jobs[dep]; !ok {
		if optional {
			return nil
		}
		return configError("%s job: undefined %s: %s", name, kind, dep)
	}
	if kind == "need" && nameLength(dep) > 255 {
		return configError("%s job: need `%s` name is too long (maximum is 255 characters)", name, dep)
	}
	if d := x.stageIndex(dep); d < 0 || d > x.stageIndex(name) {
		return configError("%s job: %s %s is not defined in current or prior stages", name, kind, dep)
	}
	return nil
}

// onStop checks environment:on_stop, which names the job that stops the
// environment.
func (x *jobIndex) onStop(name string, j *Job) error {
	env, _ := j.Kept["environment"].(map[string]any)
	stop, ok := env["on_stop"].(string)
	if !ok {
		return nil
	}
	sj, ok := x.jobs[stop]
	if !ok {
		return configError("%s job: on_stop job %s is not defined", name, stop)
	}
	senv, ok := sj.Kept["environment"]
	if !ok {
		return configError("%s job: on_stop job %s does not have environment defined", name, stop)
	}
	sm, _ := senv.(map[string]any)
	stopName := senv
	if sm != nil {
		stopName = sm["name"]
	}
	if stopName != env["name"] {
		return configError("%s job: on_stop job %s have different environment name", name, stop)
	}
	if sm == nil || sm["action"] != "stop" {
		return configError("%s job: on_stop job %s needs to have action stop defined", name, stop)
	}
	return nil
}

// acyclic is Ruby's TSort over the jobs' needs, as GitLab runs it: the
// first strongly connected component of more than one job, or a job
// needing itself, is reported as TSort words it.
func (x *jobIndex) acyclic() error {
	children := func(name string) []string {
		j, ok := x.jobs[name]
		if !ok {
			return nil
		}
		var out []string
		for _, n := range x.expandNeeds(j.Needs) {
			if n.Pipeline == "" {
				out = append(out, n.Job)
			}
		}
		return out
	}
	ids := map[string]int{}
	done := map[string]bool{}
	var stack []string
	var err error
	var visit func(node string) int
	visit = func(node string) int {
		id := len(ids)
		ids[node] = id
		low := id
		stack = append(stack, node)
		kids := children(node)
		if slices.Contains(kids, node) {
			err = configError("The pipeline has circular dependencies: self-dependency: %s", node)
			return low
		}
		for _, k := range kids {
			if err != nil {
				return low
			}
			if kid, seen := ids[k]; seen {
				if !done[k] && kid < low {
					low = kid
				}
				continue
			}
			low = min(low, visit(k))
		}
		if err == nil && low == id {
			i := slices.Index(stack, node)
			component := stack[i:]
			stack = stack[:i]
			for _, n := range component {
				done[n] = true
			}
			if len(component) > 1 {
				quoted := make([]string, len(component))
				for i, n := range component {
					quoted[i] = rubyQuote(n)
				}
				err = configError("The pipeline has circular dependencies: topological sort failed: [%s]", strings.Join(quoted, ", "))
			}
		}
		return low
	}
	for _, name := range x.order {
		if _, seen := ids[name]; !seen && err == nil {
			visit(name)
		}
	}
	return err
}
