package model

import (
	"testing"
)

func TestParseHumanDuration(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1 day", 86400, true},
		{"1d", 86400, true},
		{"3 days", 3 * 86400, true},
		{"2 weeks", 14 * 86400, true},
		{"1 month", 30 * 86400, true},
		{"1 year and 2 days", 31557600 + 2*86400, true},
		{"2h 30m", 2*3600 + 30*60, true},
		{"90", 90, true},
		{"1.5 hours", 5400, true},
		{"", 0, false},
		{"soon", 0, false},
		{"3 fortnights", 0, false},
		{"day", 0, false},
		{"5", 5, true},
		{"-1", 0, false},
		{"99999999 years", 0, false},
	} {
		got, ok := ParseHumanDuration(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseHumanDuration(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for sec, want := range map[int64]string{86400: "1 day", 3 * 86400: "3 days", 30 * 86400: "1 month",
		30*86400 + 2*86400: "1 month 2 days", 14 * 86400: "2 weeks", 3600: "1 hour", 0: "0 seconds"} {
		if got := HumanDuration(sec); got != want {
			t.Errorf("HumanDuration(%d) = %q; want %q", sec, got, want)
		}
	}
}

func TestApplicationSettings_Set(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    SettingInput
		err   string
		check func(ApplicationSettings) bool
	}{
		{"signup_enabled", SettingInput{Values: []string{"false"}}, "", func(s ApplicationSettings) bool { return !s.SignupEnabled }},
		{"signup_enabled", SettingInput{Values: []string{"maybe"}}, "signup_enabled is invalid", nil},
		{"signup_enabled", SettingInput{Null: true}, "signup_enabled is invalid", nil},
		{"default_projects_limit", SettingInput{Values: []string{"42"}}, "", func(s ApplicationSettings) bool { return s.DefaultProjectsLimit == 42 }},
		{"default_projects_limit", SettingInput{Values: []string{"4.2"}}, "default_projects_limit is invalid", nil},
		{"default_projects_limit", SettingInput{Values: []string{"1", "2"}}, "default_projects_limit is invalid", nil},
		{"file_template_project_id", SettingInput{Null: true}, "", func(s ApplicationSettings) bool { return s.FileTemplateProjectID == nil }},
		{"default_project_visibility", SettingInput{Values: []string{"20"}}, "", func(s ApplicationSettings) bool { return s.DefaultProjectVisibility == Public }},
		{"default_project_visibility", SettingInput{Values: []string{"secret"}}, "default_project_visibility does not have a valid value", nil},
		{"restricted_visibility_levels", SettingInput{Values: []string{"public,internal", "public"}}, "",
			func(s ApplicationSettings) bool { return len(s.RestrictedVisibilityLevels) == 2 }},
		{"restricted_visibility_levels", SettingInput{Values: []string{"hidden"}}, "restricted_visibility_levels 'hidden' is not a valid visibility level", nil},
		{"domain_whitelist", SettingInput{Values: []string{"a.example\nb.example;c.example"}}, "",
			func(s ApplicationSettings) bool { return len(s.DomainAllowlist) == 3 }},
		{"domain_allowlist", SettingInput{Null: true}, "", func(s ApplicationSettings) bool { return s.DomainAllowlist == nil }},
		{"default_branch_protection", SettingInput{Values: []string{"5"}}, "default_branch_protection does not have a valid value", nil},
		{"enabled_git_access_protocol", SettingInput{Values: []string{"nil"}}, "", func(s ApplicationSettings) bool { return s.EnabledGitAccessProtocol == nil }},
		{"polling_interval_multiplier", SettingInput{Values: []string{"2.5"}}, "", func(s ApplicationSettings) bool { return s.PollingIntervalMultiplier == 2.5 }},
		{"polling_interval_multiplier", SettingInput{Values: []string{"NaN"}}, "polling_interval_multiplier is invalid", nil},
		{"repository_storages_weighted", SettingInput{Hash: map[string]string{"default": "50"}}, "",
			func(s ApplicationSettings) bool { return s.RepositoryStoragesWeighted["default"] == 50 }},
		{"repository_storages_weighted", SettingInput{Values: []string{"50"}}, "repository_storages_weighted is invalid", nil},
		{"elasticsearch_project_ids", SettingInput{Values: []string{"1,2", "x"}}, "elasticsearch_project_ids is invalid", nil},
		{"akismet_api_key", SettingInput{Values: []string{"k"}}, "", func(s ApplicationSettings) bool { return s.Secrets()["akismet_api_key"] == "k" }},
	} {
		s := DefaultApplicationSettings()
		err := s.Set(c.name, c.in)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("Set(%s, %+v): %v", c.name, c.in, err)
		case c.err != "" && (err == nil || !sameMessage(err, c.err)):
			t.Errorf("Set(%s, %+v) = %v; want %q", c.name, c.in, err, c.err)
		case c.check != nil && !c.check(s):
			t.Errorf("Set(%s, %+v) did not take", c.name, c.in)
		}
	}
}

func sameMessage(err error, want string) bool {
	e, ok := err.(*Error)
	if !ok {
		return false
	}
	if e.Fields != nil {
		return e.Fields.String() == want
	}
	return e.Message == want
}

func TestApplicationSettings_defaultsValid(t *testing.T) {
	if err := DefaultApplicationSettings().Validate(nil); err != nil {
		t.Fatalf("GitLab's defaults are invalid: %v", err)
	}
	c := DefaultApplicationSettings()
	c.DomainDenylist = append(c.DomainDenylist, "x")
	c.RepositoryStoragesWeighted["other"] = 1
	if d := DefaultApplicationSettings(); len(d.DomainDenylist) != 0 || len(d.RepositoryStoragesWeighted) != 1 {
		t.Fatalf("defaults share lists or maps")
	}
	s := DefaultApplicationSettings()
	s.AkismetAPIKey = Ptr("secret")
	cl := s.Clone()
	*cl.AkismetAPIKey = "changed"
	cl.RestrictedVisibilityLevels = append(cl.RestrictedVisibilityLevels, Public)
	if *s.AkismetAPIKey != "secret" || len(s.RestrictedVisibilityLevels) != 0 {
		t.Fatalf("Clone shares values")
	}
	if _, ok := s.Document()["akismet_api_key"]; ok {
		t.Fatalf("the document holds a secret")
	}
}

// FuzzApplicationSettings_Set: no input to any attribute panics, and a
// value Set accepts leaves settings that validate or fail with field
// errors, never anything else.
func FuzzApplicationSettings_Set(f *testing.F) {
	f.Add("default_projects_limit", "42", false)
	f.Add("restricted_visibility_levels", "public,10", false)
	f.Add("archive_builds_in_human_readable", "1 year and 2 days", false)
	f.Add("domain_allowlist", "", true)
	f.Add("polling_interval_multiplier", "1e308", false)
	f.Fuzz(func(t *testing.T, name, value string, null bool) {
		if _, ok := SettingAttributeNamed(name); !ok {
			attrs := SettingAttributes()
			name = attrs[len(name)%len(attrs)].Name
		}
		s := DefaultApplicationSettings()
		if err := s.Set(name, SettingInput{Values: []string{value}, Null: null}); err != nil {
			if KindOf(err) != KindParam && KindOf(err) != KindInvalid {
				t.Fatalf("Set(%q, %q): %v", name, value, err)
			}
			return
		}
		s.Normalize()
		if err := s.Validate(nil); err != nil && KindOf(err) != KindInvalid {
			t.Fatalf("Validate after Set(%q, %q): %v", name, value, err)
		}
		_ = s.Shown()
	})
}
