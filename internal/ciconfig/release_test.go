package ciconfig

import "testing"

func TestLoad_release(t *testing.T) {
	job := func(r string) string { return "job: {script: x, release: " + r + "}" }
	runLoadCases(t, []loadCase{
		{name: "minimal", src: job("{tag_name: v1, description: d}"), job: "job", field: "release",
			want: `{"tag_name":"v1","description":"d"}`},
		{name: "every key", src: job(`{tag_name: $T, tag_message: m, name: "Release $T", description: "d $X", ref: $CI_COMMIT_SHA,
			released_at: '2021-03-15T08:00:00Z', milestones: [m1, m2],
			assets: {links: [{name: a, url: 'https://x/a', link_type: package, direct_asset_path: /bin/a}, {name: b, url: '$CI_PROJECT_URL/b', filepath: /b}]}}`),
			job: "job", field: "release",
			want: `{"tag_name":"$T","tag_message":"m","name":"Release $T","description":"d $X","ref":"$CI_COMMIT_SHA","released_at":"2021-03-15T08:00:00Z",` +
				`"milestones":["m1","m2"],"links":[{"name":"a","url":"https://x/a","direct_asset_path":"/bin/a","link_type":"package"},{"name":"b","url":"$CI_PROJECT_URL/b","filepath":"/b"}]}`},
		{name: "milestone string", src: job("{tag_name: v1, description: d, milestones: m1}"), job: "job", field: "release",
			want: `{"tag_name":"v1","description":"d","milestones":["m1"]}`},
		{name: "date only", src: job("{tag_name: v1, description: d, released_at: '2021-03-15'}"), job: "job", field: "release",
			want: `{"tag_name":"v1","description":"d","released_at":"2021-03-15"}`},
		{name: "sha ref", src: job("{tag_name: v1, description: d, ref: 0123abc}"), job: "job", field: "release",
			want: `{"tag_name":"v1","description":"d","ref":"0123abc"}`},
		{name: "not a hash", src: job("v1"), err: "jobs:job:release config should be a hash"},
		{name: "unknown key", src: job("{tag_name: v1, description: d, foo: 1}"), err: "jobs:job:release config contains unknown keys: foo"},
		{name: "no tag", src: job("{description: d}"), err: "jobs:job:release tag name should be a string"},
		{name: "blank tag", src: job("{tag_name: ' ', description: d}"), err: "jobs:job:release tag name can't be blank"},
		{name: "tag not a string", src: job("{tag_name: 1, description: d}"), err: "jobs:job:release tag name should be a string"},
		{name: "no description", src: job("{tag_name: v1}"), err: "jobs:job:release description should be a string"},
		{name: "blank description", src: job("{tag_name: v1, description: ''}"), err: "jobs:job:release description can't be blank"},
		{name: "tag message", src: job("{tag_name: v1, description: d, tag_message: [a]}"), err: "jobs:job:release tag message should be a string"},
		{name: "milestones", src: job("{tag_name: v1, description: d, milestones: [1]}"), err: "jobs:job:release milestones should be an array of strings or a string"},
		{name: "released_at", src: job("{tag_name: v1, description: d, released_at: tomorrow}"), err: "jobs:job:release released at must be a valid datetime"},
		{name: "released_at month", src: job("{tag_name: v1, description: d, released_at: '2021-13-01T00:00:00Z'}"), err: "jobs:job:release released at must be a valid datetime"},
		{name: "ref", src: job("{tag_name: v1, description: d, ref: 'a..b'}"), err: "jobs:job:release ref must be a valid ref"},
		{name: "assets not a hash", src: job("{tag_name: v1, description: d, assets: [a]}"), err: "jobs:job:release:assets config should be a hash"},
		{name: "assets unknown", src: job("{tag_name: v1, description: d, assets: {files: a}}"), err: "jobs:job:release:assets config contains unknown keys: files"},
		{name: "links blank", src: job("{tag_name: v1, description: d, assets: {links: []}}"), err: "jobs:job:release:assets links can't be blank"},
		{name: "links not hashes", src: job("{tag_name: v1, description: d, assets: {links: [a]}}"), err: "jobs:job:release:assets links should be an array of hashes"},
		{name: "link unknown", src: job("{tag_name: v1, description: d, assets: {links: [{name: a, url: 'https://x', type: other}]}}"),
			err: "jobs:job:release:assets:links:link config contains unknown keys: type"},
		{name: "link name", src: job("{tag_name: v1, description: d, assets: {links: [{url: 'https://x'}]}}"),
			err: "jobs:job:release:assets:links:link name should be a string"},
		{name: "link url", src: job("{tag_name: v1, description: d, assets: {links: [{name: a}]}}"),
			err: "jobs:job:release:assets:links:link url can't be blank"},
		{name: "link scheme", src: job("{tag_name: v1, description: d, assets: {links: [{name: a, url: 'ftp://x/a'}]}}"),
			err: "jobs:job:release:assets:links:link url is blocked: only allowed schemes are http, https"},
		{name: "link type", src: job("{tag_name: v1, description: d, assets: {links: [{name: a, url: 'https://x', link_type: video}]}}"),
			err: "jobs:job:release:assets:links:link link type should be one of: other, runbook, image, package"},
		// GitLab's Entry::Job: script is required, a release job too.
		{name: "without script", src: "job: {release: {tag_name: v1, description: d}}",
			err: "jobs job config should implement the script:, run:, or trigger: keyword"},
		{name: "bridge", src: "job: {trigger: a/b, release: {tag_name: v1, description: d}}", err: "jobs:job config contains unknown keys: release"},
	}, Options{})
}

// TestRelease_CLICommand: the release step's script, as GitLab's
// Releaser writes it.
func TestRelease_CLICommand(t *testing.T) {
	for _, c := range []struct {
		name string
		r    Release
		want string
	}{
		{"minimal", Release{TagName: "v1", Description: "d"}, `release-cli create --description "d" --tag-name "v1"`},
		{"every flag", Release{Name: "Release $T", Description: "notes $X", TagName: "$T", TagMessage: "m", Ref: "$CI_COMMIT_SHA",
			ReleasedAt: "2021-03-15T08:00:00Z", Milestones: []string{"m1", "m2"},
			Links: []ReleaseLink{{Name: "a & b", URL: "https://x/a?b=<c>", LinkType: "package", DirectAssetPath: "/bin/a"}, {Name: "c", URL: "https://x/c"}}},
			`release-cli create --name "Release $T" --description "notes $X" --tag-name "$T" --tag-message "m" --ref "$CI_COMMIT_SHA"` +
				` --released-at "2021-03-15T08:00:00Z" --milestone "m1" --milestone "m2"` +
				` --assets-link "{\"name\":\"a & b\",\"url\":\"https://x/a?b=<c>\",\"direct_asset_path\":\"/bin/a\",\"link_type\":\"package\"}"` +
				` --assets-link "{\"name\":\"c\",\"url\":\"https://x/c\"}"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := c.r.CLICommand(); got != c.want {
				t.Errorf("got  %s\nwant %s", got, c.want)
			}
		})
	}
}
