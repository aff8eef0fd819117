package changelog

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

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

// ParseConfig reads a changelog_config.yml: date_format, template,
// categories (a map, in order), tag_regex and include_groups; other keys
// are ignored.
func ParseConfig(data []byte) (Config, error) {
	cfg := DefaultConfig()
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return cfg, &ConfigError{"The changelog configuration is not valid YAML: " + err.Error()}
	}
	if len(doc.Content) == 0 {
		return cfg, nil
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

// Strftime formats t with strftime directives: %Y %C %y %m %B %b %h %d %e
// %j %H %I %M %S %L %p %P %A %a %u %w %Z %z %s %F %T %D %R %n %t %%, with
// Ruby's "-" (no padding) flag.
func Strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		num := func(n, width int) {
			s := strconv.Itoa(n)
			if pad {
				for len(s) < width {
					s = "0" + s
				}
			}
			b.WriteString(s)
		}
		switch format[i] {
		case 'Y':
			b.WriteString(strconv.Itoa(t.Year()))
		case 'C':
			num(t.Year()/100, 2)
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'B':
			b.WriteString(t.Month().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if s := strconv.Itoa(t.Day()); pad && len(s) == 1 {
				b.WriteString(" " + s)
			} else {
				b.WriteString(s)
			}
		case 'j':
			num(t.YearDay(), 3)
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'L':
			num(t.Nanosecond()/1e6, 3)
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'P':
			b.WriteString(strings.ToLower(t.Format("PM")))
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'R':
			b.WriteString(t.Format("15:04"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			fmt.Fprintf(&b, "%%%c", format[i])
		}
	}
	return b.String()
}
