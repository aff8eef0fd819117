package ciconfig

import (
	"slices"
	"strings"
)

var (
	imageKeys    = []string{"docker", "name", "entrypoint", "ports", "pull_policy"}
	serviceKeys  = append([]string{"command", "alias", "variables"}, imageKeys...)
	pullPolicies = []string{"always", "never", "if-not-present"}
)

// decodeImage reads image: or one service at loc: a name, or a hash
// with name, entrypoint, pull_policy, ports, docker (and for a service
// command, alias, variables).
func decodeImage(loc string, v any, service bool) (Image, error) {
	var img Image
	if s, ok := v.(string); ok {
		if blank(s) {
			return img, entryError(loc, "name can't be blank")
		}
		return Image{Name: s}, nil
	}
	m, ok := v.(*mapping)
	if !ok {
		return img, entryError(loc, "config should be a hash or a string")
	}
	name, _ := m.get("name")
	s, err := stringValue(loc, "name", name)
	if err == nil && blank(s) {
		err = entryError(loc, "name can't be blank")
	}
	if err != nil {
		return img, err
	}
	img.Name = s
	if ep, _ := m.get("entrypoint"); ep != nil {
		if img.Entrypoint, ok = stringList(ep); !ok {
			return img, entryError(loc, "entrypoint should be an array of strings")
		}
	}
	keys := imageKeys
	if service {
		keys = serviceKeys
	}
	if err := allowedKeys(loc, m, keys...); err != nil {
		return img, err
	}
	if service {
		if c, _ := m.get("command"); c != nil {
			if img.Command, ok = stringList(c); !ok {
				return img, entryError(loc, "command should be an array of strings")
			}
		}
		alias, _ := m.get("alias")
		if alias != nil {
			if img.Alias, err = stringValue(loc, "alias", alias); err != nil {
				return img, err
			}
		}
		if ports, _ := m.get("ports"); !blank(ports) && blank(img.Alias) {
			return img, entryError(loc, "alias can't be blank")
		}
	}
	if ports, _ := m.get("ports"); ports != nil {
		list, ok := ports.([]any)
		if !ok {
			return img, entryError(loc+":ports", "config should be an array of integers or hashes")
		}
		for _, p := range list {
			switch p := p.(type) {
			case int64:
				img.Ports = append(img.Ports, map[string]any{"number": p})
			case *mapping:
				img.Ports = append(img.Ports, plain(p).(map[string]any))
			default:
				return img, entryError(loc+":ports", "config should be an array of integers or hashes")
			}
		}
	}
	if pp, _ := m.get("pull_policy"); pp != nil {
		if img.PullPolicy, err = pullPolicy(loc+":pull_policy", pp); err != nil {
			return img, err
		}
	}
	if d, ok := m.vals["docker"].(*mapping); ok {
		img.Docker = plain(d).(map[string]any)
	}
	if vars, _ := m.get("variables"); service && vars != nil {
		list, err := decodeVariables(loc+":variables", vars, nil)
		if err != nil {
			return img, err
		}
		img.Variables = make(map[string]string, len(list))
		for _, v := range list {
			img.Variables[v.Key] = v.Value
		}
	}
	return img, nil
}

func pullPolicy(loc string, v any) ([]string, error) {
	list, err := stringsOrString(loc, "config", v)
	if err != nil {
		return nil, err
	}
	var unknown []string
	for _, p := range list {
		if !slices.Contains(pullPolicies, p) {
			unknown = append(unknown, p)
		}
	}
	if len(unknown) > 0 {
		return nil, entryError(loc, "config contains unknown values: "+strings.Join(unknown, ", "))
	}
	return list, nil
}

// decodeServices reads services: at loc.
func decodeServices(loc string, v any) ([]Image, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, entryError(loc, "config should be a array")
	}
	out := make([]Image, 0, len(list))
	for _, e := range list {
		s, err := decodeImage(loc+":service", e, true)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}
