package runner

import (
	"archive/zip"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// cleanPattern makes an artifacts path pattern relative to the build
// folder dir: slashes, no "." or ".." steps, no leading "./". An absolute
// pattern must lie inside dir. A pattern leaving dir is refused. "." (the
// whole folder) comes back as "".
func cleanPattern(p, dir string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return "", err
		}
		p = rel
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") || path.IsAbs(c) {
		return "", fmt.Errorf("artifact path is not a subpath of project directory: %s", dir)
	}
	if c == "." {
		return "", nil
	}
	return c, nil
}

func segments(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

// matchSegments reports whether the path name (its segments) matches the
// pattern's: each segment by path.Match ("*" never crosses a "/"), and a
// segment "**" matches any number of segments, none included.
func matchSegments(pattern, name []string) bool {
	for len(pattern) > 0 {
		if pattern[0] == "**" {
			rest := pattern[1:]
			for len(rest) > 0 && rest[0] == "**" {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegments(rest, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, _ := path.Match(pattern[0], name[0]); !ok {
			return false
		}
		pattern, name = pattern[1:], name[1:]
	}
	return len(name) == 0
}

// mayMatchBelow reports whether a path inside the folder dir could match
// pattern (the walk skips folders that cannot).
func mayMatchBelow(pattern, dir []string) bool {
	for i, d := range dir {
		if i >= len(pattern) {
			return false
		}
		if pattern[i] == "**" {
			return true
		}
		if ok, _ := path.Match(pattern[i], d); !ok {
			return false
		}
	}
	return len(pattern) > len(dir)
}

// selection is what an artifacts entry selects in a build folder.
type selection struct {
	// Names are slash paths relative to the folder, sorted: files,
	// symbolic links and folders (a selected folder brings everything
	// under it).
	Names []string
	// Found counts, per path pattern, what it matched (before exclude).
	Found []int
	// Untracked counts the untracked files selected (after exclude).
	Untracked int
	// Excluded counts, per exclude pattern, what it took out.
	Excluded []int
	// Warnings are patterns refused (outside the folder).
	Warnings []string
}

// selectArtifacts applies an artifacts entry to the tree of fsys (the
// build folder, opened through an os.Root so no symbolic link leads out of
// it): what its path patterns match, and the untracked files git listed
// (slash paths from the folder's top; nil when the entry does not ask for
// them), less what its exclude patterns match — as gitlab-runner's
// archiver combines paths, untracked and exclude. dir is the folder's
// path, for absolute patterns and messages.
func selectArtifacts(fsys fs.FS, dir string, paths, untracked, exclude []string) selection {
	var sel selection
	chosen := map[string]bool{}
	fromGit := map[string]bool{}
	for _, name := range untracked {
		c := path.Clean(name)
		if c == "." || !fs.ValidPath(c) {
			continue
		}
		if _, err := fs.Lstat(fsys, c); err != nil {
			continue // gone since git listed it
		}
		chosen[c], fromGit[c] = true, true
	}
	for _, p := range paths {
		n := 0
		pat, err := cleanPattern(p, dir)
		if err != nil {
			sel.Warnings = append(sel.Warnings, fmt.Sprintf("%s: %v", p, err))
			sel.Found = append(sel.Found, 0)
			continue
		}
		walkPattern(fsys, segments(pat), func(name string) {
			chosen[name] = true
			n++
		})
		sel.Found = append(sel.Found, n)
	}
	var excl [][]string
	for _, p := range exclude {
		pat, err := cleanPattern(p, dir)
		if err != nil {
			sel.Warnings = append(sel.Warnings, fmt.Sprintf("%s: %v", p, err))
			pat = "\x00" // matches nothing
		}
		excl = append(excl, segments(pat))
	}
	sel.Excluded = make([]int, len(excl))
	for name := range chosen {
		segs := segments(name)
		if i := excludedBy(excl, segs); i >= 0 {
			sel.Excluded[i]++
			continue
		}
		if info, err := fs.Lstat(fsys, name); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			// The next job could not unpack it (extractZip refuses it).
			if target, err := fs.ReadLink(fsys, name); err != nil || !linkInside(path.Dir(name), target) {
				sel.Warnings = append(sel.Warnings, fmt.Sprintf("%s: symbolic link to %q leads out of the project directory; left out", name, target))
				continue
			}
		}
		sel.Names = append(sel.Names, name)
		if fromGit[name] {
			sel.Untracked++
		}
	}
	sort.Strings(sel.Names)
	return sel
}

// parseUntracked reads the output of git ls-files --others -z: one path
// per NUL-terminated entry; a nested repository comes as its folder with
// a trailing slash, kept as the folder.
func parseUntracked(out []byte) []string {
	var names []string
	for _, e := range strings.Split(string(out), "\x00") {
		if e = strings.TrimSuffix(e, "/"); e != "" {
			names = append(names, e)
		}
	}
	return names
}

// excludedBy is the index of the first exclude pattern matching name or
// one of its folders, or -1.
func excludedBy(excl [][]string, name []string) int {
	for i, pat := range excl {
		if len(pat) == 0 {
			return i // "." excludes everything
		}
		for k := 1; k <= len(name); k++ {
			if matchSegments(pat, name[:k]) {
				return i
			}
		}
	}
	return -1
}

// walkPattern calls add for every path of fsys the pattern selects: what
// matches, and everything under a matching folder. The walk starts at the
// pattern's literal prefix and skips folders that cannot hold a match.
func walkPattern(fsys fs.FS, pat []string, add func(string)) {
	k := 0
	for k < len(pat) && !hasMeta(pat[k]) {
		k++
	}
	base := "."
	if k > 0 {
		base = path.Join(pat[:k]...)
	}
	info, err := fs.Stat(fsys, base)
	if err != nil {
		return
	}
	literal := k == len(pat)
	if literal && base != "." {
		add(base)
		if !info.IsDir() {
			return
		}
	}
	inside := "" // a matched folder whose subtree the walk is in
	fs.WalkDir(fsys, base, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." || p == base && literal {
			return nil
		}
		if literal || inside != "" && strings.HasPrefix(p, inside+"/") {
			add(p)
			return nil
		}
		inside = ""
		segs := segments(p)
		if matchSegments(pat, segs) {
			add(p)
			if d.IsDir() {
				inside = p
			}
			return nil
		}
		if d.IsDir() && !mayMatchBelow(pat, segs) {
			return fs.SkipDir
		}
		return nil
	})
}

// writeZip writes the selected names of root as a zip archive: folders,
// regular files (deflated) and symbolic links (stored with their target as
// content, as gitlab-runner archives them).
func writeZip(w io.Writer, root *os.Root, names []string) error {
	parents := map[string]bool{}
	for _, n := range names {
		for d := path.Dir(n); d != "."; d = path.Dir(d) {
			parents[d] = true
		}
	}
	zw := zip.NewWriter(w)
	for _, n := range names {
		info, err := root.Lstat(n)
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink != 0 && parents[n] {
			// A link to a folder that the selection walked into: archive
			// it as the folder it stands for.
			if info, err = root.Stat(n); err != nil {
				return err
			}
		}
		hdr, err := zip.FileInfoHeader(info)
		if err != nil {
			return err
		}
		hdr.Name = n
		switch {
		case info.IsDir():
			hdr.Name += "/"
			hdr.Method = zip.Store
			if _, err := zw.CreateHeader(hdr); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := root.Readlink(n)
			if err != nil {
				return err
			}
			hdr.Method = zip.Store
			fw, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			if _, err := io.WriteString(fw, target); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			hdr.Method = zip.Deflate
			fw, err := zw.CreateHeader(hdr)
			if err != nil {
				return err
			}
			if err := copyFile(fw, root, n); err != nil {
				return err
			}
		}
	}
	return zw.Close()
}

func copyFile(w io.Writer, root *os.Root, name string) error {
	f, err := root.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(w, f)
	return err
}

// regularFiles are the regular files among the selected names (a link to
// a file inside the folder counts as the file).
func regularFiles(root *os.Root, names []string) []string {
	var out []string
	for _, n := range names {
		if info, err := root.Stat(n); err == nil && info.Mode().IsRegular() {
			out = append(out, n)
		}
	}
	return out
}

// writeGzipMembers writes each file as its own gzip member, one after the
// other: the upload format of report artifacts (junit, …), where the
// server reads each member as a document.
func writeGzipMembers(w io.Writer, root *os.Root, files []string) error {
	for _, n := range files {
		gz := gzip.NewWriter(w)
		if isASCII(n) {
			gz.Name = n
		}
		if err := copyFile(gz, root, n); err != nil {
			return err
		}
		if err := gz.Close(); err != nil {
			return err
		}
	}
	return nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// maxLinkTarget bounds the content of a symbolic link entry.
const maxLinkTarget = 4096

// extractZip writes the entries of the zip archive in r (size bytes long)
// under dir, replacing what is there. Every write goes through an os.Root
// of dir, so nothing lands outside it, whatever links the folder holds.
// An entry whose name leaves dir (absolute, "..") or a symbolic link
// pointing outside dir (absolute target, one climbing out, one resolving
// out through other links) is refused: extraction stops with an error.
// Folders, regular files and links are written; other entry types are
// skipped. It returns how many entries it wrote.
func extractZip(r io.ReaderAt, size int64, dir string) (int, error) {
	zr, err := zip.NewReader(r, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return 0, fmt.Errorf("read archive: %w", err)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return 0, err
	}
	root, err := os.OpenRoot(realDir)
	if err != nil {
		return 0, err
	}
	defer root.Close()
	n := 0
	for _, f := range zr.File {
		name, err := entryName(f.Name)
		if err != nil {
			return n, err
		}
		if name == "." {
			continue
		}
		mode := f.Mode()
		switch {
		case mode.IsDir():
			if err := root.MkdirAll(name, 0o755); err != nil {
				return n, fmt.Errorf("extract %q: %w", name, err)
			}
		case mode&fs.ModeSymlink != 0:
			if err := extractLink(root, realDir, name, f); err != nil {
				return n, err
			}
		case mode.IsRegular():
			if err := extractFile(root, name, f); err != nil {
				return n, err
			}
		default:
			continue
		}
		n++
	}
	return n, nil
}

// entryName is an entry's name made a clean relative slash path ("\" read
// as a separator), or an error when it would leave the folder.
func entryName(name string) (string, error) {
	n := strings.ReplaceAll(name, `\`, "/")
	if n == "" || strings.ContainsRune(n, 0) || path.IsAbs(n) {
		return "", fmt.Errorf("archive entry %q: not a relative path", name)
	}
	c := path.Clean(n)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", fmt.Errorf("archive entry %q: outside the build folder", name)
	}
	return c, nil
}

// linkInside reports whether a link in the folder dir (a clean relative
// slash path, "." for the top) with target stays inside the top folder,
// judged by the names alone.
func linkInside(dir, target string) bool {
	if target == "" || path.IsAbs(target) {
		return false
	}
	t := path.Join(dir, target)
	return t != ".." && !strings.HasPrefix(t, "../")
}

// clearPlace removes what stands at name unless it is a folder, so a new
// file or link replaces it (never writing through an old link).
func clearPlace(root *os.Root, name string) error {
	info, err := root.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if info.IsDir() {
		return root.RemoveAll(name)
	}
	return root.Remove(name)
}

func extractFile(root *os.Root, name string, f *zip.File) error {
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	if err := clearPlace(root, name); err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	perm := f.Mode().Perm() | 0o600
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	defer rc.Close()
	w, err := root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	if _, err := io.Copy(w, rc); err != nil {
		w.Close()
		return fmt.Errorf("extract %q: %w", name, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	return nil
}

func extractLink(root *os.Root, realDir, name string, f *zip.File) error {
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	b, err := io.ReadAll(io.LimitReader(rc, maxLinkTarget+1))
	rc.Close()
	if err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	target := string(b)
	if len(b) > maxLinkTarget || target == "" || strings.ContainsRune(target, 0) || path.IsAbs(target) {
		return fmt.Errorf("archive entry %q: link target %q is not a relative path", name, target)
	}
	if err := root.MkdirAll(path.Dir(name), 0o755); err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	// Where the link really sits (its folder may be reached through
	// links), and where its target lands from there.
	parent, err := filepath.EvalSymlinks(filepath.Join(realDir, filepath.FromSlash(path.Dir(name))))
	if err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	rel, err := filepath.Rel(realDir, parent)
	if err != nil || !filepath.IsLocal(rel) && rel != "." {
		return fmt.Errorf("archive entry %q: outside the build folder", name)
	}
	if !linkInside(filepath.ToSlash(rel), target) {
		return fmt.Errorf("archive entry %q: link target %q is outside the build folder", name, target)
	}
	if err := clearPlace(root, name); err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	if err := root.Symlink(target, name); err != nil {
		return fmt.Errorf("extract %q: %w", name, err)
	}
	// Through links already there the target may still lead out: the
	// root refuses to follow such a link (a missing target is fine).
	if _, err := root.Stat(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		root.Remove(name)
		return fmt.Errorf("archive entry %q: link target %q is outside the build folder", name, target)
	}
	return nil
}
