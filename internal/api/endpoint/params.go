package endpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/model"
	"quarry/internal/uploads"
)

// Params are a request's parameters gathered the way GitLab reads them: the
// query string, then a form (urlencoded or multipart) or JSON body on top.
// Keys lose a trailing "[]"; nested JSON objects become "a[b]" keys.
//
// Accessors record what is wrong ("x is missing", "x is invalid") and Err
// joins those into one Grape-style 400, so a handler reads every parameter
// and then checks once.
type Params struct {
	vals  map[string][]string
	nulls map[string]bool
	// typed marks keys whose JSON value was a number, a boolean or an
	// array rather than a string (some parameters must be strings).
	typed map[string]bool
	// nested marks array keys with an array or object among their
	// elements: no list of strings.
	nested map[string]bool
	// lists marks keys sent as a list: a JSON array, or "key[]" form
	// keys (a repeated plain key is no list: Rack keeps one of its values).
	lists map[string]bool
	files map[string]*multipart.FileHeader
	errs  []string
}

// maxMultipartMemory is how much of a multipart body stays in memory; the
// rest spills to temporary files.
const maxMultipartMemory = 8 << 20

// parseQuery reads r's query string only (a streamed body is left to the
// handler).
func parseQuery(r *http.Request) (*Params, error) {
	p := &Params{vals: map[string][]string{}}
	if r.URL.RawQuery == "" {
		return p, nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, model.Param("query string is invalid")
	}
	p.addValues(q)
	return p, nil
}

// hasBody reports whether r carries a body of a kind parameters are read
// from (JSON, a urlencoded form or a multipart form): the bodies of GET
// and HEAD, and of any other type, are never read.
func hasBody(r *http.Request) bool {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 || r.Method == http.MethodGet || r.Method == http.MethodHead {
		return false
	}
	switch mediaType(r) {
	case "application/json", "application/x-www-form-urlencoded", "multipart/form-data":
		return true
	}
	return false
}

func mediaType(r *http.Request) string {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return ct
}

// maxFormFields bounds the fields of a urlencoded body, as the JSON limits
// bound a JSON one.
const maxFormFields = MaxJSONTotal

// readBody adds r's body parameters (a form or JSON) on top of p's,
// reading at most limit bytes: a body declared or found larger is a 413,
// a malformed one a 400. A body whose length is declared past the limit
// is refused before a byte of it is read.
func (p *Params) readBody(r *http.Request, limit int64) error {
	if !hasBody(r) {
		return nil
	}
	if r.ContentLength > limit {
		return model.TooLarge()
	}
	switch mediaType(r) {
	case "application/json":
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
		if err != nil {
			return BodyError(err)
		}
		if len(bytes.TrimSpace(body)) == 0 {
			return nil
		}
		if err := checkJSON(body); err != nil {
			return err
		}
		var obj map[string]any
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		if err := d.Decode(&obj); err != nil {
			return model.Param("The provided content-type 'application/json' is not supported or the request body is not valid JSON")
		}
		for k, v := range obj {
			p.addJSON(k, v)
		}
	case "application/x-www-form-urlencoded":
		body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
		if err != nil {
			return BodyError(err)
		}
		if bytes.Count(body, []byte("&")) >= maxFormFields {
			return model.Param(msgJSONTotal)
		}
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return model.Param("request body is invalid")
		}
		p.addValues(form)
	case "multipart/form-data":
		// Files past maxMultipartMemory spill to temporary files, removed
		// when the request ends; the form's fields and parts are bounded
		// by the multipart reader.
		r.Body = http.MaxBytesReader(nil, r.Body, limit)
		if err := r.ParseMultipartForm(maxMultipartMemory); err != nil {
			return BodyError(err)
		}
		p.addValues(r.MultipartForm.Value)
		p.files = map[string]*multipart.FileHeader{}
		for k, fhs := range r.MultipartForm.File {
			if len(fhs) > 0 {
				p.files[normKey(k)] = fhs[0]
			}
		}
	}
	return nil
}

func normKey(k string) string { return strings.TrimSuffix(k, "[]") }

// marks makes the maps of what was sent how (lists, nulls, typed and
// nested values); a request that sent nothing but its path has none.
func (p *Params) marks() {
	if p.lists == nil {
		p.nulls, p.typed, p.nested, p.lists = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	}
}

func (p *Params) addValues(v url.Values) {
	p.marks()
	for k, vs := range v {
		for _, s := range vs {
			if !utf8.ValidString(s) || !utf8.ValidString(k) {
				// Rack refuses bytes that are not UTF-8 text; so do we,
				// before they reach a service or the database.
				p.Fail("%s is invalid", strings.ToValidUTF8(normKey(k), "?"))
				break
			}
		}
		list := strings.HasSuffix(k, "[]")
		k = normKey(k)
		// A later source replaces an earlier one, as a body overrides the
		// query string in GitLab.
		p.vals[k] = append([]string(nil), vs...)
		p.lists[k] = list
	}
}

