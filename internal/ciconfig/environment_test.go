package ciconfig

import "testing"

func TestLoad_environment(t *testing.T) {
	job := func(env string) string { return "deploy: {script: x, environment: " + env + "}" }
	runLoadCases(t, []loadCase{
		{name: "string", src: job("production"), job: "deploy", field: "kept", want: `{"environment":"production"}`},
		{name: "hash", src: job("{name: review/$CI_COMMIT_REF_SLUG, url: 'https://$CI_COMMIT_REF_SLUG.x.test', auto_stop_in: 1 day, deployment_tier: development}"),
			job: "deploy", field: "kept",
			want: `{"environment":{"auto_stop_in":"1 day","deployment_tier":"development","name":"review/$CI_COMMIT_REF_SLUG","url":"https://$CI_COMMIT_REF_SLUG.x.test"}}`},
		{name: "never", src: job("{name: a, auto_stop_in: never}"), job: "deploy", field: "kept",
			want: `{"environment":{"auto_stop_in":"never","name":"a"}}`},
		{name: "not a hash", src: job("[a]"), err: "jobs:deploy:environment config should be a hash or a string"},
		{name: "no name", src: job("{url: 'https://x.test'}"), err: "jobs:deploy:environment name can't be blank"},
		{name: "blank", src: job("''"), err: "jobs:deploy:environment name can't be blank"},
		{name: "unknown key", src: job("{name: a, color: red}"), err: "jobs:deploy:environment config contains unknown keys: color"},
		{name: "bad action", src: job("{name: a, action: destroy}"), err: "jobs:deploy:environment action should be start, stop, prepare, verify, or access"},
		{name: "bad tier", src: job("{name: a, deployment_tier: prod}"),
			err: "jobs:deploy:environment deployment tier must be one of production, staging, testing, development, other"},
		{name: "bad auto_stop_in", src: job("{name: a, auto_stop_in: soon}"), err: "jobs:deploy:environment auto stop in should be a duration"},
		{name: "url not a string", src: job("{name: a, url: [x]}"), err: "jobs:deploy:environment url should be a string"},
		{name: "on_stop without a stop job", src: job("{name: a, on_stop: gone}"), err: "deploy job: on_stop job gone is not defined"},
	}, Options{})
}

func TestJob_Environment(t *testing.T) {
	cases := []struct {
		kept any
		want JobEnvironment
		ok   bool
	}{
		{nil, JobEnvironment{}, false},
		{"staging", JobEnvironment{Name: "staging"}, true},
		{map[string]any{"name": "review/x", "url": "u", "action": "stop", "on_stop": "s", "auto_stop_in": "1h", "deployment_tier": "other"},
			JobEnvironment{Name: "review/x", URL: "u", Action: "stop", OnStop: "s", AutoStopIn: "1h", Tier: "other"}, true},
	}
	for _, c := range cases {
		j := Job{}
		if c.kept != nil {
			j.Kept = map[string]any{"environment": c.kept}
		}
		got, ok := j.Environment()
		if got != c.want || ok != c.ok {
			t.Errorf("Environment() of %v = %+v, %v; want %+v, %v", c.kept, got, ok, c.want, c.ok)
		}
	}
}
