package agents

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxConfigBytes bounds an agent's configuration file; a larger one
// authorizes nothing.
const MaxConfigBytes = 64 << 10

// maxAuthorized is how many entries of ci_access.projects and of
// ci_access.groups count; the rest are ignored, as GitLab ignores them.
const maxAuthorized = 100

// CIAccess is what an agent's configuration authorizes for CI jobs: the
// full paths of projects and of groups (whose projects, at any depth,
// it authorizes), lower-cased, as its ci_access section lists them.
type CIAccess struct {
	Projects []string
	Groups   []string
}

// configFile is the part of an agent's config.yaml Quarry reads; the
// other sections (gitops, user_access, observability, …) are the agent's.
type configFile struct {
	CIAccess struct {
		Projects []accessEntry `yaml:"projects"`
		Groups   []accessEntry `yaml:"groups"`
	} `yaml:"ci_access"`
}

type accessEntry struct {
	ID string `yaml:"id"`
}

// ParseConfig reads the ci_access section of an agent's configuration.
// A file that is too large, not YAML, or not of the expected shape
// authorizes nothing: it is the agent owner's file, not the caller's
// input, so it is never an error.
func ParseConfig(data []byte) CIAccess {
	if len(data) > MaxConfigBytes {
		return CIAccess{}
	}
	var f configFile
	if err := yaml.Unmarshal(data, &f); err != nil {
		return CIAccess{}
	}
	return CIAccess{Projects: paths(f.CIAccess.Projects), Groups: paths(f.CIAccess.Groups)}
}

// paths are the entries' ids, lower-cased (full paths match ignoring
// case), the first maxAuthorized of them, empty ones left out.
func paths(entries []accessEntry) []string {
	var out []string
	for i, e := range entries {
		if i == maxAuthorized {
			break
		}
		if id := strings.ToLower(strings.TrimSpace(e.ID)); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// authorizes reports whether the configuration lists the project of
// fullPath, or a group among groupPaths (the full paths of the groups
// the project lies under), all lower-cased.
func (c CIAccess) authorizes(fullPath string, groupPaths []string) bool {
	for _, p := range c.Projects {
		if p == fullPath {
			return true
		}
	}
	for _, g := range c.Groups {
		for _, mine := range groupPaths {
			if g == mine {
				return true
			}
		}
	}
	return false
}

// configKey names an agent's configuration by what fixes it: the
// configuration project's commit never changes, so neither does the file
// read from it.
type configKey struct {
	projectID int64
	commit    string
	agent     string
}