func (p *Params) addJSON(key string, v any) {
	p.marks()
	_, isList := v.([]any)
	p.lists[key] = isList
	switch x := v.(type) {
	case nil:
		p.nulls[key] = true
		p.vals[key] = nil
	case string:
		p.vals[key] = []string{x}
	case json.Number:
		p.vals[key] = []string{x.String()}
		p.typed[key] = true
	case bool:
		p.vals[key] = []string{strconv.FormatBool(x)}
		p.typed[key] = true
	case []any:
		p.typed[key] = true
		vs := make([]string, 0, len(x))
		for _, e := range x {
			switch ev := e.(type) {
			case string:
				vs = append(vs, ev)
			case json.Number:
				vs = append(vs, ev.String())
			case bool:
				vs = append(vs, strconv.FormatBool(ev))
			default:
				// An object (the body's "actions": [{…}]), a nested
				// array or null: kept as its JSON text for Objects.
				p.nested[key] = true
				b, _ := json.Marshal(ev)
				vs = append(vs, string(b))
			}
		}
		p.vals[key] = vs
	case map[string]any:
		for k, e := range x {
			p.addJSON(key+"["+k+"]", e)
		}
	}
}

// Set adds a path value (path values win over everything else).
func (p *Params) Set(key, value string) { p.vals[key] = []string{value} }

// Has reports whether key was sent at all (even as null or empty).
func (p *Params) Has(key string) bool {
	_, ok := p.vals[key]
	return ok || p.nulls[key]
}

// IsNull reports an explicit JSON null.
func (p *Params) IsNull(key string) bool { return p.nulls[key] }

// Raw returns the first value of key.
func (p *Params) Raw(key string) (string, bool) {
	vs, ok := p.vals[key]
	if !ok || len(vs) == 0 {
		return "", ok
	}
	return vs[0], true
}

// IsList reports whether key was sent as a list (a JSON array, "key[]"
// form keys) or a hash ("key[sub]" keys): what Grape refuses for a
// parameter of a single type.
func (p *Params) IsList(key string) bool {
	if p.lists[key] {
		return true
	}
	prefix := key + "["
	for k := range p.vals {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// Fail records a problem with a parameter, reported with the others by Err.
func (p *Params) Fail(format string, args ...any) {
	p.errs = append(p.errs, fmt.Sprintf(format, args...))
}

// Require records "key is missing" for every absent key, one message
// each, as Grape does.
func (p *Params) Require(keys ...string) {
	for _, k := range keys {
		if !p.Has(k) || p.IsNull(k) {
			p.Fail("%s is missing", k)
		}
	}
}

// AtLeastOneOf records an error unless one of keys is present.
func (p *Params) AtLeastOneOf(keys ...string) {
	for _, k := range keys {
		if p.Has(k) {
			return
		}
	}
	p.Fail("%s are missing, at least one parameter must be provided", strings.Join(keys, ", "))
}

// AllOrNoneOf records an error when some but not all of keys are present.
func (p *Params) AllOrNoneOf(keys ...string) {
	n := 0
	for _, k := range keys {
		if p.Has(k) {
			n++
		}
	}
	if n != 0 && n != len(keys) {
		p.Fail("%s provide all or none of parameters", strings.Join(keys, ", "))
	}
}

// String returns key as a string.
func (p *Params) String(key string) (string, bool) {
	if p.IsNull(key) {
		return "", false
	}
	return p.Raw(key)
}

// StringPtr returns key as *string, nil when absent or null.
func (p *Params) StringPtr(key string) *string {
	if v, ok := p.String(key); ok {
		return &v
	}
	return nil
}

// Int returns key as an integer; a value that is not one is recorded as
// invalid.
func (p *Params) Int(key string) (int64, bool) {
	v, ok := p.String(key)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		p.Fail("%s is invalid", key)
		return 0, false
	}
	return n, true
}

// IntPtr returns key as *int.
func (p *Params) IntPtr(key string) *int {
	n, ok := p.Int(key)
	if !ok {
		return nil
	}
	if n > 1<<31-1 || n < -(1<<31) {
		p.Fail("%s is invalid", key)
		return nil
	}
	i := int(n)
	return &i
}

// ParseBool reads a boolean as Grape does: true/false, 1/0, t/f, yes/no,
// y/n, on/off, in any case.
func ParseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1", "t", "yes", "y", "on":
		return true, true
	case "false", "0", "f", "no", "n", "off":
		return false, true
	}
	return false, false
}

// Bool returns key as a boolean; other values are recorded as invalid.
func (p *Params) Bool(key string) (bool, bool) {
	v, ok := p.String(key)
	if !ok {
		return false, false
	}
	b, valid := ParseBool(v)
	if !valid {
		p.Fail("%s is invalid", key)
		return false, false
	}
	return b, true
}

// BoolPtr returns key as *bool.
func (p *Params) BoolPtr(key string) *bool {
	if b, ok := p.Bool(key); ok {
		return &b
	}
	return nil
}

// Flag returns key as a boolean, false when absent.
func (p *Params) Flag(key string) bool {
	b, _ := p.Bool(key)
	return b
}

