package ciconfig

import (
	"net/url"
	"regexp"
	"strings"
)

var (
	artifactsKeys = []string{"name", "untracked", "paths", "reports", "when", "expire_in", "expose_as", "exclude", "public", "access"}
	artifactsWhen = []string{"on_success", "on_failure", "always"}
	reExposeAs    = regexp.MustCompile(`^\w[-\w ]*$`)
	// reportKinds are the artifacts:reports GitLab knows; all but
	// coverage_report are a path or a list of paths.
	reportKinds = []string{"junit", "codequality", "sast", "secret_detection", "dependency_scanning",
		"container_scanning", "dast", "performance", "browser_performance", "load_performance",
		"license_scanning", "metrics", "lsif", "dotenv", "cobertura", "terraform", "accessibility",
		"cluster_applications", "requirements", "requirements_v2", "coverage_fuzzing", "api_fuzzing",
		"cluster_image_scanning", "coverage_report", "cyclonedx", "annotations", "repository_xray"}
)

// decodeArtifacts reads artifacts: at loc.
func decodeArtifacts(loc string, v any) (*Artifacts, error) {
	m, ok := v.(*mapping)
	if !ok {
		return nil, entryError(loc, "config should be a hash")
	}
	if err := allowedKeys(loc, m, artifactsKeys...); err != nil {
		return nil, err
	}
	exposeAs, _ := m.get("expose_as")
	paths, _ := m.get("paths")
	if exposeAs != nil && blank(paths) {
		return nil, entryError(loc, "paths can't be blank")
	}
	if err := exclusiveKeys(loc, m, "access", "public"); err != nil {
		return nil, err
	}
	a := &Artifacts{}
	var err error
	if x, _ := m.get("name"); x != nil {
		if a.Name, err = stringValue(loc, "name", x); err != nil {
			return nil, err
		}
	}
	if x, _ := m.get("public"); x != nil {
		b, err := boolean(loc, "public", x)
		if err != nil {
			return nil, err
		}
		a.Public = &b
	}
	if x, _ := m.get("untracked"); x != nil {
		if a.Untracked, err = boolean(loc, "untracked", x); err != nil {
			return nil, err
		}
	}
	if paths != nil {
		if a.Paths, ok = stringList(paths); !ok {
			return nil, entryError(loc, "paths should be an array of strings")
		}
	}
	if exposeAs != nil {
		for _, p := range a.Paths {
			if strings.Contains(p, "*") {
				return nil, entryError(loc, "paths can't contain '*' when used with 'expose_as'")
			}
		}
		s, err := stringValue(loc, "expose as", exposeAs)
		switch {
		case err != nil:
			return nil, err
		case nameLength(s) > 100:
			return nil, entryError(loc, "expose as is too long (maximum is 100 characters)")
		case !reExposeAs.MatchString(s):
			return nil, entryError(loc, "expose as can contain only letters, digits, '-', '_' and spaces")
		}
		a.ExposeAs = s
	}
	if x, _ := m.get("exclude"); x != nil {
		if a.Exclude, ok = stringList(x); !ok {
			return nil, entryError(loc, "exclude should be an array of strings")
		}
	}
	reports, _ := m.get("reports")
	if _, isMap := reports.(*mapping); reports != nil && !isMap {
		return nil, entryError(loc, "reports should be a hash")
	}
	if x, _ := m.get("when"); x != nil {
		if a.When, err = oneOf(loc, "when", x, artifactsWhen...); err != nil {
			return nil, err
		}
	}
	if x, _ := m.get("expire_in"); x != nil {
		s, isStr := x.(string)
		if !isStr || !strings.EqualFold(s, "never") {
			if _, err := duration(loc, "expire in", x, 1<<62); err != nil {
				return nil, entryError(loc, "expire in should be a duration")
			}
		}
		a.ExpireIn = s
	}
	if x, _ := m.get("access"); x != nil {
		if a.Access, err = oneOf(loc, "access", x, "none", "developer", "all"); err != nil {
			return nil, err
		}
	}
	if r, ok := reports.(*mapping); ok {
		if a.Reports, err = decodeReports(loc+":reports", r); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// decodeReports keeps each report as written, the path lists (junit
// among them) as lists of strings.
func decodeReports(loc string, m *mapping) (map[string]any, error) {
	if err := allowedKeys(loc, m, reportKinds...); err != nil {
		return nil, err
	}
	out := make(map[string]any, m.len())
	for _, k := range m.keys {
		v := m.vals[k]
		if v == nil {
			continue
		}
		if k != "coverage_report" {
			list, err := stringsOrString(loc, k, v)
			if err != nil {
				return nil, err
			}
			out[k] = list
			continue
		}
		out[k] = plain(v)
	}
	return out, nil
}

var (
	cacheKeys = []string{"key", "untracked", "paths", "when", "policy", "unprotect", "fallback_keys"}
	rePolicy  = regexp.MustCompile(`pull-push|push|pull|\$\w{1,255}`)
)

// maxCaches is GitLab's MULTIPLE_CACHE_LIMIT.
const maxCaches = 4

// decodeCaches reads cache: (one hash or a list of them) of the entry at
// parent. GitLab names the list "caches" and each one "cache" in its
// messages.
func decodeCaches(parent string, v any) ([]Cache, error) {
	if parent != "" {
		parent += ":"
	}
	list, isList := v.([]any)
	if _, isMap := v.(*mapping); !isList && !isMap {
		return nil, entryError(parent+"caches", "config can only be a Hash or an Array")
	}
	if len(list) > maxCaches {
		return nil, entryError(parent+"caches", "config no more than 4 caches can be created")
	}
	out := []Cache{}
	for _, e := range flatten([]any{v}, nil) {
		c, err := decodeCache(parent+"cache", e)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func decodeCache(loc string, v any) (Cache, error) {
	c := Cache{Key: "default", Policy: "pull-push", When: "on_success", FallbackKeys: []string{}}
	m, ok := v.(*mapping)
	if !ok {
		return c, entryError(loc, "config should be a hash")
	}
	if err := allowedKeys(loc, m, cacheKeys...); err != nil {
		return c, err
	}
	var err error
	if p, _ := m.get("policy"); !blank(p) {
		s, err := stringValue(loc, "policy", p)
		if err == nil && !rePolicy.MatchString(s) {
			err = entryError(loc, "policy should be a variable or one of: pull-push, push, pull")
		}
		if err != nil {
			return c, err
		}
		c.Policy = s
	}
	if w, _ := m.get("when"); w != nil {
		if c.When, err = oneOf(loc, "when", w, artifactsWhen...); err != nil {
			return c, err
		}
	}
	fallback, _ := m.get("fallback_keys")
	if l, ok := fallback.([]any); ok && len(l) > 5 {
		return c, entryError(loc, "fallback keys has to many entries (maximum 5)")
	}
	if k, _ := m.get("key"); k != nil {
		if err := c.decodeKey(loc+":key", k); err != nil {
			return c, err
		}
	}
	for _, b := range []struct {
		key string
		to  *bool
	}{{"unprotect", &c.Unprotect}, {"untracked", &c.Untracked}} {
		if x, _ := m.get(b.key); x != nil {
			if *b.to, err = boolean(loc+":"+b.key, "config", x); err != nil {
				return c, err
			}
		}
	}
	if p, _ := m.get("paths"); p != nil {
		if c.Paths, ok = stringList(p); !ok {
			return c, entryError(loc+":paths", "config should be an array of strings")
		}
	}
	if fallback != nil {
		if c.FallbackKeys, ok = stringList(fallback); !ok {
			return c, entryError(loc+":fallback_keys", "config should be an array of strings")
		}
	}
	return c, nil
}

// decodeKey reads cache:key: a string, or {files: [one or two],
// files_commits: [one or two], prefix}. GitLab hashes the contents of
// files: and the last commits that changed files_commits: into the key.
func (c *Cache) decodeKey(loc string, v any) error {
	switch k := v.(type) {
	case string:
		p, err := url.PathUnescape(k)
		if err != nil {
			p = k
		}
		switch {
		case strings.Contains(p, "/"):
			return entryError(loc, `config cannot contain the "/" character`)
		case p == "." || p == "..":
			return entryError(loc, `config cannot be "." or ".."`)
		}
		c.Key = k
		return nil
	case *mapping:
		if err := allowedKeys(loc, k, "files", "files_commits", "prefix"); err != nil {
			return err
		}
		if _, ok := k.get("files_commits"); !ok {
			if err := missingKeys(loc, k, "files"); err != nil {
				return err
			}
		}
		for _, f := range []struct {
			key string
			to  *[]string
		}{{"files", &c.KeyFiles}, {"files_commits", &c.KeyFilesCommits}} {
			raw, ok := k.get(f.key)
			if !ok {
				continue
			}
			files, ok := stringList(raw)
			switch {
			case !ok:
				return entryError(loc+":"+f.key, "config should be an array of strings")
			case len(files) < 1:
				return entryError(loc+":"+f.key, "config requires at least 1 item")
			case len(files) > 2:
				return entryError(loc+":"+f.key, "config has too many items (maximum is 2)")
			}
			*f.to = files
		}
		c.Key = ""
		if p, _ := k.get("prefix"); p != nil {
			s, err := stringValue(loc+":prefix", "config", p)
			if err != nil {
				return err
			}
			c.KeyPrefix = s
		}
		return nil
	}
	return configError("%s should be a hash, a string or a symbol", loc)
}
