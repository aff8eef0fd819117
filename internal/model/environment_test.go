package model

import (
	"strings"
	"testing"
)

func TestEnvironmentSlug(t *testing.T) {
	cases := []struct{ name, want string }{
		{"staging", "staging"},
		{"production", "production"},
		{"prod-1", "prod-1"},
		{"a-very-long-name-but-plain", ""}, // 26 chars: shortened, suffixed
		{"review/fix-foo", ""},             // changed: suffixed
		{"Production", ""},                 // changed (case): suffixed
		{"1st", ""},                        // must start with a letter
		{"env", "env"},
	}
	for _, c := range cases {
		got := EnvironmentSlug(c.name)
		if len(got) > 24 || strings.HasSuffix(got, "-") || got[0] < 'a' || got[0] > 'z' {
			t.Errorf("EnvironmentSlug(%q) = %q: not a valid slug", c.name, got)
		}
		if c.want != "" && got != c.want {
			t.Errorf("EnvironmentSlug(%q) = %q; want %q", c.name, got, c.want)
		}
		if c.want == "" && (len(got) < 8 || got[len(got)-7] != '-') {
			t.Errorf("EnvironmentSlug(%q) = %q; want a 6-character suffix", c.name, got)
		}
	}
	if a, b := EnvironmentSlug("review/one"), EnvironmentSlug("review-one"); a == b || !strings.HasPrefix(a, "review-one-") {
		t.Errorf("slugs %q, %q: names that slugify alike must differ by their suffix", a, b)
	}
	if got := EnvironmentSlug("review/feature-branch-name"); got[:18] != "review-feature-br-" || len(got) != 24 {
		t.Errorf("long slug %q; want 17 characters, a dash and the suffix", got)
	}
	if got := EnvironmentSlug("1st"); !strings.HasPrefix(got, "env-1st-") {
		t.Errorf("slug of 1st = %q; want env-1st-…", got)
	}
	// The suffix is the name's, not random (GitLab's SHA-256 based one).
	if got := EnvironmentSlug("review/fix-foo"); got != "review-fix-foo-v25cyx" {
		t.Errorf("EnvironmentSlug(review/fix-foo) = %q; want review-fix-foo-v25cyx", got)
	}
}

func FuzzEnvironmentSlug(f *testing.F) {
	for _, s := range []string{"", "review/$CI", "---", "Ünïcode", "production"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got := EnvironmentSlug(name)
		if len(got) == 0 || len(got) > 24 || strings.HasSuffix(got, "-") || strings.Contains(got, "--") {
			t.Fatalf("EnvironmentSlug(%q) = %q", name, got)
		}
		for _, r := range got {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				t.Fatalf("EnvironmentSlug(%q) = %q: character %q", name, got, r)
			}
		}
	})
}

func TestGuessTier(t *testing.T) {
	cases := map[string]string{
		"production": TierProduction, "prod": TierProduction, "prd": TierProduction, "live": TierProduction,
		"staging": TierStaging, "stg": TierStaging, "pre-prod": TierStaging, "demo": TierStaging, "model": TierStaging,
		"test": TierTesting, "qa": TierTesting, "acceptance": TierTesting, "integration": TierTesting,
		"dev": TierDevelopment, "review/feature": TierDevelopment, "trunk": TierDevelopment, "Development": TierDevelopment,
		"canary": TierOther, "eu-west": TierOther,
	}
	for name, want := range cases {
		if got := GuessTier(name); got != want {
			t.Errorf("GuessTier(%q) = %s; want %s", name, got, want)
		}
	}
}

func TestScopeMatches(t *testing.T) {
	cases := []struct {
		scope, env string
		want       bool
	}{
		{"*", "", true},
		{"*", "production", true},
		{"production", "production", true},
		{"production", "", false},
		{"production", "production2", false},
		{"review/*", "review/feature-1", true},
		{"review/*", "review/", true},
		{"review/*", "staging", false},
		{"review/*", "", false},
		{"*/prod", "eu/prod", true},
		{"*/prod", "eu/production", false},
		{"eu-*-prod", "eu-west-prod", true},
		{"eu-*-prod", "eu-prod", false},
		{"a*b*c", "abc", true},
		{"a*b*c", "axxbyyc", true},
		{"a*b*c", "acb", false},
	}
	for _, c := range cases {
		if got := ScopeMatches(c.scope, c.env); got != c.want {
			t.Errorf("ScopeMatches(%q, %q) = %v; want %v", c.scope, c.env, got, c.want)
		}
	}
}

func TestDeploymentStatus_CanMoveTo(t *testing.T) {
	allowed := map[[2]DeploymentStatus]bool{
		{DeployCreated, DeployRunning}: true, {DeployCreated, DeploySuccess}: true, {DeployCreated, DeployFailed}: true,
		{DeployCreated, DeployCanceled}: true, {DeployCreated, DeploySkipped}: true, {DeployCreated, DeployBlocked}: true,
		{DeployRunning, DeploySuccess}: true, {DeployRunning, DeployFailed}: true, {DeployRunning, DeployCanceled}: true,
		{DeployRunning, DeploySkipped}: true,
		{DeployBlocked, DeployCreated}: true, {DeployBlocked, DeployFailed}: true, {DeployBlocked, DeployCanceled}: true,
	}
	for _, from := range DeploymentStatuses {
		for _, to := range DeploymentStatuses {
			if got := from.CanMoveTo(to); got != allowed[[2]DeploymentStatus{from, to}] {
				t.Errorf("%s → %s: %v", from, to, got)
			}
		}
	}
	for _, s := range []DeploymentStatus{DeploySuccess, DeployFailed, DeployCanceled} {
		if !s.Finished() {
			t.Errorf("%s not finished", s)
		}
	}
}

func TestEnvironmentState_CanMoveTo(t *testing.T) {
	allowed := map[[2]EnvironmentState]bool{
		{EnvAvailable, EnvStopping}: true, {EnvAvailable, EnvStopped}: true,
		{EnvStopping, EnvStopped}: true, {EnvStopping, EnvAvailable}: true,
		{EnvStopped, EnvAvailable}: true,
	}
	for _, from := range EnvironmentStates {
		for _, to := range EnvironmentStates {
			if got := from.CanMoveTo(to); got != allowed[[2]EnvironmentState{from, to}] {
				t.Errorf("%s → %s: %v", from, to, got)
			}
		}
	}
}

func TestDeploymentFor(t *testing.T) {
	cases := map[CIStatus]DeploymentStatus{StatusRunning: DeployRunning, StatusSuccess: DeploySuccess, StatusFailed: DeployFailed,
		StatusCanceled: DeployCanceled, StatusSkipped: DeploySkipped}
	for _, js := range PipelineStatuses {
		got, ok := DeploymentFor(js)
		want, wantOK := cases[js]
		if got != want || ok != wantOK {
			t.Errorf("DeploymentFor(%s) = %s, %v; want %s, %v", js, got, ok, want, wantOK)
		}
	}
}

func TestValidEnvironmentName(t *testing.T) {
	for name, want := range map[string]bool{"production": true, "review/feat-1": true, "my env_1.${X}": true, "": false,
		"/lead": false, "trail/": false, "bad!": false, strings.Repeat("a", 256): false} {
		if got := ValidEnvironmentName(name); got != want {
			t.Errorf("ValidEnvironmentName(%q) = %v; want %v", name, got, want)
		}
	}
}