// Enum returns key if it is one of values; anything else is recorded.
func (p *Params) Enum(key string, values ...string) (string, bool) {
	v, ok := p.String(key)
	if !ok {
		return "", false
	}
	for _, a := range values {
		if v == a {
			return v, true
		}
	}
	p.Fail("%s does not have a valid value", key)
	return "", false
}

// Strings returns an array parameter, accepting both repeated keys and a
// comma-separated value.
func (p *Params) Strings(key string) ([]string, bool) {
	vs, ok := p.vals[key]
	if !ok {
		return nil, p.nulls[key]
	}
	if p.nested[key] {
		p.Fail("%s is invalid", key)
		return nil, false
	}
	out := []string{}
	for _, v := range vs {
		for _, part := range strings.Split(v, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
	}
	return out, true
}

// Unique returns a list parameter that names a set (topics, tags, labels,
// scopes, ids): Strings with repeated values dropped, in order.
func (p *Params) Unique(key string) ([]string, bool) {
	vals, ok := p.Strings(key)
	if !ok || len(vals) < 2 {
		return vals, ok
	}
	seen := make(map[string]bool, len(vals))
	out := vals[:0]
	for _, v := range vals {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, true
}

// IDs returns a set of integer ids (assignee_ids, user_ids, …), repeated
// ones dropped; a value that is no integer is recorded as invalid.
func (p *Params) IDs(key string) ([]int64, bool) {
	vals, ok := p.Unique(key)
	if !ok {
		return nil, false
	}
	out := make([]int64, 0, len(vals))
	for _, v := range vals {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			p.Fail("%s is invalid", key)
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}

// Objects returns an array of JSON objects (the body's "actions": [{…}])
// as their JSON texts; a value that is not an object is recorded as
// invalid.
func (p *Params) Objects(key string) []string {
	vs := p.vals[key]
	for _, v := range vs {
		if !strings.HasPrefix(v, "{") {
			p.Fail("%s is invalid", key)
			return nil
		}
	}
	return vs
}

// Time returns key as an ISO 8601 date or date-time.
func (p *Params) Time(key string) (*time.Time, bool) {
	v, ok := p.String(key)
	if !ok {
		return nil, false
	}
	t, err := ParseTime(v)
	if err != nil {
		p.Fail("%s is invalid", key)
		return nil, false
	}
	return &t, true
}

// ParseTime accepts the ISO 8601 forms clients send.
func ParseTime(v string) (time.Time, error) {
	v = strings.TrimSpace(v)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02 15:04:05", model.DateLayout} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", v)
}

// Date returns key as YYYY-MM-DD.
func (p *Params) Date(key string) (string, bool) {
	v, ok := p.String(key)
	if !ok || v == "" {
		return "", ok
	}
	t, err := ParseTime(v)
	if err != nil {
		p.Fail("%s is invalid", key)
		return "", false
	}
	return t.Format(model.DateLayout), true
}

// StringHash returns the "key[sub]=v" entries as a map, like Hash; ok is
// false when an entry is not a plain string (a JSON number, boolean,
// array or nested object).
func (p *Params) StringHash(key string) (map[string]string, bool) {
	prefix := key + "["
	for k, vs := range p.vals {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		sub := strings.TrimSuffix(k[len(prefix):], "]")
		if p.typed[k] || strings.ContainsAny(sub, "[]") || len(vs) > 1 {
			return nil, false
		}
	}
	return p.Hash(key), true
}

// Hash returns the "key[sub]=v" entries as a map.
func (p *Params) Hash(key string) map[string]string {
	out := map[string]string{}
	prefix := key + "["
	for k, vs := range p.vals {
		if strings.HasPrefix(k, prefix) && strings.HasSuffix(k, "]") && len(vs) > 0 {
			out[k[len(prefix):len(k)-1]] = vs[0]
		}
	}
	return out
}

// File returns an uploaded file; a non-file value is recorded as invalid.
func (p *Params) File(key string) *uploads.File {
	fh, ok := p.files[key]
	if !ok {
		if p.Has(key) && !p.IsNull(key) {
			p.Fail("%s is invalid", key)
		}
		return nil
	}
	return &uploads.File{Name: fh.Filename, Size: fh.Size, Open: func() (io.ReadCloser, error) { return fh.Open() }}
}

// Err returns every recorded problem as one 400, or nil.
func (p *Params) Err() error {
	if len(p.errs) == 0 {
		return nil
	}
	return model.Param(strings.Join(p.errs, ", "))
}

// Keys lists the keys present (for tests and debugging).
func (p *Params) Keys() []string {
	keys := make([]string, 0, len(p.vals))
	for k := range p.vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Value returns key as a string, "" when absent or null.
func (p *Params) Value(key string) string {
	v, _ := p.String(key)
	return v
}

// Values returns every value of key as sent (a list's elements, a
// repeated key's values); nested reports a list that held an object or
// an array, whose elements are then JSON texts.
func (p *Params) Values(key string) (values []string, nested bool) {
	return p.vals[key], p.nested[key]
}
