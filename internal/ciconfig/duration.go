package ciconfig

import (
	"errors"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// durationUnits are ChronicDuration's unit words and their seconds
// (a month is 30 days, a year 365.25).
var durationUnits = map[string]float64{}

func init() {
	for secs, words := range map[float64]string{
		1:        "seconds second secs sec s",
		60:       "minutes minute mins min m",
		3600:     "hours hour hrs hr h",
		86400:    "days day dy d",
		604800:   "weeks week wks wk w",
		2592000:  "months month mos mo",
		31557600: "years year yrs yr y",
	} {
		for _, w := range strings.Fields(words) {
			durationUnits[w] = secs
		}
	}
}

var (
	reDurationNumber = regexp.MustCompile(`[0-9]*\.?[0-9]+`)
	reDurationClock  = regexp.MustCompile(`^[0-9]*\.?[0-9]+(:[0-9]*\.?[0-9]+)+$`)
	errDuration      = errors.New("not a duration")
)

// ParseDuration reads a duration as GitLab's ChronicDuration does
// ("1h 30m", "3 hours", "1 week and 2 days", "10m", "90" seconds,
// "1:30:00"). Zero, unknown words and numbers without a unit between
// them are errors.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.ToLower(s)
	if t := strings.ReplaceAll(s, " ", ""); reDurationClock.MatchString(t) {
		parts := strings.Split(t, ":")
		if len(parts) > 6 {
			return 0, errDuration
		}
		clock := []string{"seconds", "minutes", "hours", "days", "months", "years"}
		var b strings.Builder
		for i := range parts {
			b.WriteString(parts[i] + " " + clock[len(parts)-1-i] + " ")
		}
		s = b.String()
	}
	s = reDurationNumber.ReplaceAllString(s, " $0 ")
	var words []string
	for _, w := range strings.Fields(s) {
		if reDurationNumber.MatchString(w) {
			words = append(words, w)
			continue
		}
		w = strings.TrimSuffix(strings.TrimPrefix(w, ","), ",")
		switch {
		case durationUnits[w] > 0:
			words = append(words, w)
		case w == "and" || w == "with" || w == "plus":
		default:
			return 0, errDuration
		}
	}
	if len(words) > 0 && durationUnits[words[0]] > 0 {
		words = append([]string{"1"}, words...)
	}
	var secs float64
	for i, w := range words {
		if durationUnits[w] > 0 {
			continue
		}
		n, err := strconv.ParseFloat(w, 64)
		if err != nil {
			return 0, errDuration
		}
		unit := 1.0
		if i+1 < len(words) {
			if unit = durationUnits[words[i+1]]; unit == 0 {
				return 0, errDuration
			}
		}
		secs += n * unit
	}
	if secs <= 0 || secs > math.MaxInt64/float64(time.Second) {
		return 0, errDuration
	}
	return time.Duration(secs * float64(time.Second)), nil
}

// Duration limits of the keywords that take one.
const (
	maxStartIn = 7 * 24 * time.Hour
	// maxTimeout is GitLab's Project::MAX_BUILD_TIMEOUT, a month
	// (2629746 s) written out by ChronicDuration and read back.
	maxTimeout = 2629746 * time.Second
)

// duration validates a duration keyword: GitLab's "should be a
// duration" for anything but a string ChronicDuration reads, and
// "should not exceed the limit" beyond limit.
func duration(loc, attr string, v any, limit time.Duration) (time.Duration, error) {
	s, ok := v.(string)
	d, err := ParseDuration(s)
	if !ok || err != nil {
		return 0, entryError(loc, attr+" should be a duration")
	}
	if d > limit {
		return 0, entryError(loc, attr+" should not exceed the limit")
	}
	return d, nil
}
