package memtrim

import (
	"bufio"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Executable gives back the pages of the running executable that only
// its start used: package initialisation and the server's start run
// code and read data all over a large binary once (the chroma lexers'
// definitions, templates, migrations, regular expressions), and every
// page fault on a file mapping maps the 64 KiB around it as well, so
// most of the executable stays resident though the server never
// touches it again. Executable drops the mappings of its read-only
// segments (MADV_DONTNEED): the pages the server goes on to use come
// back on first use from the page cache, a minor fault without disk
// reads. Only mappings that are not writable and hold no private copy
// of a page (a segment the loader relocated holds some) are dropped,
// so nothing the process wrote is lost. It returns the bytes of the
// mappings dropped.
func Executable() (int64, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, err
	}
	ms, err := readOnlyMappings(f, exe)
	f.Close()
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range ms {
		if err := madvise(m.start, m.end-m.start, syscall.MADV_DONTNEED); err != nil {
			return total, err
		}
		total += int64(m.end - m.start)
	}
	return total, nil
}

type mapping struct{ start, end uint64 }

// readOnlyMappings reads smaps for path's mappings that are not
// writable and have no anonymous (copied-on-write) pages.
func readOnlyMappings(r io.Reader, path string) ([]mapping, error) {
	var out []mapping
	var cur mapping
	candidate := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && len(fields) >= 5 {
			// A mapping's header: start-end perms offset dev inode [path].
			if candidate {
				out = append(out, cur)
			}
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			candidate = err1 == nil && err2 == nil && end > start && len(fields) >= 6 &&
				fields[5] == path && !strings.Contains(fields[1], "w")
			cur = mapping{start, end}
			continue
		}
		if candidate && fields[0] == "Anonymous:" && (len(fields) < 2 || fields[1] != "0") {
			candidate = false
		}
	}
	if candidate {
		out = append(out, cur)
	}
	return out, sc.Err()
}

func madvise(addr, n uint64, advice int) error {
	_, _, e := syscall.Syscall(syscall.SYS_MADVISE, uintptr(addr), uintptr(n), uintptr(advice))
	if e != 0 {
		return e
	}
	return nil
}
