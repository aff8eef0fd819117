package wikis

import (
	"math/big"
	"path"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format is a wiki page markup.
type Format struct {
	Name     string // "markdown", "rdoc", "asciidoc", "org", "textile", "creole", "rest", "mediawiki", "pod", "plaintext"
	Ext      string // default extension, no dot: md, rdoc, asciidoc, org, textile, creole, rst, mediawiki, pod, txt
	Writable bool   // pages may be created in it through the API: markdown, rdoc, asciidoc, org only
}

// formats are the ten formats, writable ones first.
var formats = []Format{
	{Name: "markdown", Ext: "md", Writable: true},
	{Name: "rdoc", Ext: "rdoc", Writable: true},
	{Name: "asciidoc", Ext: "asciidoc", Writable: true},
	{Name: "org", Ext: "org", Writable: true},
	{Name: "textile", Ext: "textile"},
	{Name: "creole", Ext: "creole"},
	{Name: "rest", Ext: "rst"},
	{Name: "mediawiki", Ext: "mediawiki"},
	{Name: "pod", Ext: "pod"},
	{Name: "plaintext", Ext: "txt"},
}

// extensions maps every recognised lower-case extension to its format's name.
var extensions = map[string]string{
	"md": "markdown", "mkd": "markdown", "mkdn": "markdown", "mdown": "markdown", "markdown": "markdown",
	"rdoc":     "rdoc",
	"asciidoc": "asciidoc", "adoc": "asciidoc",
	"org":     "org",
	"textile": "textile",
	"creole":  "creole",
	"rst":     "rest", "rest": "rest",
	"mediawiki": "mediawiki", "wiki": "mediawiki",
	"pod": "pod",
	"txt": "plaintext",
}

// WritableFormats are the names the API accepts for `format`, in this order:
// markdown, rdoc, asciidoc, org.
var WritableFormats = []string{"markdown", "rdoc", "asciidoc", "org"}

// FormatNamed returns the format with that name (case-sensitive, any of
// the ten); ok is false otherwise.
func FormatNamed(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// PageFormat tells whether a file path is a wiki page: its extension is
// recognised. The extension is the part after the last "." of the last
// "/"-separated component, which must have a non-empty name before that
// dot; it is compared ASCII case-insensitively. The extensions are
// markdown: md, mkd, mkdn, mdown, markdown; rdoc: rdoc; asciidoc: asciidoc,
// adoc; org: org; textile: textile; creole: creole; rest: rst, rest;
// mediawiki: mediawiki, wiki; pod: pod; plaintext: txt. It returns the
// format and the path without the "." and extension (the page's slug).
func PageFormat(path string) (f Format, slug string, ok bool) {
	base := path[strings.LastIndexByte(path, '/')+1:]
	dot := strings.LastIndexByte(base, '.')
	if dot <= 0 || strings.Trim(base[:dot], ".") == "" {
		return Format{}, "", false // no name, or only dots: no page
	}
	name, known := extensions[asciiLower(base[dot+1:])]
	if !known {
		return Format{}, "", false
	}
	f, _ = FormatNamed(name)
	return f, path[:len(path)-len(base)+dot], true
}

// asciiLower lowers A–Z only, so that no non-ASCII letter (such as the
// Kelvin sign) folds into an extension.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// NormalizeTitle squishes every "/"-separated component of a title: leading
// and trailing white space removed and each inner run of white space
// (unicode.IsSpace) made one ASCII space. The "/" separators are kept as
// they are: empty components stay empty ("a//b" stays "a//b", "/a" stays
// "/a"). Bytes that are not valid UTF-8 are kept.
func NormalizeTitle(title string) string {
	parts := strings.Split(title, "/")
	for i, p := range parts {
		parts[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(parts, "/")
}

// Slug is the path (without extension) a page with this title is stored
// at, relative to the wiki's root. ASCII control characters (0x00–0x1f,
// 0x7f) are removed first; then the title is cleaned as an absolute path
// under "/" — "." components dropped, ".." removes the previous component
// (never above the root), empty components (repeated "/", leading or
// trailing "/") dropped — and then every ASCII space becomes "-". The
// result never starts or ends with "/", never has an empty, "." or ".."
// component, and is "" when nothing remains. Case is kept; each byte that
// is not valid UTF-8 becomes U+FFFD, so a slug is valid UTF-8. Slug is
// idempotent.
func Slug(title string) string {
	var b strings.Builder
	b.WriteByte('/')
	for _, r := range title {
		if r >= 0x20 && r != 0x7f {
			b.WriteRune(r)
		}
	}
	s := strings.TrimPrefix(path.Clean(b.String()), "/")
	return strings.ReplaceAll(s, " ", "-")
}

// TitleOf is the title of the page stored at path: the last "/"-separated
// component without its extension (as PageFormat strips it; when path is
// not a page, nothing is stripped), with every "-" made a space.
// "dir/My-Page.md" gives "My Page".
func TitleOf(path string) string {
	if _, slug, ok := PageFormat(path); ok {
		path = slug
	}
	return strings.ReplaceAll(path[strings.LastIndexByte(path, '/')+1:], "-", " ")
}

// Title limits, in bytes.
const (
	MaxTitleBytes     = 245 // the last component of a title
	MaxDirectoryBytes = 255 // each directory component
)

// ValidateTitle returns the messages for every rule a (normalized) title
// breaks, in this order:
//   - "can't be blank" when Slug(title) is "" (and then nothing else);
//   - `exceeds the limit of 255 bytes for directory name "<dir>"` once for
//     each directory component (every component of Slug(title) but the
//     last) longer than MaxDirectoryBytes, in order, <dir> being the
//     component as it is in the slug, unquoted;
//   - "exceeds the limit of 245 bytes" when the last component of
//     Slug(title) is longer than MaxTitleBytes.
//
// It returns nil when the title is fine.
func ValidateTitle(title string) []string {
	slug := Slug(title)
	if slug == "" {
		return []string{"can't be blank"}
	}
	var msgs []string
	parts := strings.Split(slug, "/")
	for _, dir := range parts[:len(parts)-1] {
		if len(dir) > MaxDirectoryBytes {
			msgs = append(msgs, "exceeds the limit of "+strconv.Itoa(MaxDirectoryBytes)+` bytes for directory name "`+dir+`"`)
		}
	}
	if len(parts[len(parts)-1]) > MaxTitleBytes {
		msgs = append(msgs, "exceeds the limit of "+strconv.Itoa(MaxTitleBytes)+" bytes")
	}
	return msgs
}

// sizeUnits are HumanSize's units above bytes; unit i is 1024^(i+1) bytes.
var sizeUnits = []string{"KB", "MB", "GB", "TB", "PB", "EB"}

// HumanSize writes a byte count as Rails' number_to_human_size does (base
// 1024, precision 3 significant digits, insignificant trailing zeros
// stripped, half-up rounding): 0 → "0 Bytes", 1 → "1 Byte", 1000 →
// "1000 Bytes", 1024 → "1 KB", 1536 → "1.5 KB", 2000 → "1.95 KB",
// 52428800 → "50 MB", 1073741824 → "1 GB". Units are Bytes, KB, MB, GB, TB,
// PB and EB. Negative input is written as "0 Bytes".
//
// The unit is the largest u with n >= 1024^u, and n / 1024^u is rounded
// exactly (no floating point) to 3 significant digits; a value that rounds
// up to 1000 or more stays in that unit (1048575 → "1020 KB", 1023488 →
// "1000 KB").
func HumanSize(n int64) string {
	if n < 1024 {
		switch {
		case n < 0:
			return "0 Bytes"
		case n == 1:
			return "1 Byte"
		}
		return strconv.FormatInt(n, 10) + " Bytes"
	}
	u := 0
	for u+1 < len(sizeUnits) && n>>(10*(u+2)) > 0 {
		u++
	}
	shift := uint(10 * (u + 1))
	// The value n / 2^shift is in [1, 1024): its integer part has d digits,
	// so it is rounded to 3-d decimals, i.e. r = round(n * 10^(3-d) / 2^shift).
	d := len(strconv.FormatInt(n>>shift, 10))
	num := big.NewInt(n)
	den := new(big.Int).Lsh(big.NewInt(1), shift)
	if d <= 3 {
		num.Mul(num, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(3-d)), nil))
	} else {
		den.Mul(den, big.NewInt(10))
	}
	// Half up: floor((2*num + den) / (2*den)).
	num.Lsh(num, 1).Add(num, den)
	r := num.Quo(num, den.Lsh(den, 1)).Int64()
	var s string
	if d > 3 {
		s = strconv.FormatInt(r*10, 10)
	} else {
		// The value is at least 1, so r >= 100 has more than 3-d digits.
		s = strconv.FormatInt(r, 10)
		if dec := 3 - d; dec > 0 {
			s = strings.TrimRight(s[:len(s)-dec]+"."+s[len(s)-dec:], "0")
			s = strings.TrimSuffix(s, ".")
		}
	}
	return s + " " + sizeUnits[u]
}

// MaxAttachmentNameBytes bounds a stored attachment's file name.
const MaxAttachmentNameBytes = 255

// AttachmentName cleans an uploaded file's name for storage under
// uploads/<random>/: only the part after the last "/" or "\" is kept; every
// character that is not a Unicode letter or digit, "_", ".", "-" or "+"
// becomes "_" (each byte that is not valid UTF-8 too); a name longer than
// MaxAttachmentNameBytes is cut at a rune boundary keeping its extension
// (the part from the last "." if that is not the first character, itself
// cut to MaxAttachmentNameBytes). ok is false when the result is empty or
// made only of dots. A clean name is valid UTF-8 and has no white space,
// control character, "/" or "\".
func AttachmentName(name string) (clean string, ok bool) {
	name = name[strings.LastIndexAny(name, `/\`)+1:]
	var b strings.Builder
	for _, r := range name {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' || r == '-' || r == '+' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	clean = b.String()
	if len(clean) > MaxAttachmentNameBytes {
		stem, ext := clean, ""
		if dot := strings.LastIndexByte(clean, '.'); dot > 0 {
			stem, ext = clean[:dot], truncate(clean[dot:], MaxAttachmentNameBytes)
		}
		clean = truncate(stem, MaxAttachmentNameBytes-len(ext)) + ext
	}
	if strings.Trim(clean, ".") == "" {
		return "", false
	}
	return clean, true
}

// truncate cuts valid UTF-8 s to at most n bytes, at a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// embeddedExtensions are the lower-case extensions AttachmentMarkdown
// embeds: images, videos and audio.
var embeddedExtensions = map[string]bool{
	"png": true, "jpg": true, "jpeg": true, "gif": true, "bmp": true, "tiff": true, "ico": true, "webp": true, "svg": true,
	"mp4": true, "m4v": true, "mov": true, "webm": true, "ogv": true,
	"mp3": true, "oga": true, "ogg": true, "spx": true, "wav": true, "m4a": true,
}

// AttachmentMarkdown is the Markdown that links an attachment named
// fileName stored at path. Images (png, jpg, jpeg, gif, bmp, tiff, ico,
// webp, svg), videos (mp4, m4v, mov, webm, ogv) and audio (mp3, oga, ogg,
// spx, wav, m4a) — by extension, the part after the last "." when that is
// not the first character, ASCII case-insensitive — are embedded as
// `![<name without extension>](<path>)`; any other file is linked as
// `[<fileName>](<path>)`. In the text part "\", "[" and "]" are escaped
// with a backslash. path is written as it is: it is expected to be a
// stored path, made of names AttachmentName cleaned (no white space or
// parentheses).
func AttachmentMarkdown(fileName, path string) string {
	text, bang := fileName, ""
	if dot := strings.LastIndexByte(fileName, '.'); dot > 0 && embeddedExtensions[asciiLower(fileName[dot+1:])] {
		text, bang = fileName[:dot], "!"
	}
	text = strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`).Replace(text)
	return bang + "[" + text + "](" + path + ")"
}
