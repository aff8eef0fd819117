package leaktest

import (
	"path/filepath"
	"strings"
)

// Process is a process of the machine as /proc shows it.
type Process struct {
	PID     int
	PPID    int
	Comm    string // the kernel's command name, cut to 15 bytes
	State   string // "R", "S", "D", "Z", …
	Exe     string // the executable, "" when unreadable
	Cmdline string // the arguments joined by spaces
}

// isGit reports git itself or one of its programs (git-http-backend,
// git-upload-pack, git-remote-http, …).
func (p *Process) isGit() bool {
	arg0, _, _ := strings.Cut(p.Cmdline, " ")
	for _, name := range []string{p.Comm, filepath.Base(p.Exe), filepath.Base(arg0)} {
		if name == "git" || strings.HasPrefix(name, "git-") {
			return true
		}
	}
	return false
}
