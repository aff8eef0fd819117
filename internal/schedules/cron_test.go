package schedules

import (
	"errors"
	"testing"
	"time"
)

func TestNextRun(t *testing.T) {
	utc := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	cases := []struct {
		name, cron, tz, after, want string
	}{
		{"every minute", "* * * * *", "UTC", "2031-01-01T10:00:30Z", "2031-01-01T10:01:00Z"},
		{"strictly after", "0 * * * *", "UTC", "2031-01-01T10:00:00Z", "2031-01-01T11:00:00Z"},
		{"hourly macro", "@hourly", "UTC", "2031-01-01T10:20:00Z", "2031-01-01T11:00:00Z"},
		{"daily macro", "@daily", "UTC", "2031-01-01T10:20:00Z", "2031-01-02T00:00:00Z"},
		{"weekly macro (Sunday)", "@weekly", "UTC", "2031-01-01T10:20:00Z", "2031-01-05T00:00:00Z"},
		{"monthly macro", "@monthly", "UTC", "2031-01-15T00:00:00Z", "2031-02-01T00:00:00Z"},
		{"yearly macro", "@yearly", "UTC", "2031-01-15T00:00:00Z", "2032-01-01T00:00:00Z"},
		{"steps and ranges", "*/15 9-17 * * 1-5", "UTC", "2031-01-03T17:50:00Z", "2031-01-06T09:00:00Z"}, // Friday evening → Monday
		{"names", "30 4 * jan,feb mon", "UTC", "2031-01-01T00:00:00Z", "2031-01-06T04:30:00Z"},
		{"spaces trimmed", "  0 1 * * *  ", "UTC", "2031-01-01T02:00:00Z", "2031-01-02T01:00:00Z"},
		{"time zone", "0 9 * * *", "Asia/Tokyo", "2031-01-01T00:00:00Z", "2031-01-01T00:00:00Z"},
		{"time zone, later", "0 9 * * *", "Asia/Tokyo", "2031-01-01T00:00:01Z", "2031-01-02T00:00:00Z"},
		{"west of UTC", "0 1 * * *", "America/New_York", "2031-01-01T00:00:00Z", "2031-01-01T06:00:00Z"},
		{"summer offset", "0 1 * * *", "America/New_York", "2031-07-01T00:00:00Z", "2031-07-01T05:00:00Z"},
		// 2031-03-09: New York goes from 02:00 EST to 03:00 EDT; 02:30 does
		// not exist that day.
		{"DST gap skipped to the next day's time", "30 2 * * *", "America/New_York", "2031-03-09T05:00:00Z", "2031-03-10T06:30:00Z"},
		{"DST spring day, hourly", "0 * * * *", "America/New_York", "2031-03-09T06:30:00Z", "2031-03-09T07:00:00Z"},
		// 2031-11-02: 01:30 happens twice (EDT then EST); it matches both.
		{"DST repeated hour, first", "30 1 * * *", "America/New_York", "2031-11-02T04:00:00Z", "2031-11-02T05:30:00Z"},
		{"DST repeated hour, second", "30 1 * * *", "America/New_York", "2031-11-02T05:30:00Z", "2031-11-02T06:30:00Z"},
		{"DST repeated hour, then the next day", "30 1 * * *", "America/New_York", "2031-11-02T06:30:00Z", "2031-11-03T06:30:00Z"},
		{"Europe DST", "0 12 * * *", "Europe/Berlin", "2031-03-30T00:00:00Z", "2031-03-30T10:00:00Z"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "time zone" {
				// 09:00 in Tokyo is 00:00 UTC: a run exactly at "after" is
				// not after it.
				c.want = "2031-01-02T00:00:00Z"
			}
			got, err := NextRun(c.cron, c.tz, utc(c.after))
			if err != nil {
				t.Fatal(err)
			}
			if want := utc(c.want); !got.Equal(want) || got.Location() != time.UTC {
				t.Errorf("NextRun(%q, %q, %s) = %s; want %s (UTC)", c.cron, c.tz, c.after, got, want)
			}
		})
	}
}

func TestParseCron_invalid(t *testing.T) {
	cases := []struct {
		cron, tz string
		want     error
	}{
		{"", "UTC", errCron},
		{"not a cron", "UTC", errCron},
		{"* * * *", "UTC", errCron},
		{"* * * * * *", "UTC", errCron},
		{"61 * * * *", "UTC", errCron},
		{"* 24 * * *", "UTC", errCron},
		{"@every 5m", "UTC", errCron},
		{"@reboot", "UTC", errCron},
		{"CRON_TZ=Asia/Tokyo 0 9 * * *", "UTC", errCron},
		{"TZ=Asia/Tokyo 0 9 * * *", "UTC", errCron},
		{"* * * * *", "", errTimezone},
		{"* * * * *", "Local", errTimezone},
		{"* * * * *", "Mars/Olympus", errTimezone},
		{"* * * * *", "../../etc/passwd", errTimezone},
		{"* * * * *", "Asia/Tokyo\x00", errTimezone},
	}
	for _, c := range cases {
		if _, err := ParseCron(c.cron, c.tz); !errors.Is(err, c.want) {
			t.Errorf("ParseCron(%q, %q) = %v; want %v", c.cron, c.tz, err, c.want)
		}
	}
}

func TestNextRun_neverMatches(t *testing.T) {
	got, err := NextRun("0 0 30 2 *", "UTC", time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if !got.IsZero() {
		t.Errorf("30 February ran at %s; want never", got)
	}
}

func FuzzParseCron(f *testing.F) {
	for _, s := range []string{"* * * * *", "@daily", "*/5 1-3 * jan mon-fri", "0 0 30 2 *", "@every 1s", "TZ=UTC * * * * *"} {
		f.Add(s, "UTC")
	}
	f.Add("0 9 * * *", "Asia/Tokyo")
	f.Fuzz(func(t *testing.T, line, tz string) {
		c, err := ParseCron(line, tz)
		if err != nil {
			return
		}
		from := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
		n := c.Next(from)
		if !n.IsZero() && (!n.After(from) || n.Second() != 0 || n.Location() != time.UTC) {
			t.Fatalf("Next(%q, %q) = %s", line, tz, n)
		}
	})
}
