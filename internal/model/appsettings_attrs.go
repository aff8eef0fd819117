package model

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// SettingAttribute is one attribute of ApplicationSettings, read off the
// struct's tags.
type SettingAttribute struct {
	Name   string
	Secret bool
	// Values are the accepted values of an enumeration (Grape's values:).
	Values []string
	// Effect says where Quarry applies the attribute; "" is stored only.
	Effect string
	index  int
}

var settingAttributes, settingIndex = buildSettingAttributes()

func buildSettingAttributes() ([]SettingAttribute, map[string]int) {
	t := reflect.TypeOf(ApplicationSettings{})
	var attrs []SettingAttribute
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		a := SettingAttribute{Name: name, Secret: f.Tag.Get("setting") == "secret", Effect: f.Tag.Get("effect"), index: i}
		if v, ok := f.Tag.Lookup("values"); ok {
			a.Values = strings.Split(v, ",")
		}
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	idx := make(map[string]int, len(attrs))
	for i, a := range attrs {
		idx[a.Name] = i
	}
	return attrs, idx
}

// SettingAttributes lists every attribute, by name.
func SettingAttributes() []SettingAttribute { return slices.Clone(settingAttributes) }

// SettingAttributeNamed finds an attribute by its name or a legacy alias.
func SettingAttributeNamed(name string) (SettingAttribute, bool) {
	if to, ok := SettingAliases[name]; ok {
		name = to
	}
	i, ok := settingIndex[name]
	if !ok {
		return SettingAttribute{}, false
	}
	return settingAttributes[i], true
}

// SettingAliases are GitLab's legacy parameter names, accepted on update
// for the attribute they name now.
var SettingAliases = map[string]string{
	"admin_notification_email":                     "abuse_notification_email",
	"asset_proxy_whitelist":                        "asset_proxy_allowlist",
	"allow_local_requests_from_hooks_and_services": "allow_local_requests_from_web_hooks_and_services",
	"domain_blacklist_enabled":                     "domain_denylist_enabled",
	"domain_blacklist":                             "domain_denylist",
	"domain_whitelist":                             "domain_allowlist",
	"password_authentication_enabled":              "password_authentication_enabled_for_web",
	"signin_enabled":                               "password_authentication_enabled_for_web",
	"throttle_unauthenticated_enabled":             "throttle_unauthenticated_web_enabled",
	"throttle_unauthenticated_period_in_seconds":   "throttle_unauthenticated_web_period_in_seconds",
	"throttle_unauthenticated_requests_per_period": "throttle_unauthenticated_web_requests_per_period",
	// GitLab 15.8 renamed the incremental period; both names stay.
	"housekeeping_optimize_repository_period": "housekeeping_incremental_repack_period",
}

// settingShownAliases are the legacy names GitLab's response carries
// besides the current ones.
var settingShownAliases = []string{"admin_notification_email", "asset_proxy_whitelist",
	"allow_local_requests_from_hooks_and_services", "password_authentication_enabled", "signin_enabled",
	"throttle_unauthenticated_enabled", "throttle_unauthenticated_period_in_seconds",
	"throttle_unauthenticated_requests_per_period", "housekeeping_optimize_repository_period"}

// SettingInput is one attribute's value as a request carried it: the
// values of a parameter (one, or several for a list), an explicit null,
// or the entries of a hash parameter (name[key]=value).
type SettingInput struct {
	Values []string
	Null   bool
	Hash   map[string]string
}

func (s *ApplicationSettings) field(a SettingAttribute) reflect.Value {
	return reflect.ValueOf(s).Elem().Field(a.index)
}

