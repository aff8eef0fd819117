package app

import (
	"os/exec"
	"strings"
	"testing"
)

// allowedImports is DESIGN.md's import graph: what each package of Quarry
// may import from Quarry itself (the standard library and third-party
// modules are always allowed). A package matches the longest prefix.
var allowedImports = map[string][]string{
	"quarry/cmd/quarry":                         {"app", "config", "buildinfo", "storetest", "leaktest", "runner", "memtrim", "logbuf"},
	"quarry/internal/logbuf":                    {},
	"quarry/internal/memtrim":                   {},
	"quarry/internal/bytelru":                   {},
	"quarry/internal/gencache":                  {},
	"quarry/internal/leaktest":                  {},
	"quarry/internal/app":                       {"*"},
	"quarry/internal/config":                    {},
	"quarry/internal/buildinfo":                 {},
	"quarry/internal/model":                     {},
	"quarry/internal/ratelimit":                 {},
	"quarry/internal/secrets":                   {},
	"quarry/internal/changelog/tmpl":            {},
	"quarry/internal/changelog":                 {"changelog/tmpl", "store", "auth", "model", "git"},
	"quarry/internal/store":                     {"model", "gencache"},
	"quarry/internal/storetest":                 {"store", "model", "secrets"},
	"quarry/internal/auth":                      {"model"},
	"quarry/internal/git":                       {},
	"quarry/internal/git/gittest":               {},
	"quarry/internal/git/catfile":               {"git"},
	"quarry/internal/git/smarthttp":             {"git"},
	"quarry/internal/gitaccess":                 {"auth", "model", "git/smarthttp"},
	"quarry/internal/git/gitrepo":               {"git"},
	"quarry/internal/runner":                    {"git"},
	"quarry/internal/groups":                    {"store", "auth", "model", "uploads", "tasks"},
	"quarry/internal/projects":                  {"store", "auth", "model", "uploads", "tasks", "git/gitrepo", "gencache"},
	"quarry/internal/topics":                    {"store", "auth", "model", "uploads"},
	"quarry/internal/tasks":                     {"store", "model"},
	"quarry/internal/ciconfig":                  {},
	"quarry/internal/outbound":                  {},
	"quarry/internal/testreport":                {},
	"quarry/internal/jobfiles":                  {},
	"quarry/internal/importexport":              {},
	"quarry/internal/codeowners":                {},
	"quarry/internal/codeowners/codeownerstest": {},
	"quarry/internal/ci":                        {"store", "auth", "model", "tasks", "git", "ciconfig", "testreport", "jobfiles", "oidc"},
	"quarry/internal/runners":                   {"store", "auth", "model", "ci"},
	"quarry/internal/agents":                    {"store", "auth", "model", "git"},
	"quarry/internal/jobtokenscope":             {"store", "auth", "model"},
	"quarry/internal/mergerequests":             {"store", "auth", "model", "git", "tasks"},
	"quarry/internal/approvals":                 {"store", "auth", "model", "git", "codeowners"},
	"quarry/internal/wikis":                     {"store", "auth", "model", "git", "tasks"},
	"quarry/internal/snippets":                  {"store", "auth", "model", "git", "tasks"},
	"quarry/internal/badges":                    {"store", "auth", "model"},
	"quarry/internal/keys":                      {"store", "auth", "model"},
	"quarry/internal/activity":                  {"store", "auth", "model", "git", "git/gitrepo"},
	"quarry/internal/sshd":                      {"gitaccess", "git", "git/smarthttp", "auth", "model"},
	"quarry/internal/releases":                  {"store", "auth", "model", "repofiles"},
	"quarry/internal/schedules":                 {"store", "auth", "model", "tasks", "ci"},
	"quarry/internal/errortracking":             {"store", "auth", "model"},
	"quarry/internal/oidc":                      {"store", "model"},
	"quarry/internal/protectedenvs":             {"store", "auth", "model"},
	"quarry/internal/labels":                    {"store", "auth", "model"},
	"quarry/internal/milestones":                {"store", "auth", "model"},
	"quarry/internal/issues":                    {"store", "auth", "model"},
	"quarry/internal/notes":                     {"store", "auth", "model"},
	"quarry/internal/boards":                    {"store", "auth", "model"},
	"quarry/internal/alerts":                    {"store", "auth", "model", "uploads"},
	"quarry/internal/events":                    {"tasks", "store", "model"},
	"quarry/internal/uploads":                   {"model"},
	"quarry/internal/users":                     {"store", "auth", "model", "uploads", "tasks", "gencache"},
	"quarry/internal/tokens":                    {"store", "auth", "model", "gencache"},
	"quarry/internal/settings":                  {"store", "auth", "model", "git"},
	"quarry/internal/geo":                       {"store", "auth", "model", "git/gitrepo", "jobfiles"},
	"quarry/internal/storagemoves":              {"store", "auth", "model", "tasks", "git/gitrepo"},
	"quarry/internal/housekeeping":              {"store", "auth", "model", "tasks", "git/gitrepo"},
	"quarry/internal/groupexport": {"store", "auth", "model", "tasks", "git/gitrepo", "groups", "labels", "milestones", "badges",
		"boards", "importexport", "ratelimit"},
	// The API: api joins the areas' rows; endpoint and entity serve every
	// area; an area imports the services it calls, never another area.
	"quarry/internal/api": {"api/endpoint", "api/entity", "api/attributes", "api/groups", "api/members", "api/projects",
		"api/repository", "api/tokens", "api/topics", "api/users", "tokens", "uploads", "auth", "model", "users", "projects",
		"groups", "topics", "attributes", "members", "repofiles", "changelog", "api/ci", "ci", "api/runners", "runners", "api/mergerequests", "mergerequests", "api/approvals", "approvals",
		"api/agents", "agents", "jobtokenscope", "api/wikis", "wikis", "api/settings", "settings", "api/geo", "geo", "api/snippets", "snippets",
		"api/milestones", "milestones",
		"api/storagemoves", "storagemoves", "api/badges", "badges", "api/labels", "labels", "api/boards", "boards",
		"api/groupexport", "groupexport", "api/alerts", "alerts", "api/errortracking", "errortracking",
		"api/releases", "releases", "api/oidc", "oidc", "api/protectedenvs", "protectedenvs",
		"api/schedules", "schedules", "api/environments", "api/housekeeping", "housekeeping",
		"api/keys", "keys", "api/events", "activity", "api/issues", "issues", "api/notes", "notes"},
	"quarry/internal/api/endpoint":      {"auth", "model", "tokens", "uploads"},
	"quarry/internal/api/entity":        {"bytelru", "auth", "model", "projects", "repofiles", "users", "ci", "testreport", "agents", "mergerequests", "approvals", "wikis", "snippets", "badges", "labels", "boards", "releases", "issues", "notes"},
	"quarry/internal/api/ci":            {"api/endpoint", "api/entity", "auth", "model", "ci"},
	"quarry/internal/api/oidc":          {"api/endpoint", "oidc"},
	"quarry/internal/api/protectedenvs": {"api/endpoint", "api/entity", "model", "protectedenvs"},
	"quarry/internal/api/agents":        {"api/endpoint", "api/entity", "auth", "model", "agents", "jobtokenscope", "projects"},
	"quarry/internal/api/approvals":     {"api/endpoint", "api/entity", "auth", "model", "approvals"},
	"quarry/internal/api/wikis":         {"api/endpoint", "api/entity", "auth", "model", "wikis"},
	"quarry/internal/api/snippets":      {"api/endpoint", "api/entity", "auth", "model", "snippets"},
	"quarry/internal/api/badges":        {"api/endpoint", "api/entity", "auth", "model", "badges"},
	"quarry/internal/api/keys":          {"api/endpoint", "api/entity", "model", "keys"},
	"quarry/internal/api/events":        {"api/endpoint", "api/entity", "model", "activity"},
	"quarry/internal/api/releases":      {"api/endpoint", "api/entity", "releases"},
	"quarry/internal/api/schedules":     {"api/endpoint", "api/entity", "model", "schedules"},
	"quarry/internal/api/environments":  {"api/endpoint", "api/entity", "model", "ci", "mergerequests"},
	"quarry/internal/api/errortracking": {"api/endpoint", "api/entity", "model", "errortracking"},
	"quarry/internal/api/labels":        {"api/endpoint", "api/entity", "auth", "model", "labels"},
	"quarry/internal/api/milestones":    {"api/endpoint", "api/entity", "model", "milestones"},
	"quarry/internal/api/issues":        {"api/endpoint", "api/entity", "auth", "model", "issues"},
	"quarry/internal/api/notes":         {"api/endpoint", "api/entity", "auth", "model", "notes"},
	"quarry/internal/api/boards":        {"api/endpoint", "api/entity", "model", "boards"},
	"quarry/internal/api/settings":      {"api/endpoint", "api/entity", "model", "settings"},
	"quarry/internal/api/geo":           {"api/endpoint", "api/entity", "auth", "model", "geo"},
	"quarry/internal/api/storagemoves":  {"api/endpoint", "api/entity", "auth", "model", "storagemoves"},
	"quarry/internal/api/housekeeping":  {"api/endpoint", "housekeeping"},
	"quarry/internal/api/groupexport":   {"api/endpoint", "model", "groupexport"},
	"quarry/internal/api/alerts":        {"api/endpoint", "api/entity", "model", "alerts"},
	"quarry/internal/api/mergerequests": {"api/endpoint", "api/entity", "auth", "model", "mergerequests"},
	"quarry/internal/api/runners":       {"api/endpoint", "api/entity", "auth", "model", "ci", "runners"},
	"quarry/internal/api/attributes":    {"api/endpoint", "api/entity", "auth", "model", "attributes"},
	"quarry/internal/api/groups":        {"api/endpoint", "api/entity", "auth", "model", "groups", "projects", "attributes"},
	"quarry/internal/api/members":       {"api/endpoint", "api/entity", "auth", "model", "members", "users"},
	"quarry/internal/api/projects":      {"api/endpoint", "api/entity", "auth", "model", "projects", "users", "attributes"},
	"quarry/internal/api/repository":    {"api/endpoint", "api/entity", "auth", "model", "repofiles", "projects", "changelog"},
	"quarry/internal/api/tokens":        {"api/endpoint", "api/entity", "auth", "model", "tokens"},
	"quarry/internal/api/topics":        {"api/endpoint", "api/entity", "auth", "model", "topics"},
	"quarry/internal/api/users":         {"api/endpoint", "api/entity", "auth", "model", "users", "attributes"},
	"quarry/internal/repofiles":         {"auth", "model", "git", "ratelimit"},
	// The web pages: beside the API, never inside it; the same services,
	// no SQL (store) and no git.
	"quarry/internal/web":        {"bytelru", "auth", "model", "users", "groups", "projects", "repofiles", "wikis", "snippets", "tokens", "releases", "ratelimit", "mergerequests", "approvals", "ci", "issues", "notes"},
	"quarry/internal/members":    {"store", "auth", "model"},
	"quarry/internal/attributes": {"store", "auth", "model"},
	"quarry/internal/apitest":    {"app", "config", "storetest", "auth", "model", "tokens"},
	"quarry/e2e":                 {"*"},
	"quarry/tools/load":          {},
	"quarry/tools/crashtest":     {},
}

