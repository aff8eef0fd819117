package leaktest

import (
	"reflect"
	"testing"
)

func TestParseStacks(t *testing.T) {
	dump := `goroutine 1 [running]:
main.main()
	/src/main.go:12 +0x1d

goroutine 35 [chan receive, 3 minutes]:
net/http.(*Server).Serve(0xc000132000, {0x8a5e40, 0xc00012a010})
	/go/src/net/http/server.go:3330 +0x30c
...additional frames elided...
created by quarry/internal/app.(*App).Start in goroutine 7
	/src/app.go:88 +0x65

goroutine 40 gp=0xc000007a40 m=nil [IO wait, locked to thread]:
internal/poll.runtime_pollWait(0x7f, 0x72)
	/go/src/runtime/netpoll.go:351 +0x85
created by os/exec.(*Cmd).Start
	/go/src/os/exec/exec.go:700 +0x9c

not a goroutine block
`
	got := parseStacks(dump)
	want := []Goroutine{
		{ID: 1, State: "running", Funcs: []string{"main.main"}},
		{ID: 35, State: "chan receive", Funcs: []string{"net/http.(*Server).Serve"}, CreatedBy: "quarry/internal/app.(*App).Start"},
		{ID: 40, State: "IO wait", Funcs: []string{"internal/poll.runtime_pollWait"}, CreatedBy: "os/exec.(*Cmd).Start"},
	}
	if len(got) != len(want) {
		t.Fatalf("parsed %d goroutines: %+v", len(got), got)
	}
	for i := range want {
		got[i].Stack = ""
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("goroutine %d: %+v; want %+v", i, got[i], want[i])
		}
	}
	if g := got[1]; !g.in([]string{"quarry/internal/app."}) || g.in([]string{"os/"}) {
		t.Errorf("prefix matching of %+v", g)
	}
}

func TestParseStat(t *testing.T) {
	p, ok := parseStat(42, "42 (git (weird) name) S 7 42 42 0 -1 4194304 ...")
	if !ok || p.PID != 42 || p.PPID != 7 || p.Comm != "git (weird) name" || p.State != "S" {
		t.Errorf("parsed %+v, %v", p, ok)
	}
	if _, ok := parseStat(1, "garbage"); ok {
		t.Error("garbage parsed")
	}
}

func TestProcess_isGit(t *testing.T) {
	for _, c := range []struct {
		p    Process
		want bool
	}{
		{Process{Comm: "git", Cmdline: "git cat-file --batch"}, true},
		{Process{Comm: "git-http-backen", Exe: "/usr/lib/git-core/git-http-backend"}, true},
		{Process{Comm: "3", Exe: "/usr/bin/git"}, true},
		{Process{Comm: "gittest.test", Exe: "/tmp/go-build/gittest.test", Cmdline: "/tmp/gittest.test -test.v"}, false},
		{Process{Comm: "sh", Exe: "/bin/dash", Cmdline: "sh -c git push"}, false},
	} {
		if got := c.p.isGit(); got != c.want {
			t.Errorf("%+v: isGit = %v", c.p, got)
		}
	}
}
