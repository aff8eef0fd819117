package ciconfig

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Bounds of interpolation, GitLab's: blocks in a file, functions in a
// block, bytes of an access expression, bytes of one string, nodes
// visited.
const (
	maxBlocks      = 10_000
	maxFunctions   = 3
	maxAccessBytes = 1024
	maxNodeBytes   = 1 << 20
	maxInterpNodes = 500_000
)

// inputTypes are the types an input may declare, in GitLab's order.
var inputTypes = []string{"array", "boolean", "number", "string"}

// inputKeys are the keys of one input's specification.
var inputKeys = []string{"default", "description", "options", "regex", "type"}

// inputSpec is one entry of spec:inputs.
type inputSpec struct {
	name       string
	typ        string
	def        any
	hasDefault bool
	options    []any
	hasOptions bool
	regex      string
	hasRegex   bool
}

// document is a configuration file split as GitLab's Yaml::Documents
// does: a spec: header (nil without one) and the content.
type document struct {
	header  *mapping
	content any
}

// splitDocuments parses a file: two documents of which the first is a
// mapping with spec: are a header and the content; otherwise the first
// document is the content.
func splitDocuments(src []byte) (document, error) {
	docs, err := parseDocuments(src)
	if err != nil {
		return document{}, err
	}
	if len(docs) == 0 {
		return document{}, nil
	}
	if h, ok := docs[0].(*mapping); ok && len(docs) > 1 && h.has("spec") {
		return document{header: h, content: docs[len(docs)-1]}, nil
	}
	return document{content: docs[0]}, nil
}

// parseHeader validates a header as GitLab's Header::Root does and
// returns its inputs in order.
func parseHeader(h *mapping) ([]inputSpec, *Error) {
	for _, k := range h.keys {
		if k != "spec" {
			return nil, entryError("header", "config contains unknown keys: "+k)
		}
	}
	spec, ok := h.vals["spec"].(*mapping)
	if !ok {
		return nil, entryError("header:spec", "config should be a hash")
	}
	for _, k := range spec.keys {
		if k != "inputs" {
			return nil, entryError("header:spec", "config contains unknown keys: "+k)
		}
	}
	raw, _ := spec.get("inputs")
	if raw == nil {
		return nil, nil
	}
	inputs, ok := raw.(*mapping)
	if !ok {
		return nil, entryError("header:spec:inputs", "config should be a hash")
	}
	var out []inputSpec
	for _, name := range inputs.keys {
		s := inputSpec{name: name, typ: "string"}
		loc := "header:spec:inputs:" + name
		switch v := inputs.vals[name].(type) {
		case nil:
		case *mapping:
			for _, k := range v.keys {
				if !slices.Contains(inputKeys, k) {
					return nil, entryError(loc, "config contains unknown keys: "+k)
				}
			}
			if t, ok := v.get("type"); ok && t != nil {
				ts, _ := t.(string)
				if !slices.Contains(inputTypes, ts) {
					return nil, entryError(loc, "input type unknown value: "+rubyString(t))
				}
				s.typ = ts
			}
			s.def, s.hasDefault = v.get("default")
			if o, ok := v.get("options"); ok {
				list, isList := o.([]any)
				if !isList {
					return nil, entryError(loc, "options should be an array")
				}
				s.options, s.hasOptions = list, true
			}
			if r, ok := v.get("regex"); ok {
				rs, isString := r.(string)
				if !isString {
					return nil, entryError(loc, "regex should be a string")
				}
				s.regex, s.hasRegex = rs, true
			}
		default:
			return nil, entryError(loc, "config should be a hash")
		}
		out = append(out, s)
	}
	return out, nil
}

