package schedules

import (
	"errors"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Limits of a schedule's cron line and time zone name.
const (
	maxCronLen     = 255
	maxTimezoneLen = 100
)

var (
	errCron     = errors.New("cron syntax is invalid")
	errTimezone = errors.New("cron timezone syntax is invalid")
)

// cronParser reads GitLab's cron lines: five fields (minute, hour, day of
// month, month, day of week; names, ranges, steps and lists) or a macro
// (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly).
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Cron is a parsed cron line in its time zone.
type Cron struct {
	spec *cron.SpecSchedule
}

// ParseCron checks a cron line and time zone name (IANA, as
// time.LoadLocation reads them; "" and "Local" are refused): errCron or
// errTimezone when one is not valid.
func ParseCron(line, timezone string) (Cron, error) {
	loc, err := parseTimezone(timezone)
	if err != nil {
		return Cron{}, err
	}
	line = strings.TrimSpace(line)
	// The parser would take a time zone from the line itself (TZ=…), and
	// "@every <duration>" is not cron: both are refused.
	if line == "" || len(line) > maxCronLen || strings.Contains(line, "TZ=") || strings.HasPrefix(line, "@every") {
		return Cron{}, errCron
	}
	s, err := cronParser.Parse(line)
	if err != nil {
		return Cron{}, errCron
	}
	spec, ok := s.(*cron.SpecSchedule)
	if !ok {
		return Cron{}, errCron
	}
	spec.Location = loc
	return Cron{spec: spec}, nil
}

func parseTimezone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || len(name) > maxTimezoneLen {
		return nil, errTimezone
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, errTimezone
	}
	return loc, nil
}

// Next is the first time after t the line matches, in UTC and to the
// minute; the zero time when it never does (30 February).
//
// GitLab sets next_run_at to this time rounded up to the next run of its
// scheduling worker when the two differ; Quarry's scheduler looks every
// minute, which is the cron's own resolution, so the rounding changes
// nothing and next_run_at is the cron's time itself. Across a daylight
// saving change the wall-clock rules of the zone apply (robfig/cron's
// reading): a time skipped by the change (02:30 when clocks go from 02:00
// to 03:00) does not happen that day; a time that occurs twice (01:30
// when clocks go back) matches both times.
func (c Cron) Next(t time.Time) time.Time {
	n := c.spec.Next(t)
	if n.IsZero() {
		return n
	}
	return n.UTC()
}

// NextRun is ParseCron then Next.
func NextRun(line, timezone string, after time.Time) (time.Time, error) {
	c, err := ParseCron(line, timezone)
	if err != nil {
		return time.Time{}, err
	}
	return c.Next(after), nil
}
