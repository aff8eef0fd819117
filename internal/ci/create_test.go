package ci

import (
	"encoding/json"
	"os"
	"testing"

	"quarry/internal/ciconfig"
	"quarry/internal/model"
)

// TestJobsOf_optionsAsMarshal: the jobs' options jobsOf encodes (into
// one shared buffer) are, byte for byte, json.Marshal of each job's
// options, as they were stored before; the other fields are the seeded
// job's.
func TestJobsOf_optionsAsMarshal(t *testing.T) {
	fifty, err := os.ReadFile("../ciconfig/testdata/golden/fifty_jobs.yml")
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{
		"fifty jobs": string(fifty),
		"text and environments": `
variables: {HTML: "<b>&amp;</b>", QUOTE: "say \"hi\"\\n", UNI: "日本 😀 \u2028"}
stages: [build, deploy]
build:
  stage: build
  script: ["echo \"<$HTML>\" && printf '\\t%s\\n' \"$UNI\""]
  tags: [linux, "déjà vu"]
deploy:
  stage: deploy
  needs: [build]
  script: [ship]
  environment: {name: "review/$CI_COMMIT_REF_NAME", url: "https://$CI_COMMIT_REF_NAME.example.com/?a=1&b=2"}
  resource_group: prod
bad-env:
  stage: deploy
  needs: []
  script: [x]
  environment: {name: "review/$NOPE/.."}
`,
	} {
		t.Run(name, func(t *testing.T) {
			cfg, err := ciconfig.Load([]byte(src), ciconfig.Options{})
			if err != nil {
				t.Fatal(err)
			}
			vars := map[string]string{"CI_DEFAULT_BRANCH": "main", "CI_COMMIT_BRANCH": "main", "CI_COMMIT_REF_NAME": "main",
				"CI_PIPELINE_SOURCE": "push"}
			seed, err := cfg.Seed(ciconfig.Input{Source: "push", Ref: "main", Variables: vars})
			if err != nil {
				t.Fatal(err)
			}
			p := model.Pipeline{ProjectID: 7, UserID: 3, Ref: "main", SHA: "0123456789abcdef0123456789abcdef01234567"}
			jobs, err := jobsOf(p, seed, cfg.Variables, vars)
			if err != nil {
				t.Fatal(err)
			}
			if len(jobs) != len(seed.Jobs) || len(jobs) < 3 {
				t.Fatalf("%d jobs of %d seeded", len(jobs), len(seed.Jobs))
			}
			deploys := 0
			for i, pl := range seed.Jobs {
				yamlVars := pl.InheritedVariables(cfg.Variables, seed.Variables)
				deploy, _ := targetOf(pl, yamlVars, vars)
				want, err := json.Marshal(jobOptions{Planned: pl, YAMLVariables: yamlVars, Deploy: deploy})
				if err != nil {
					t.Fatal(err)
				}
				j := jobs[i]
				if j.Options != string(want) {
					t.Errorf("job %s options:\n got %s\nwant %s", pl.Name, j.Options, want)
				}
				if deploy != nil {
					deploys++
				}
				if j.Name != pl.Name || j.Stage != pl.Stage || j.ProjectID != 7 || j.UserID != 3 || j.SHA != p.SHA ||
					len(j.Needs) != len(pl.Needs) || j.DAG != (pl.Needs != nil) {
					t.Errorf("job %d: %+v for %s", i, j.Job, pl.Name)
				}
				for k, n := range pl.Needs {
					if j.Needs[k] != n.Job {
						t.Errorf("job %s needs %v", pl.Name, j.Needs)
					}
				}
			}
			if deploys == 0 {
				t.Fatal("no job deploys")
			}
		})
	}
}