// testKits are the test-only packages any test may use.
var testKits = []string{"storetest", "apitest", "git/gittest", "leaktest", "codeowners/codeownerstest"}

func TestImportGraph(t *testing.T) {
	out, err := exec.Command("go", "list", "-test", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "quarry/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := fields[0]
		// Test variants look like "p [p.test]"; judge them as p, and leave
		// out the generated test mains.
		if strings.HasSuffix(pkg, ".test") {
			continue
		}
		testVariant := strings.Contains(line, " [")
		if i := strings.Index(line, " ["); i >= 0 {
			fields = strings.Fields(line[:i] + line[strings.Index(line, "]")+1:])
		}
		// Tests may also use the test kits (the package's own variant
		// without tests is judged by the plain rule), and external test
		// packages the package they test.
		external := strings.HasSuffix(pkg, "_test")
		pkg = strings.TrimSuffix(pkg, "_test")
		rule, ok := ruleFor(pkg)
		if testVariant || external {
			rule = append(append([]string{}, rule...), testKits...)
		}
		if external {
			rule = append(rule, strings.TrimPrefix(pkg, "quarry/internal/"))
		}
		if !ok {
			t.Errorf("package %s has no rule in allowedImports (DESIGN.md's layout)", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, "quarry/") || imp == pkg || strings.HasPrefix(imp, pkg+" ") {
				continue
			}
			if !allowed(rule, imp) {
				t.Errorf("%s imports %s; DESIGN.md allows only %v", pkg, imp, rule)
			}
		}
	}
}

func ruleFor(pkg string) ([]string, bool) {
	best := ""
	for p := range allowedImports {
		if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > len(best) {
			best = p
		}
	}
	r, ok := allowedImports[best]
	return r, ok
}

func allowed(rule []string, imp string) bool {
	name := strings.TrimPrefix(imp, "quarry/internal/")
	for _, r := range rule {
		if r == "*" || r == name || strings.HasPrefix(name, r+"/") {
			return true
		}
	}
	return false
}

func TestImportGraph_rules(t *testing.T) {
	for _, c := range []struct {
		pkg, imp string
		want     bool
	}{
		{"quarry/internal/api", "quarry/internal/store", false},
		{"quarry/internal/api", "quarry/internal/users", true},
		{"quarry/internal/model", "quarry/internal/store", false},
		{"quarry/internal/store", "quarry/internal/model", true},
		{"quarry/internal/apitest", "quarry/internal/app", true},
	} {
		rule, ok := ruleFor(c.pkg)
		if !ok {
			t.Fatalf("no rule for %s", c.pkg)
		}
		if got := allowed(rule, c.imp); got != c.want {
			t.Errorf("%s → %s allowed = %v; want %v", c.pkg, c.imp, got, c.want)
		}
	}
}