// Set parses in as the value of attribute name (or a legacy alias) and
// stores it in s. A value of the wrong type is "<name> is invalid", one
// outside an enumeration "<name> does not have a valid value" (Grape's
// messages, with the name the caller used).
func (s *ApplicationSettings) Set(name string, in SettingInput) error {
	a, ok := SettingAttributeNamed(name)
	if !ok {
		return fmt.Errorf("set %q: no such setting", name)
	}
	invalid := Param(name + " is invalid")
	if len(a.Values) > 0 && !in.Null {
		for _, v := range in.Values {
			if !slices.Contains(a.Values, strings.TrimSpace(v)) {
				return Param(name + " does not have a valid value")
			}
		}
	}
	f := s.field(a)
	one := ""
	if len(in.Values) > 0 {
		one = strings.TrimSpace(in.Values[len(in.Values)-1])
	}
	switch v := f.Addr().Interface().(type) {
	case *bool:
		b, ok := parseSettingBool(one)
		if in.Null || len(in.Values) != 1 || !ok {
			return invalid
		}
		*v = b
	case *int64:
		n, err := strconv.ParseInt(one, 10, 64)
		if in.Null || len(in.Values) != 1 || err != nil {
			return invalid
		}
		*v = n
	case **int64:
		if in.Null || one == "" {
			*v = nil
			return nil
		}
		n, err := strconv.ParseInt(one, 10, 64)
		if len(in.Values) != 1 || err != nil {
			return invalid
		}
		*v = &n
	case *float64:
		x, err := strconv.ParseFloat(one, 64)
		if in.Null || len(in.Values) != 1 || err != nil || x != x {
			return invalid
		}
		*v = x
	case *Decimal:
		x, err := strconv.ParseFloat(one, 64)
		if in.Null || len(in.Values) != 1 || err != nil || x != x {
			return invalid
		}
		*v = Decimal(x)
	case *string:
		if len(in.Values) > 1 || in.Hash != nil {
			return invalid
		}
		*v = settingText(in)
	case **string:
		if len(in.Values) > 1 || in.Hash != nil {
			return invalid
		}
		if in.Null || (a.Name == "enabled_git_access_protocol" && (one == "" || one == "nil")) {
			*v = nil
			return nil
		}
		t := settingText(in)
		*v = &t
	case *Visibility:
		l, ok := ParseVisibilityLevel(one)
		if in.Null || len(in.Values) != 1 || !ok {
			return Param(name + " does not have a valid value")
		}
		*v = l
	case *[]Visibility:
		out := []Visibility{}
		for _, e := range splitSettingList(in.Values) {
			l, ok := ParseVisibilityLevel(e)
			if !ok {
				// The model's message names the value.
				return Invalid("restricted_visibility_levels", "'"+e+"' is not a valid visibility level")
			}
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
		*v = out
	case *[]string:
		if in.Null && a.Name == "domain_allowlist" {
			*v = nil
			return nil
		}
		out := []string{}
		for _, e := range splitSettingList(in.Values) {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
		*v = out
	case *[]int64:
		out := []int64{}
		for _, e := range splitSettingList(in.Values) {
			n, err := strconv.ParseInt(e, 10, 64)
			if err != nil {
				return invalid
			}
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
		*v = out
	case *map[string]int64:
		if in.Hash == nil {
			return invalid
		}
		out := make(map[string]int64, len(in.Hash))
		for k, e := range in.Hash {
			n, err := strconv.ParseInt(strings.TrimSpace(e), 10, 64)
			if err != nil {
				return invalid
			}
			out[k] = n
		}
		*v = out
	default:
		return fmt.Errorf("set %q: unhandled type %T", name, v)
	}
	return nil
}

// Normalize writes values in the form GitLab shows them: the archive age
// as a human duration ("1d" becomes "1 day").
func (s *ApplicationSettings) Normalize() {
	if p := s.ArchiveBuildsInHumanReadable; p != nil {
		if strings.TrimSpace(*p) == "" {
			s.ArchiveBuildsInHumanReadable = nil
		} else if sec, ok := ParseHumanDuration(*p); ok && sec >= 86400 {
			s.ArchiveBuildsInHumanReadable = Ptr(HumanDuration(sec))
		}
	}
}

// settingText is a string value: "" for null.
func settingText(in SettingInput) string {
	if in.Null || len(in.Values) == 0 {
		return ""
	}
	return in.Values[0]
}

func parseSettingBool(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "t", "1", "yes", "y", "on":
		return true, true
	case "false", "f", "0", "no", "n", "off":
		return false, true
	}
	return false, false
}

// splitSettingList flattens a list parameter: each value may itself be a
// list separated by commas, semicolons or line breaks (GitLab's *_raw
// forms); blanks are dropped.
func splitSettingList(values []string) []string {
	var out []string
	for _, v := range values {
		for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ';' || r == '\n' || r == '\r' }) {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out
}

// ParseVisibilityLevel reads a visibility level by name or by GitLab's
// number (0, 10, 20).
func ParseVisibilityLevel(s string) (Visibility, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "private", "0":
		return Private, true
	case "internal", "10":
		return Internal, true
	case "public", "20":
		return Public, true
	}
	return "", false
}

// Clone is a deep copy of s (lists and maps are not shared).
func (s ApplicationSettings) Clone() ApplicationSettings {
	c := s
	for _, a := range settingAttributes {
		f := c.field(a)
		switch f.Kind() {
		case reflect.Slice:
			if !f.IsNil() {
				n := reflect.MakeSlice(f.Type(), f.Len(), f.Len())
				reflect.Copy(n, f)
				f.Set(n)
			}
		case reflect.Map:
			if !f.IsNil() {
				n := reflect.MakeMapWithSize(f.Type(), f.Len())
				for _, k := range f.MapKeys() {
					n.SetMapIndex(k, f.MapIndex(k))
				}
				f.Set(n)
			}
		case reflect.Pointer:
			if !f.IsNil() {
				n := reflect.New(f.Type().Elem())
				n.Elem().Set(f.Elem())
				f.Set(n)
			}
		}
	}
	return c
}

// Document is s without its secrets, keyed by attribute name: what the
// store keeps in the clear.
func (s ApplicationSettings) Document() map[string]any {
	out := make(map[string]any, len(settingAttributes))
	for _, a := range settingAttributes {
		if !a.Secret {
			out[a.Name] = s.field(a).Interface()
		}
	}
	return out
}

// Shown is the settings as the API shows them: the document plus GitLab's
// legacy names for the same values and the fixed housekeeping flag.
func (s ApplicationSettings) Shown() map[string]any {
	out := s.Document()
	for _, alias := range settingShownAliases {
		out[alias] = out[SettingAliases[alias]]
	}
	out["housekeeping_bitmaps_enabled"] = true
	return out
}

// Secrets are the secret attributes that hold a value.
func (s ApplicationSettings) Secrets() map[string]string {
	out := map[string]string{}
	for _, a := range settingAttributes {
		if a.Secret {
			if p := s.field(a).Interface().(*string); p != nil {
				out[a.Name] = *p
			}
		}
	}
	return out
}

// SetSecrets puts stored secret values back into s.
func (s *ApplicationSettings) SetSecrets(m map[string]string) {
	for name, v := range m {
		if i, ok := settingIndex[name]; ok && settingAttributes[i].Secret {
			s.field(settingAttributes[i]).Set(reflect.ValueOf(&v))
		}
	}
}

// MarshalJSON shows a Decimal as GitLab does: a string with at least one
// decimal ("1.0", "2.5").
func (d Decimal) MarshalJSON() ([]byte, error) {
	s := strconv.FormatFloat(float64(d), 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return json.Marshal(s)
}

// UnmarshalJSON reads a Decimal from a string or a number.
func (d *Decimal) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var f float64
		if err := json.Unmarshal(b, &f); err != nil {
			return err
		}
		*d = Decimal(f)
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return err
	}
	*d = Decimal(f)
	return nil
}