// resolveInputs checks the arguments against the specifications as
// GitLab's Interpolation::Inputs does and answers each input's value;
// errors are GitLab's messages, all of them.
func resolveInputs(specs []inputSpec, args *mapping) (map[string]any, []string) {
	var errs []string
	var unknown []string
	if args != nil {
		for _, k := range args.keys {
			if !slices.ContainsFunc(specs, func(s inputSpec) bool { return s.name == k }) {
				unknown = append(unknown, k)
			}
		}
	}
	if len(unknown) > 0 {
		errs = append(errs, "unknown input arguments: "+strings.Join(unknown, ", "))
	}
	values := make(map[string]any, len(specs))
	for _, s := range specs {
		value, _ := args.get(s.name)
		var ierrs []string
		fail := func(msg string) { ierrs = append(ierrs, fmt.Sprintf("`%s` input: %s", s.name, msg)) }
		if !s.hasDefault && value == nil {
			fail("required value has not been provided")
		} else {
			if s.hasDefault {
				s.check(s.def, true, fail)
			}
			if value != nil {
				s.check(value, false, fail)
			}
		}
		errs = append(errs, ierrs...)
		if len(ierrs) == 0 {
			if value == nil {
				value = s.def
			}
			values[s.name] = value
		}
	}
	return values, errs
}

// check validates a value (or the default) of an input: its type, its
// options, its regex.
func (s inputSpec) check(v any, isDefault bool, fail func(string)) {
	which := "provided"
	if isDefault {
		which = "default"
	}
	typeOK := false
	switch s.typ {
	case "string":
		_, typeOK = v.(string)
	case "number":
		switch v.(type) {
		case int64, float64:
			typeOK = true
		}
	case "boolean":
		_, typeOK = v.(bool)
	case "array":
		_, typeOK = v.([]any)
	}
	if !typeOK {
		article := "a"
		if s.typ == "array" {
			article = "an"
		}
		fail(fmt.Sprintf("%s value is not %s %s", which, article, s.typ))
	}
	if s.hasOptions && v != nil {
		switch s.typ {
		case "string", "number":
			if !slices.ContainsFunc(s.options, func(o any) bool { return sameScalar(o, v) }) {
				the := ""
				if s.typ == "number" {
					the = "the "
				}
				fail(fmt.Sprintf("`%s` cannot be used because it is not in the list of %sallowed options", rubyString(v), the))
			}
		default:
			fail("Options can only be used with string and number inputs")
		}
	}
	if s.hasRegex {
		if s.typ != "string" {
			fail("RegEx validation can only be used with string inputs")
			return
		}
		str, ok := v.(string)
		if !ok {
			return
		}
		re, err := regexp.Compile(s.regex)
		switch {
		case err != nil:
			fail("invalid regular expression")
		case !re.MatchString(str):
			fail(which + " value does not match required RegEx pattern")
		}
	}
}

// sameScalar compares an option with a value: numbers by value.
func sameScalar(a, b any) bool {
	fa, aNum := number(a)
	fb, bNum := number(b)
	if aNum && bNum {
		return fa == fb
	}
	return a == b
}

func number(v any) (float64, bool) {
	switch v := v.(type) {
	case int64:
		return float64(v), true
	case float64:
		return v, true
	}
	return 0, false
}

// blockPattern is GitLab's interpolation block: $[[ access | fn | … ]].
var blockPattern = regexp.MustCompile(`\$\[\[\s*(\S.*?\S)\s*\]\]`)

// interpolator replaces $[[ inputs.x ]] blocks in a content tree, keys
// and values, with the inputs' values (a block that is a whole string
// gives the value as it is, typed; inside a string its text).
type interpolator struct {
	inputs  map[string]any
	vars    map[string]string
	used    *bool          // set when expand_vars reads vars
	blocks  map[string]any // evaluated blocks by their text
	visited int
	done    map[*mapping]*mapping
}

func interpolate(content any, inputs map[string]any, vars map[string]string) (any, []string) {
	return interpolateTracked(content, inputs, vars, new(bool))
}

// interpolateTracked is interpolate that sets *used when an expand_vars
// function reads the variables.
func interpolateTracked(content any, inputs map[string]any, vars map[string]string, used *bool) (any, []string) {
	in := &interpolator{inputs: inputs, vars: vars, used: used, blocks: map[string]any{}, done: map[*mapping]*mapping{}}
	out, err := in.value(content)
	if err != "" {
		return nil, []string{err}
	}
	return out, nil
}

