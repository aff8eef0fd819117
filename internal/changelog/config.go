package changelog

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"

	"quarry/internal/changelog/tmpl"
)

// Config is a project's changelog configuration.
type Config struct {
	DateFormat    string
	Template      string
	Categories    []Mapping
	TagRegex      *regexp.Regexp
	IncludeGroups []string
}

// Mapping gives a raw category (trailer value) a display title.
type Mapping struct{ Name, Title string }

// DefaultConfig is the configuration without a file.
func DefaultConfig() Config {
	return Config{DateFormat: DefaultDateFormat, Template: DefaultTemplate, TagRegex: defaultTagRe}
}

// ConfigError is a configuration that cannot be used; the message says
// why, as the API reports it.
type ConfigError struct{ Msg string }

func (e *ConfigError) Error() string { return e.Msg }

// MaxConfigSize bounds a changelog configuration file, in bytes.
const MaxConfigSize = 1 << 20

var configTooLarge = &ConfigError{fmt.Sprintf("The changelog configuration is too large (more than %d bytes)", MaxConfigSize)}

// ParseConfig reads a changelog_config.yml: date_format, template,
// categories (a map, in order), tag_regex and include_groups; other keys
// are ignored.
//
// Hostile input costs time and memory in proportion to its size, which
// is at most MaxConfigSize: the YAML is parsed into nodes, never into
// values, so aliases are not expanded while parsing; and a document with
// any alias is refused (as Ruby's YAML.safe_load does), so nothing read
// from it is expanded either — no alias bomb, and no cycle (an anchor
// may enclose an alias to itself) to walk into.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	if len(data) > MaxConfigSize {
		return cfg, configTooLarge
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cfg, &ConfigError{"The changelog configuration is not valid YAML: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return cfg, nil
	}
	if hasAlias(&doc) {
		return cfg, &ConfigError{"The changelog configuration is not valid YAML: aliases are not allowed"}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return cfg, &ConfigError{"The changelog configuration must be a Hash"}
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		switch key {
		case "date_format":
			if val.Kind != yaml.ScalarNode {
				return cfg, &ConfigError{`The "date_format" configuration key must be a String`}
			}
			cfg.DateFormat = val.Value
		case "template":
			if val.Kind != yaml.ScalarNode {
				return cfg, &ConfigError{`The "template" configuration key must be a String`}
			}
			if _, err := tmpl.Parse(val.Value); err != nil {
				return cfg, &ConfigError{"Failed to parse the template: " + err.Error()}
			}
			cfg.Template = val.Value
		case "categories":
			if val.Kind != yaml.MappingNode {
				return cfg, &ConfigError{`The "categories" configuration key must be a Hash`}
			}
			for j := 0; j+1 < len(val.Content); j += 2 {
				cfg.Categories = append(cfg.Categories, Mapping{Name: val.Content[j].Value, Title: val.Content[j+1].Value})
			}
		case "tag_regex":
			re, err := regexp.Compile(val.Value)
			if err != nil {
				return cfg, &ConfigError{"The regular expression to use for finding the previous tag for a version is invalid: " + err.Error()}
			}
			cfg.TagRegex = re
		case "include_groups":
			if val.Kind != yaml.SequenceNode {
				return cfg, &ConfigError{`The "include_groups" configuration key must be an Array`}
			}
			for _, g := range val.Content {
				cfg.IncludeGroups = append(cfg.IncludeGroups, g.Value)
			}
		}
	}
	return cfg, nil
}

// hasAlias reports whether the tree under n holds an alias node. It walks
// Content only (never Alias), so it visits each parsed node once.
func hasAlias(n *yaml.Node) bool {
	stack := []*yaml.Node{n}
	for len(stack) > 0 {
		n = stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.AliasNode {
			return true
		}
		stack = append(stack, n.Content...)
	}
	return false
}
