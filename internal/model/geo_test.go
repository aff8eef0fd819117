package model

import (
	"math"
	"testing"
	"time"
)

func ptr(n int64) *int64 { return &n }

func TestGeoPercentage(t *testing.T) {
	for _, c := range []struct {
		count, total *int64
		want         string
	}{
		{nil, nil, "0.00%"},
		{ptr(3), nil, "0.00%"},
		{nil, ptr(10), "0.00%"},
		{ptr(5), ptr(0), "0.00%"},
		{ptr(0), ptr(7), "0.00%"},
		{ptr(7), ptr(7), "100.00%"},
		{ptr(1), ptr(2), "50.00%"},
		{ptr(20), ptr(41), "48.78%"}, // GitLab's documented example
		{ptr(10), ptr(41), "24.39%"},
		{ptr(1), ptr(3), "33.33%"},
		{ptr(2), ptr(3), "66.67%"},  // rounded half up
		{ptr(1), ptr(8), "12.50%"},  // exact
		{ptr(1), ptr(800), "0.13%"}, // 0.125 rounds up
		{ptr(1), ptr(30000), "0.00%"},
		{ptr(3), ptr(2), "150.00%"},
		{ptr(-4), ptr(2), "0.00%"},
		{ptr(5), ptr(-1), "0.00%"},
		{ptr(math.MaxInt64), ptr(math.MaxInt64), "100.00%"},
		{ptr(math.MaxInt64), ptr(1), "100000.00%"}, // bounded at a thousand times the total
		{ptr(1 << 62), ptr(1 << 61), "200.00%"},
	} {
		if got := GeoPercentage(c.count, c.total); got != c.want {
			t.Errorf("GeoPercentage(%v, %v) = %q; want %q", deref(c.count), deref(c.total), got, c.want)
		}
	}
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestGeoStatus_healthy(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		health string
		age    time.Duration
		want   bool
	}{
		{"", 0, true},
		{GeoHealthy, time.Minute, true},
		{GeoHealthy, GeoStatusExpiry, true},
		{GeoHealthy, GeoStatusExpiry + time.Second, false},
		{"Repository storage default is not available", 0, false},
	} {
		s := GeoStatus{Health: c.health, LastSuccessfulStatusCheckAt: now.Add(-c.age)}
		if got := s.Healthy(now); got != c.want {
			t.Errorf("health %q, %s old: healthy %v; want %v", c.health, c.age, got, c.want)
		}
	}
}

func TestGeoCounterNames(t *testing.T) {
	names := GeoCounterNames()
	seen := map[string]bool{}
	for _, n := range names {
		if seen[n] {
			t.Errorf("counter %q twice", n)
		}
		seen[n] = true
	}
	for _, want := range []string{"repositories_count", "wikis_synced_count", "job_artifacts_checksum_total_count",
		"uploads_verification_failed_count", "repositories_checked_count", "wikis_checksum_mismatch_count"} {
		if !seen[want] {
			t.Errorf("no counter %q", want)
		}
	}
	for _, p := range GeoPercentages {
		if !seen[p[1]] || !seen[p[2]] {
			t.Errorf("percentage %s from unknown counters %s / %s", p[0], p[1], p[2])
		}
	}
}
