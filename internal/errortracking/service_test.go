package errortracking

import (
	"testing"

	"quarry/internal/model"
)

func TestService_DSN(t *testing.T) {
	k := model.ErrorTrackingClientKey{ProjectID: 42, PublicKey: "glet_0123456789abcdef0123456789abcdef"}
	for ext, want := range map[string]string{
		"http://127.0.0.1:8080":              "http://glet_0123456789abcdef0123456789abcdef@127.0.0.1:8080/api/v4/error_tracking/collector/42",
		"https://gitlab.example.com/":        "https://glet_0123456789abcdef0123456789abcdef@gitlab.example.com/api/v4/error_tracking/collector/42",
		"https://gitlab.example.com:443":     "https://glet_0123456789abcdef0123456789abcdef@gitlab.example.com/api/v4/error_tracking/collector/42",
		"http://gitlab.example.com:80/root/": "http://glet_0123456789abcdef0123456789abcdef@gitlab.example.com/root/api/v4/error_tracking/collector/42",
		"https://[::1]:443":                  "https://glet_0123456789abcdef0123456789abcdef@[::1]/api/v4/error_tracking/collector/42",
		"https://x.test:8443/gitlab":         "https://glet_0123456789abcdef0123456789abcdef@x.test:8443/gitlab/api/v4/error_tracking/collector/42",
	} {
		if got := New(nil, nil, ext, DefaultLimits).DSN(k); got != want {
			t.Errorf("DSN with %q = %q; want %q", ext, got, want)
		}
	}
}
