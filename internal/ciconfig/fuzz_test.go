package ciconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzLoad: no input makes Load (or Seed of what it loads) panic or take
// long; errors are *Error. Included files are the input itself
// (self.yml, so includes may cycle) or a small fixed file.
func FuzzLoad(f *testing.F) {
	paths, _ := filepath.Glob("testdata/golden/*.yml")
	for _, p := range paths {
		if src, err := os.ReadFile(p); err == nil {
			f.Add(src)
		}
	}
	for _, s := range []string{
		laughs(),
		nested(200),
		amplified(false)[:2000],
		"a: &a [*a]\njob: {script: x}",
		"include: self.yml\njob: {script: x}",
		"include: [a.yml, {local: b.yml, rules: [{if: $X}]}]\njob: {script: !reference [.t, script]}",
		"job:\n  <<: [*nope]\n",
		"job: {script: x, parallel: {matrix: [{A: [1, 2], B: [x, y]}]}, rules: [{if: '$A =~ /1/ && $B', changes: ['{a,b}/**']}]}",
		"a: {script: x, needs: [b]}\nb: {script: x, needs: [a]}",
		"job: {trigger: {include: [a.yml]}, needs: [{pipeline: $P, job: x}]}",
		"variables: {V: 2024-01-01, W: 1:30, X: 0x1F, Y: .inf}\njob: {script: x}",
		"default: {id_tokens: {A: {aud: x}}}\njob: {script: x, id_tokens: {B: {aud: [y, $Z]}, C: {aud: []}}}",
		"job: {script: x, secrets: {S: {vault: a/b@c, file: false}}}",
		"job: {script: x, release: {tag_name: v$X, description: d, ref: main, released_at: '2024-01-02T03:04:05Z', milestones: [m1, 2], assets: {links: [{name: n, url: 'https://e/x', link_type: package, direct_asset_path: /bin}]}}}",
		"job: {script: x, release: {tag_name: [v1], description: '', assets: {links: [1]}}}",
		"job: {script: x, environment: {name: review/$X, url: 'https://$X.t', on_stop: s, auto_stop_in: 1 day}}\ns: {script: x, when: manual, environment: {name: review/$X, action: stop}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		opts := Options{MaxBytes: 64 << 10, Include: func(p string) ([]byte, bool, error) {
			switch {
			case p == "self.yml":
				return data, true, nil
			case strings.HasSuffix(p, ".yml"):
				return []byte(".t: {script: [a]}\nincluded: {script: b, stage: build}\n"), true, nil
			}
			return nil, false, nil
		}}
		start := time.Now()
		c, err := Load(data, opts)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("not an *Error: %v", err)
			}
		} else {
			in := Input{Source: "push", Ref: "main", Variables: map[string]string{"CI_COMMIT_BRANCH": "main", "A": "1"},
				Changes: []string{"a/b.go"}, ChangesKnown: true, Exists: func(string) bool { return true }}
			if _, err := c.Seed(in); err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("Seed: not an *Error: %v", err)
				}
			}
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

// FuzzExpression: no expression makes ParseExpression or Evaluate panic
// or take long, whatever the variables hold (the input itself too).
func FuzzExpression(f *testing.F) {
	for _, s := range []string{
		`$A == "b"`, `$A =~ /^v\d+/i && ($B || $C != null)`, `$A =~ $B`, `(($A))`, `== $A $B`,
		`$A !~ /(/`, `"unterminated`, `${A} == 'x' || null`, strings.Repeat("(", 60) + "$A" + strings.Repeat(")", 60),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseExpression(s)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("not an *Error: %v", err)
			}
			return
		}
		start := time.Now()
		for _, vars := range []map[string]string{nil, {"A": s, "B": "/" + s + "/", "C": ""}, {"A": "v1", "B": "/^v/i"}} {
			e.Evaluate(vars)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

// FuzzInterpolate: no file with a spec: header, whatever its inputs and
// blocks, makes Load panic or answer anything but *Error.
func FuzzInterpolate(f *testing.F) {
	for _, s := range []string{
		"spec:\n  inputs:\n    a: {default: x}\n---\njob:\n  script: ['$[[ inputs.a ]]']\n",
		"spec:\n  inputs:\n    a: {type: array, default: [1]}\n    b: {type: number, default: 2, options: [2]}\n---\n$[[ inputs.a ]]:\n  script: $[[ inputs.a | truncate(0,1) ]]\n",
		"spec: {inputs: {a: {regex: '(', default: v}}}\n---\nj: {script: x}\n",
		"spec:\n  inputs:\n    a: {default: '$[[ inputs.a ]]'}\n---\nj:\n  script: ['$[[ inputs.a | expand_vars | truncate(99999999999,1) ]]-$[[inputs.a.b.c.d.e.f]]']\n",
		"spec: {inputs: null}\n---\nj: {script: x}\n---\n",
	} {
		f.Add([]byte(s), "a")
	}
	f.Fuzz(func(t *testing.T, data []byte, arg string) {
		o := Options{Inputs: map[string]any{"a": arg}, Variables: map[string]string{"A": arg}}
		start := time.Now()
		_, err := Load(data, o)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("not an *Error: %v", err)
			}
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Load took %v", d)
		}
	})
}
