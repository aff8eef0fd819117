package changelog

import (
	"math/big"
	"regexp"
	"sort"
	"strings"
)

// DefaultTagRegex finds versions in tag names: "vX.Y.Z" or "X.Y.Z", with
// an optional pre-release and build metadata.
const DefaultTagRegex = `^v?(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*)` +
	`(?:-(?P<pre>(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?` +
	`(?:\+(?P<meta>[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$`

var defaultTagRe = regexp.MustCompile(DefaultTagRegex)

// Version is a semantic version.
type Version struct {
	Major, Minor, Patch string // decimal digits, any length
	Pre, Meta           string
}

// String is "M.m.p", with "+meta" when there is some.
func (v Version) String() string {
	s := v.Major + "." + v.Minor + "." + v.Patch
	if v.Meta != "" {
		s += "+" + v.Meta
	}
	return s
}

// matchVersion reads a version with re, whose groups major, minor and
// patch (and optionally pre and meta) name its parts; ok is false when
// re does not match or lacks a part.
func matchVersion(re *regexp.Regexp, s string) (Version, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return Version{}, false
	}
	var v Version
	for i, name := range re.SubexpNames() {
		switch name {
		case "major":
			v.Major = m[i]
		case "minor":
			v.Minor = m[i]
		case "patch":
			v.Patch = m[i]
		case "pre":
			v.Pre = m[i]
		case "meta":
			v.Meta = m[i]
		}
	}
	if v.Major == "" || v.Minor == "" || v.Patch == "" {
		return Version{}, false
	}
	return v, true
}

// ParseVersion reads a requested version ("1.2.3", "v1.2.3", with optional
// pre-release and metadata).
func ParseVersion(s string) (Version, bool) { return matchVersion(defaultTagRe, s) }

func cmpNum(a, b string) int {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	if x == nil || y == nil {
		return strings.Compare(a, b)
	}
	return x.Cmp(y)
}

// Compare orders versions by their numbers, a pre-release before its
// release, pre-release identifiers numerically or by text.
func Compare(a, b Version) int {
	for _, pair := range [][2]string{{a.Major, b.Major}, {a.Minor, b.Minor}, {a.Patch, b.Patch}} {
		if c := cmpNum(pair[0], pair[1]); c != 0 {
			return c
		}
	}
	switch {
	case a.Pre == b.Pre:
		return 0
	case a.Pre == "":
		return 1
	case b.Pre == "":
		return -1
	}
	pa, pb := strings.Split(a.Pre, "."), strings.Split(b.Pre, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, nb := isNumeric(pa[i]), isNumeric(pb[i])
		var c int
		switch {
		case na && nb:
			c = cmpNum(pa[i], pb[i])
		case na:
			c = -1
		case nb:
			c = 1
		default:
			c = strings.Compare(pa[i], pb[i])
		}
		if c != 0 {
			return c
		}
	}
	return len(pa) - len(pb)
}

func isNumeric(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// Tag is a tag name and the commit it points at.
type Tag struct {
	Name   string
	Commit string
}

// PreviousTag finds the tag of the last stable version before version:
// tags are read with re (pre-releases and tags without a version are left
// out) and the one just below version wins.
func PreviousTag(version Version, tags []Tag, re *regexp.Regexp) (Tag, bool) {
	type candidate struct {
		v   Version
		tag Tag
	}
	target := Version{Major: version.Major, Minor: version.Minor, Patch: version.Patch, Meta: version.Meta}
	var below []candidate
	for _, t := range tags {
		v, ok := matchVersion(re, t.Name)
		if !ok || v.Pre != "" {
			continue
		}
		if Compare(v, target) < 0 {
			below = append(below, candidate{v, t})
		}
	}
	if len(below) == 0 {
		return Tag{}, false
	}
	sort.SliceStable(below, func(i, j int) bool { return Compare(below[i].v, below[j].v) < 0 })
	return below[len(below)-1].tag, true
}
