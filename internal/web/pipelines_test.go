package web

import (
	"testing"
	"time"
)

func TestCIDuration(t *testing.T) {
	at := func(s int) *time.Time { v := time.Unix(1700000000+int64(s), 0); return &v }
	for _, c := range []struct {
		start, end *time.Time
		want       string
	}{
		{nil, nil, ""}, {at(0), at(0), "0s"}, {at(0), at(59), "59s"}, {at(0), at(65), "1m 5s"},
		{at(0), at(3*3600 + 120), "3h 2m"}, {at(10), at(0), "0s"}, {at(0), nil, "30s"},
	} {
		if got := ciDuration(c.start, c.end, *at(30)); got != c.want {
			t.Errorf("ciDuration(%v, %v) = %q; want %q", c.start, c.end, got, c.want)
		}
	}
}

func TestCIStatusLabel(t *testing.T) {
	for in, want := range map[ciStatus]string{"success": "passed", "failed": "failed", "waiting_for_resource": "waiting", "": "unknown",
		"manual": "manual"} {
		if got := in.Label(); got != want {
			t.Errorf("%q.Label() = %q; want %q", in, got, want)
		}
	}
}
