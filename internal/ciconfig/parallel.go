package ciconfig

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// maxParallel is GitLab's PARALLEL_LIMIT: jobs one parallel: makes.
const maxParallel = 200

// decodeParallel reads parallel: at loc: N (1..200; not for bridges) or
// {matrix: [{VAR: value or [values]}, …]} making at most 200 jobs.
func decodeParallel(loc string, v any, bridge bool) (*Parallel, error) {
	switch v := v.(type) {
	case int64, float64:
		n, err := integerIn(loc, "config", v, 1, maxParallel)
		if err != nil {
			return nil, err
		}
		if bridge {
			return nil, entryError(loc, `config cannot use "parallel: <number>".`)
		}
		return &Parallel{Total: n}, nil
	case *mapping:
		if err := allowedKeys(loc, v, "matrix"); err != nil {
			return nil, err
		}
		if err := missingKeys(loc, v, "matrix"); err != nil {
			return nil, err
		}
		return decodeMatrix(loc+":matrix", v.vals["matrix"])
	}
	return nil, configError("%s should be an integer or a hash", loc)
}

func decodeMatrix(loc string, v any) (*Parallel, error) {
	list, ok := v.([]any)
	if ok {
		for _, e := range list {
			if _, isMap := e.(*mapping); !isMap {
				ok = false
			}
		}
	}
	if !ok {
		return nil, entryError(loc, "config should be an array of hashes")
	}
	p := &Parallel{Matrix: []map[string][]string{}, Keys: [][]string{}}
	total := 0
	for _, e := range list {
		m := e.(*mapping)
		vars, ok := matrixVariables(m)
		if !ok {
			return nil, entryError(loc+":variables", "config should be a hash of key value pairs, value can be an array")
		}
		if m.len() == 0 {
			return nil, entryError(loc+":variables", "config requires at least 1 items")
		}
		jobs := 1
		for _, k := range m.keys {
			if jobs *= len(vars[k]); jobs > maxParallel {
				break
			}
		}
		if total += jobs; total > maxParallel {
			total = maxParallel + 1
		}
		p.Matrix = append(p.Matrix, vars)
		p.Keys = append(p.Keys, m.keys)
	}
	if total > maxParallel {
		return nil, entryError(loc, "config generates too many jobs (maximum is "+strconv.Itoa(maxParallel)+")")
	}
	return p, nil
}

// matrixVariables is one matrix entry: each value a string or an
// integer, or a non-empty list of them.
func matrixVariables(m *mapping) (map[string][]string, bool) {
	out := make(map[string][]string, m.len())
	for _, k := range m.keys {
		if blank(m.vals[k]) {
			return nil, false
		}
		for _, e := range arrayWrap(m.vals[k]) {
			switch e.(type) {
			case string, int64:
				out[k] = append(out[k], rubyString(e))
			default:
				return nil, false
			}
		}
	}
	return out, true
}

// instance is one job a configured job makes: itself, or one of its
// parallel: jobs.
type instance struct {
	name         string
	index, total int
	matrix       map[string]string
}

// instances are the jobs a configured job makes, named as GitLab names
// them: "name 1/3", or "name: [value, value]" for a matrix combination
// (values in the order the entry writes its variables).
func (j *Job) instances() []instance {
	p := j.Parallel
	switch {
	case p == nil:
		return []instance{{name: j.Name}}
	case p.Matrix == nil:
		out := make([]instance, p.Total)
		for i := range out {
			out[i] = instance{name: j.Name + " " + strconv.Itoa(i+1) + "/" + strconv.Itoa(p.Total), index: i + 1, total: p.Total}
		}
		return out
	}
	var out []instance
	for e, vars := range p.Matrix {
		var keys []string
		if e < len(p.Keys) {
			keys = p.Keys[e]
		} else { // a Parallel built elsewhere, without Keys
			keys = slices.Sorted(maps.Keys(vars))
		}
		if len(keys) == 0 || slices.ContainsFunc(keys, func(k string) bool { return len(vars[k]) == 0 }) {
			continue
		}
		combo := make([]int, len(keys))
		for {
			values := make([]string, len(keys))
			matrix := make(map[string]string, len(keys))
			for i, k := range keys {
				values[i] = vars[k][combo[i]]
				matrix[k] = values[i]
			}
			out = append(out, instance{name: j.Name + ": [" + strings.Join(values, ", ") + "]", matrix: matrix})
			i := len(keys) - 1
			for ; i >= 0; i-- {
				if combo[i]++; combo[i] < len(vars[keys[i]]) {
					break
				}
				combo[i] = 0
			}
			if i < 0 {
				break
			}
		}
	}
	for i := range out {
		out[i].index, out[i].total = i+1, len(out)
	}
	return out
}
