package ci

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"quarry/internal/ciconfig"
)

func TestCheckRemoteIP(t *testing.T) {
	for _, c := range []struct {
		ip   string
		want string
	}{
		{"127.0.0.1", "Requests to localhost are not allowed"},
		{"::1", "Requests to localhost are not allowed"},
		{"0.0.0.0", "Requests to localhost are not allowed"},
		{"10.1.2.3", "Requests to the local network are not allowed"},
		{"192.168.0.1", "Requests to the local network are not allowed"},
		{"172.16.5.5", "Requests to the local network are not allowed"},
		{"fd00::1", "Requests to the local network are not allowed"},
		{"100.64.0.1", "Requests to the local network are not allowed"},
		{"169.254.169.254", "Requests to the link local network are not allowed"},
		{"fe80::1", "Requests to the link local network are not allowed"},
		{"93.184.216.34", ""},
		{"2606:2800:220:1::1", ""},
	} {
		err := checkRemoteIP(net.ParseIP(c.ip))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("checkRemoteIP(%s) = %q; want %q", c.ip, got, c.want)
		}
	}
}

// TestRemoteClient_connectTimeCheck: a name is checked by the address
// it resolves to when connecting, not by how it is written.
func TestRemoteClient_connectTimeCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("a: 1\n")) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	url := "http://localhost:" + port + "/ci.yml"
	_, err := remoteClient(false).Get(url)
	var blocked *ciconfig.RemoteBlockedError
	if !errors.As(remoteError(err), &blocked) || blocked.Reason != "Requests to localhost are not allowed" {
		t.Fatalf("blocked fetch: %v", err)
	}
	resp, err := remoteClient(true).Get(url)
	if err != nil {
		t.Fatalf("allowed fetch: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("allowed fetch: status %d", resp.StatusCode)
	}
}
