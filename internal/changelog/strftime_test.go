package changelog

import (
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestStrftime_rubyNumbers(t *testing.T) {
	at := time.Date(2024, 3, 5, 14, 7, 9, 123456789, time.FixedZone("", -(2*3600+30*60)))
	for _, c := range []struct {
		t           time.Time
		format, out string
	}{
		{at, "%Y-%m-%d", "2024-03-05"},
		{at, "%F %T %z", "2024-03-05 14:07:09 -0230"},
		{at, "%-m/%-d/%y %e|%-e", "3/5/24  5|5"},
		{at, "%A %a %B %b %h %j %u %w", "Tuesday Tue March Mar Mar 065 2 2"},
		{at, "%I:%M %p %P %H %L %s", "02:07 PM pm 14 123 " + strconv.FormatInt(at.Unix(), 10)},
		{at, "%D %R%n%t%%", "03/05/24 14:07\n\t%"},
		{at, "%C", "20"},
		{at, "no directives", "no directives"},
		{at, "%q %-q %E%", "%q %-q %E%"},     // unknown directives stand as written
		{at, "100%é and %-", "100%é and %-"}, // a multi-byte character after '%' stays whole
		// Years as Ruby writes them: at least four digits, signs before the padding.
		{time.Date(5, 1, 2, 0, 0, 0, 0, time.UTC), "%Y %C %y %F %-Y", "0005 00 05 0005-01-02 5"},
		{time.Date(-1, 1, 2, 0, 0, 0, 0, time.UTC), "%Y %C %y %F", "-0001 -1 99 -0001-01-02"},
		{time.Date(-250, 1, 2, 0, 0, 0, 0, time.UTC), "%Y %C %y", "-0250 -3 50"},
		{time.Date(12345, 1, 2, 0, 0, 0, 0, time.UTC), "%Y %C %y", "12345 123 45"},
	} {
		if got := Strftime(c.t, c.format); got != c.out {
			t.Errorf("Strftime(%v, %q) = %q; want %q", c.t, c.format, got, c.out)
		}
	}
}

// FuzzStrftime: any format on any date gives at most ten bytes per byte of
// format, keeps text without directives as it is and valid UTF-8 valid;
// numbers read back; and for years 0 to 9999 the directives agree with
// Go's own layouts.
func FuzzStrftime(f *testing.F) {
	f.Add(int64(1700000000), int64(0), 0, "%Y-%m-%d")
	f.Add(int64(-62135596800), int64(999999999), 23*60+59, "%s%s%s%-s %Y%Y%C%y")
	f.Add(int64(1<<62), int64(-1), -1439, "%%%-%é%")
	f.Add(int64(-1<<62), int64(5e8), 90, "%A %B %Z %z %e %j %I %p %L")
	f.Add(int64(0), int64(0), 0, "plain text ü")
	f.Fuzz(func(t *testing.T, sec, nsec int64, zoneMinutes int, format string) {
		tm := time.Unix(sec, nsec).In(time.FixedZone("", zoneMinutes%(24*60)*60))
		out := Strftime(tm, format)
		if len(out) > 10*len(format) {
			t.Fatalf("Strftime(%v, %q) = %d bytes", tm, format, len(out))
		}
		if !strings.Contains(format, "%") && out != format {
			t.Fatalf("Strftime(%v, %q) = %q; want the text as it is", tm, format, out)
		}
		if utf8.ValidString(format) && !utf8.ValidString(out) {
			t.Fatalf("Strftime(%v, %q) = %q, not UTF-8", tm, format, out)
		}
		if y, err := strconv.Atoi(Strftime(tm, "%Y")); err != nil || y != tm.Year() {
			t.Fatalf("%%Y of %v = %d, %v", tm, y, err)
		}
		if s, err := strconv.ParseInt(Strftime(tm, "%s"), 10, 64); err != nil || s != tm.Unix() {
			t.Fatalf("%%s of %v = %d, %v", tm, s, err)
		}
		c, _ := strconv.Atoi(Strftime(tm, "%C"))
		y, _ := strconv.Atoi(Strftime(tm, "%y"))
		if c*100+y != tm.Year() || y < 0 || y > 99 {
			t.Fatalf("%%C %%y of %v = %d %d", tm, c, y)
		}
		if tm.Year() < 0 || tm.Year() > 9999 {
			return
		}
		for _, p := range [][2]string{
			{"%Y-%m-%d %H:%M:%S %z", "2006-01-02 15:04:05 -0700"},
			{"%F %T %D %R", "2006-01-02 15:04:05 01/02/06 15:04"},
			{"%a %A %b %B %h %e %j %y", "Mon Monday Jan January Jan _2 002 06"},
			{"%-m/%-d %I %p", "1/2 03 PM"},
		} {
			if got, want := Strftime(tm, p[0]), tm.Format(p[1]); got != want {
				t.Fatalf("Strftime(%v, %q) = %q; Go's %q gives %q", tm, p[0], got, p[1], want)
			}
		}
	})
}
