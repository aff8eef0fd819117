package ciconfig

import "strings"

// JobEnvironment is a job's environment: keyword as written (not yet
// expanded): a string is the name; a hash may add url, action, on_stop,
// auto_stop_in and deployment_tier.
type JobEnvironment struct {
	Name       string
	URL        string
	Action     string // "" is start
	OnStop     string
	AutoStopIn string
	Tier       string // deployment_tier; "" guesses it from the name
}

var (
	environmentKeys    = []string{"name", "url", "action", "on_stop", "auto_stop_in", "deployment_tier", "kubernetes"}
	environmentActions = []string{"start", "stop", "prepare", "verify", "access"}
	environmentTiers   = []string{"production", "staging", "testing", "development", "other"}
)

// checkEnvironment validates environment: as GitLab's
// Entry::Environment does: a string, or a hash with a name and the
// known keys, each of its kind.
func checkEnvironment(loc string, v any) error {
	if s, ok := v.(string); ok {
		if strings.TrimSpace(s) == "" {
			return entryError(loc, "name can't be blank")
		}
		if len(s) > 255 {
			return entryError(loc, "name is too long (maximum is 255 characters)")
		}
		return nil
	}
	m, ok := v.(*mapping)
	if !ok {
		return entryError(loc, "config should be a hash or a string")
	}
	if err := allowedKeys(loc, m, environmentKeys...); err != nil {
		return err
	}
	str := func(k string) (string, bool, error) {
		x, ok := m.get(k)
		if !ok || x == nil {
			return "", false, nil
		}
		s, isStr := x.(string)
		if !isStr {
			return "", true, entryError(loc, k+" should be a string")
		}
		return s, true, nil
	}
	name, _, err := str("name")
	if err != nil {
		return err
	}
	if strings.TrimSpace(name) == "" {
		return entryError(loc, "name can't be blank")
	}
	if len(name) > 255 {
		return entryError(loc, "name is too long (maximum is 255 characters)")
	}
	url, _, err := str("url")
	if err != nil {
		return err
	}
	if len(url) > 255 {
		return entryError(loc, "url is too long (maximum is 255 characters)")
	}
	if a, ok, err := str("action"); err != nil {
		return err
	} else if ok && !contains(environmentActions, a) {
		return entryError(loc, "action should be start, stop, prepare, verify, or access")
	}
	if t, ok, err := str("deployment_tier"); err != nil {
		return err
	} else if ok && !contains(environmentTiers, t) {
		return entryError(loc, "deployment tier must be one of production, staging, testing, development, other")
	}
	if _, _, err := str("on_stop"); err != nil {
		return err
	}
	if d, ok, err := str("auto_stop_in"); err != nil {
		return err
	} else if ok && d != "never" {
		if _, err := ParseDuration(d); err != nil {
			return entryError(loc, "auto stop in should be a duration")
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Environment is the job's environment: keyword; ok is false when it has
// none.
func (j *Job) Environment() (JobEnvironment, bool) {
	switch v := j.Kept["environment"].(type) {
	case string:
		return JobEnvironment{Name: v}, true
	case map[string]any:
		s := func(k string) string { x, _ := v[k].(string); return x }
		return JobEnvironment{Name: s("name"), URL: s("url"), Action: s("action"), OnStop: s("on_stop"),
			AutoStopIn: s("auto_stop_in"), Tier: s("deployment_tier")}, true
	}
	return JobEnvironment{}, false
}
