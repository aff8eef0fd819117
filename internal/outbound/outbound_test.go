package outbound

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestCheckIP(t *testing.T) {
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
		err := CheckIP(net.ParseIP(c.ip))
		got := ""
		var blocked *BlockedError
		if errors.As(err, &blocked) {
			got = blocked.Reason
		}
		if got != c.want {
			t.Errorf("CheckIP(%s) = %v; want %q", c.ip, err, c.want)
		}
	}
}

// TestClient_connectTimeCheck: a name is checked by the address it
// resolves to when connecting, not by how it is written.
func TestClient_connectTimeCheck(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("a: 1\n")) }))
	t.Cleanup(srv.Close)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	url := "http://localhost:" + port + "/ci.yml"
	_, err := Client{}.Get(context.Background(), url, false, 100)
	var blocked *BlockedError
	if !errors.As(err, &blocked) || blocked.Reason != "Requests to localhost are not allowed" {
		t.Fatalf("blocked fetch: %v", err)
	}
	data, err := Client{}.Get(context.Background(), url, true, 100)
	if err != nil || string(data) != "a: 1\n" {
		t.Fatalf("allowed fetch: %q, %v", data, err)
	}
}

func TestClient_Get_errors(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(strings.Repeat("x", 11))) })
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusGone) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/x", http.StatusFound)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	c := Client{Timeout: 300 * time.Millisecond, Redirects: 3}
	ctx := context.Background()

	var tooLarge *TooLargeError
	if _, err := c.Get(ctx, srv.URL+"/big", true, 10); !errors.As(err, &tooLarge) {
		t.Errorf("big: %v; want TooLargeError", err)
	}
	if data, err := c.Get(ctx, srv.URL+"/big", true, 11); err != nil || len(data) != 11 {
		t.Errorf("big within bound: %d bytes, %v", len(data), err)
	}
	var status *StatusError
	if _, err := c.Get(ctx, srv.URL+"/gone", true, 10); !errors.As(err, &status) || status.HTTPStatus() != 410 {
		t.Errorf("gone: %v; want StatusError 410", err)
	}
	if _, err := c.Get(ctx, srv.URL+"/loop", true, 10); err == nil || !strings.Contains(err.Error(), "too many redirects") {
		t.Errorf("loop: %v; want too many redirects", err)
	}
	var blocked *BlockedError
	if _, err := c.Get(ctx, srv.URL+"/ftp", true, 10); !errors.As(err, &blocked) {
		t.Errorf("ftp redirect: %v; want BlockedError", err)
	}
	if _, err := c.Get(ctx, "file:///etc/passwd", true, 10); !errors.As(err, &blocked) || blocked.BlockedReason() != "Only allowed schemes are http, https" {
		t.Errorf("file scheme: %v; want BlockedError", err)
	}
	var timeout *TimeoutError
	if _, err := c.Get(ctx, srv.URL+"/slow", true, 10); !errors.As(err, &timeout) || !timeout.Timeout() {
		t.Errorf("slow: %v; want TimeoutError", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var connect *ConnectError
	if _, err := c.Get(ctx, "http://"+addr+"/x.yml", true, 10); !errors.As(err, &connect) {
		t.Errorf("refused: %v; want ConnectError", err)
	}
}
