package leaktest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// adoptOrphans makes this process the child subreaper of its descendants
// (prctl PR_SET_CHILD_SUBREAPER): a process whose parent dies is
// re-parented here instead of to init, so it still counts as started by
// the tests. It is best effort.
func adoptOrphans() {
	const prSetChildSubreaper = 36
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// GitProcesses returns the live git processes descending from this
// process: those whose command name, executable or first argument is git
// or git-<something>. Zombies are left out.
func GitProcesses() ([]Process, error) {
	return gitDescendants(func(p Process) bool { return p.State != "Z" && p.State != "X" })
}

// GitProcessesIn returns the git processes descending from this process
// that work in root or below, and every git zombie descending from it
// (ended, never waited for) wherever it worked: what a test of warm
// processes counts.
func GitProcessesIn(root string) ([]Process, error) {
	return gitDescendants(func(p Process) bool {
		if p.State == "Z" {
			return true
		}
		cwd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", p.PID))
		return err == nil && (cwd == root || strings.HasPrefix(cwd, root+string(filepath.Separator)))
	})
}

// gitDescendants lists the git processes below this one that keep says
// count.
func gitDescendants(keep func(Process) bool) ([]Process, error) {
	all, err := processes()
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, p := range all {
		children[p.PPID] = append(children[p.PPID], p.PID)
	}
	var out []Process
	seen := map[int]bool{}
	queue := append([]int(nil), children[os.Getpid()]...)
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, children[pid]...)
		p := all[pid]
		if p.State == "X" {
			continue
		}
		p.Exe, _ = os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		if cmd, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
			p.Cmdline = strings.TrimSpace(string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
		if p.isGit() && keep(p) {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].PID < out[j].PID })
	return out, nil
}

// processes reads every process's /proc/<pid>/stat.
func processes() (map[int]Process, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	all := map[int]Process{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if p, ok := parseStat(pid, string(b)); ok {
			all[pid] = p
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no processes in /proc")
	}
	return all, nil
}

// parseStat reads "pid (comm) state ppid …"; comm may hold spaces and
// parentheses, so it ends at the last ")".
func parseStat(pid int, s string) (Process, bool) {
	i, j := strings.Index(s, "("), strings.LastIndex(s, ")")
	if i < 0 || j < i {
		return Process{}, false
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 2 {
		return Process{}, false
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return Process{}, false
	}
	return Process{PID: pid, PPID: ppid, Comm: s[i+1 : j], State: f[0]}, true
}