func (in *interpolator) value(v any) (any, string) {
	if in.visited++; in.visited > maxInterpNodes {
		return nil, "config too large"
	}
	switch v := v.(type) {
	case *mapping:
		if m, ok := in.done[v]; ok {
			return m, ""
		}
		m := newMapping(len(v.keys))
		for _, k := range v.keys {
			nk, err := in.value(k)
			if err != "" {
				return nil, err
			}
			nv, err := in.value(v.vals[k])
			if err != "" {
				return nil, err
			}
			m.set(rubyString(nk), nv)
		}
		in.done[v] = m
		return m, ""
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			ne, err := in.value(e)
			if err != "" {
				return nil, err
			}
			out[i] = ne
		}
		return out, ""
	case string:
		return in.text(v)
	}
	return v, ""
}

// text interpolates one string.
func (in *interpolator) text(s string) (any, string) {
	if !strings.Contains(s, "$[[") {
		return s, ""
	}
	if len(s) > maxNodeBytes {
		return nil, "config node too large"
	}
	matches := blockPattern.FindAllStringSubmatchIndex(s, -1)
	if len(matches) == 0 {
		return s, ""
	}
	var b strings.Builder
	last := 0
	for _, m := range matches {
		block, data := s[m[0]:m[1]], s[m[2]:m[3]]
		v, ok := in.blocks[block]
		if !ok {
			if len(in.blocks) >= maxBlocks {
				return nil, "too many interpolation blocks"
			}
			var err string
			if v, err = in.evaluate(data); err != "" {
				return nil, err
			}
			in.blocks[block] = v
		}
		if m[0] == 0 && m[1] == len(s) {
			return v, ""
		}
		b.WriteString(s[last:m[0]])
		b.WriteString(rubyString(v))
		last = m[1]
	}
	b.WriteString(s[last:])
	return b.String(), ""
}

// evaluate is one block's access and functions.
func (in *interpolator) evaluate(data string) (any, string) {
	parts := strings.Split(data, "|")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	access, functions := parts[0], parts[1:]
	objects := strings.SplitN(access, ".", 5)
	if len(objects) <= 1 {
		return nil, "invalid interpolation access pattern"
	}
	if len(access) > maxAccessBytes {
		return nil, "maximum interpolation expression size exceeded"
	}
	var v any = map[string]any{"inputs": in.inputs}
	for _, o := range objects {
		var ok bool
		switch m := v.(type) {
		case map[string]any:
			v, ok = m[o]
		case *mapping:
			v, ok = m.get(o)
		}
		if !ok {
			return nil, fmt.Sprintf("unknown interpolation key: `%s`", o)
		}
	}
	if len(functions) > maxFunctions {
		return nil, "too many functions in interpolation block"
	}
	for _, f := range functions {
		if !expandVarsFunction.MatchString(f) && !truncateFunction.MatchString(f) {
			return nil, fmt.Sprintf("no function matching `%s`: check that the function name, arguments, and types are correct", f)
		}
	}
	for _, f := range functions {
		s, ok := v.(string)
		if expandVarsFunction.MatchString(f) {
			if !ok {
				return nil, "error in `expand_vars` function: invalid input type: expand_vars can only be used with string inputs"
			}
			*in.used = true
			v = expandVariables(s, in.vars, true)
			continue
		}
		if !ok {
			return nil, "error in `truncate` function: invalid input type: truncate can only be used with string inputs"
		}
		m := truncateFunction.FindStringSubmatch(f)
		offset, _ := strconv.Atoi(m[1])
		length, _ := strconv.Atoi(m[2])
		v = truncate(s, offset, length)
	}
	return v, ""
}

var (
	expandVarsFunction = regexp.MustCompile(`^expand_vars$`)
	truncateFunction   = regexp.MustCompile(`^truncate\(\s*(\d{1,9})\s*,\s*(\d{1,9})\s*\)?$`)
)

// truncate is Ruby's s[offset, length] on characters ("" past the end).
func truncate(s string, offset, length int) string {
	r := []rune(s)
	if offset >= len(r) {
		return ""
	}
	return string(r[offset:min(len(r), offset+length)])
}
