package endpoint

import (
	"strings"
	"testing"
)

func TestSentryKey(t *testing.T) {
	for h, want := range map[string]string{
		"Sentry sentry_version=7, sentry_client=sentry.go/0.46.2, sentry_key=glet_ab12": "glet_ab12",
		"Sentry sentry_key=glet_ab12,sentry_version=7":                                  "glet_ab12",
		"sentry sentry_key= glet_ab12 , sentry_secret=x":                                "glet_ab12",
		"Sentry sentry_version=7, sentry_key=":                                          "",
		"Sentry sentry_version=7":                                                       "",
		"Bearer glet_ab12":                                                              "",
		"":                                                                              "",
	} {
		if got := sentryKey(h); got != want {
			t.Errorf("sentryKey(%q) = %q; want %q", h, got, want)
		}
	}
}

func FuzzSentryKey(f *testing.F) {
	f.Add("Sentry sentry_version=7, sentry_client=raven-python/6.10.0, sentry_timestamp=1630945472, sentry_key=glet_ab12, sentry_secret=")
	f.Add("Sentry sentry_key=a,sentry_key=b")
	f.Add("sentry_key==,=")
	f.Fuzz(func(t *testing.T, h string) {
		k := sentryKey(h)
		if k == "" {
			return
		}
		if strings.Contains(k, ",") || k != strings.TrimSpace(k) || !strings.Contains(h, k) {
			t.Fatalf("sentryKey(%q) = %q", h, k)
		}
	})
}
