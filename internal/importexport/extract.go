package importexport

import (
	"archive/tar"
	"bufio"
	"compress/flate"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Limits bound what Extract accepts. Zero values take the defaults.
type Limits struct {
	MaxUnpacked int64 // total bytes of all files unpacked (default 10 GiB)
	MaxEntries  int   // entries of any type (default 100,000)
	MaxNameLen  int   // bytes of an entry name (default 1024)
}

const (
	maxUnpackedDefault = 10 << 30
	maxEntriesDefault  = 100_000
	maxNameLenDefault  = 1024

	// maxElemLen is the longest name element most file systems take.
	maxElemLen = 255
	// Tar metadata (headers, padding, PAX records, GNU long names) may
	// take metaBase bytes plus metaPerEntry bytes and twice the longest
	// name for each entry read so far.
	metaBase     = 4 << 20
	metaPerEntry = 8 << 10
	copyBufSize  = 32 << 10
)

func (l Limits) withDefaults() Limits {
	if l.MaxUnpacked <= 0 {
		l.MaxUnpacked = maxUnpackedDefault
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = maxEntriesDefault
	}
	if l.MaxNameLen <= 0 {
		l.MaxNameLen = maxNameLenDefault
	}
	return l
}

// Stats describe an extracted archive.
type Stats struct {
	Files    int   // regular files written
	Dirs     int   // directories created, listed in the archive or implied by a name
	Unpacked int64 // bytes of file content written
	Packed   int64 // compressed bytes read
}

// FormatError is a problem with an archive itself. Reason is a sentence
// fit to show the client that uploaded it.
type FormatError struct{ Reason string }

func (e *FormatError) Error() string { return e.Reason }

func formatErr(format string, args ...any) *FormatError {
	return &FormatError{Reason: fmt.Sprintf(format, args...)}
}

// Extract reads the gzip-compressed tar from r and writes its directories
// and regular files under dir (an existing, empty directory). It reads the
// whole stream, to the end of the gzip data (so its checksum is verified),
// before returning success. Any problem with the archive itself is a
// *FormatError (the package comment lists them); disk and context errors,
// and errors reading r, are returned as they are. On any error the caller
// removes dir; Extract itself never writes outside dir, and never creates a
// symlink, hard link or device.
func Extract(ctx context.Context, r io.Reader, dir string, lim Limits) (Stats, error) {
	lim = lim.withDefaults()
	x := &extractor{ctx: ctx, lim: lim, seen: map[string]kind{}}
	if err := ctx.Err(); err != nil {
		return x.stats, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return x.stats, err
	}
	defer root.Close()
	if err := checkEmpty(root, dir); err != nil {
		return x.stats, err
	}
	x.root = root
	err = x.run(&packedReader{r: r, x: x})
	return x.stats, err
}

func checkEmpty(root *os.Root, dir string) error {
	f, err := root.Open(".")
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if err != nil && err != io.EOF {
		return err
	}
	if len(names) > 0 {
		return fmt.Errorf("extract into %q: directory is not empty", dir)
	}
	return nil
}

type kind uint8

const (
	impliedDir kind = iota + 1 // created for a name below it
	listedDir                  // a directory entry of the archive
	file
)

type extractor struct {
	ctx   context.Context
	lim   Limits
	root  *os.Root
	seen  map[string]kind
	stats Stats

	entries  int
	inflated int64 // bytes read from the gzip stream
	counted  int64 // of which file content and trailing data
	// err, once set by a reader below the tar reader (context, source or
	// limit), wins over whatever error the gzip and tar readers make of it.
	err error
}

func (x *extractor) run(src io.Reader) error {
	br := bufio.NewReader(src)
	zr, err := gzip.NewReader(br)
	if err != nil {
		if err == io.EOF && x.err == nil {
			return formatErr("the archive is empty")
		}
		return x.classify(err, "the archive is not a gzip-compressed tar file")
	}
	zr.Multistream(false)
	in := &inflatedReader{zr: zr, br: br, x: x}
	tr := tar.NewReader(in)
	buf := make([]byte, copyBufSize)
	for {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil && !errors.Is(err, tar.ErrInsecurePath) {
			return x.classify(err, "the archive has a tar header that cannot be read")
		}
		x.entries++
		if x.entries > x.lim.MaxEntries {
			return formatErr("the archive has more than %d entries", x.lim.MaxEntries)
		}
		if err := x.entry(tr, hdr, buf); err != nil {
			return err
		}
	}
	// archive/tar takes a stream that stops between entries for a
	// complete one; a complete one ends with two zero blocks.
	if !in.endMarker() {
		return formatErr("the archive is truncated: its tar data stops before the end")
	}
	// Drain the gzip stream past the tar's end marker, so that its
	// checksum is verified; what is left counts as unpacked data.
	for {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		n, err := in.Read(buf)
		x.counted += int64(n)
		if x.counted > x.lim.MaxUnpacked {
			return tooBig(x.lim)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return x.classify(err, "the archive is corrupt")
		}
	}
	return nil
}

func tooBig(lim Limits) error {
	return formatErr("the archive unpacks to more than %s", size(lim.MaxUnpacked))
}

// classify turns an error from the gzip or tar reader into the error
// Extract returns; fallback is the reason for a format error of no
// better-known kind.
func (x *extractor) classify(err error, fallback string) error {
	var corrupt flate.CorruptInputError
	switch {
	case x.err != nil:
		return x.err
	case errors.Is(err, io.ErrUnexpectedEOF):
		return formatErr("the archive is truncated")
	case errors.Is(err, gzip.ErrChecksum):
		return formatErr("the archive is corrupt: its gzip checksum does not match its content")
	case errors.Is(err, gzip.ErrHeader):
		return formatErr("the archive is not a gzip-compressed tar file")
	case errors.As(err, &corrupt):
		return formatErr("the archive is corrupt: its compressed data is damaged")
	}
	return &FormatError{Reason: fallback}
}

func (x *extractor) entry(tr *tar.Reader, hdr *tar.Header, buf []byte) error {
	switch hdr.Typeflag {
	case tar.TypeXGlobalHeader:
		return nil // PAX defaults for the entries that follow; archive/tar applies them
	case tar.TypeSymlink:
		return formatErr("the archive has a symbolic link, %s; only files and directories are allowed", quote(hdr.Name))
	case tar.TypeLink:
		return formatErr("the archive has a hard link, %s; only files and directories are allowed", quote(hdr.Name))
	case tar.TypeChar, tar.TypeBlock:
		return formatErr("the archive has a device, %s; only files and directories are allowed", quote(hdr.Name))
	case tar.TypeFifo:
		return formatErr("the archive has a FIFO, %s; only files and directories are allowed", quote(hdr.Name))
	case tar.TypeReg, tar.TypeDir:
	default:
		return formatErr("the archive has an entry of unsupported type %q, %s; only files and directories are allowed", hdr.Typeflag, quote(hdr.Name))
	}
	name, err := entryName(hdr.Name, x.lim.MaxNameLen)
	if err != nil {
		return formatErr("the archive has an entry name %s that %s", quote(hdr.Name), err)
	}
	if hdr.Typeflag == tar.TypeDir {
		if name == "." {
			return nil // "./", the directory itself
		}
		return x.dir(name)
	}
	if name == "." {
		return formatErr("the archive has a file with an empty name")
	}
	return x.file(tr, name, hdr.Size, buf)
}

func (x *extractor) dir(name string) error {
	switch x.seen[name] {
	case listedDir:
		return formatErr("the archive lists the directory %s twice", quote(name))
	case file:
		return formatErr("the archive has both a file and a directory named %s", quote(name))
	case impliedDir:
		x.seen[name] = listedDir
		return nil
	}
	if err := x.parents(name); err != nil {
		return err
	}
	return x.mkdir(name, listedDir)
}

func (x *extractor) mkdir(name string, k kind) error {
	x.stats.Dirs++
	if x.stats.Dirs > x.lim.MaxEntries {
		return formatErr("the archive has more than %d directories", x.lim.MaxEntries)
	}
	if err := x.root.Mkdir(name, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return formatErr("the archive has two entries named %s (perhaps differing only in case)", quote(name))
		}
		return err
	}
	x.seen[name] = k
	return nil
}

// parents creates the directories above name that do not exist yet.
func (x *extractor) parents(name string) error {
	var missing []string
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		k := x.seen[p]
		if k == file {
			return formatErr("the archive has an entry %s below the file %s", quote(name), quote(p))
		}
		if k != 0 {
			break
		}
		missing = append(missing, p)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := x.mkdir(missing[i], impliedDir); err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) file(tr *tar.Reader, name string, size int64, buf []byte) error {
	switch x.seen[name] {
	case file:
		return formatErr("the archive has two files named %s", quote(name))
	case listedDir, impliedDir:
		return formatErr("the archive has both a file and a directory named %s", quote(name))
	}
	if size > x.lim.MaxUnpacked-x.counted {
		return tooBig(x.lim)
	}
	if err := x.parents(name); err != nil {
		return err
	}
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return formatErr("the archive has two entries named %s (perhaps differing only in case)", quote(name))
		}
		return err
	}
	x.seen[name] = file
	x.stats.Files++
	err = x.copy(f, tr, buf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// copy writes the current entry's content to f, counting it against
// MaxUnpacked as it goes and checking the context between chunks.
func (x *extractor) copy(f *os.File, tr *tar.Reader, buf []byte) error {
	for {
		if err := x.ctx.Err(); err != nil {
			return err
		}
		n, rerr := tr.Read(buf)
		if n > 0 {
			x.counted += int64(n)
			if x.counted > x.lim.MaxUnpacked {
				return tooBig(x.lim)
			}
			if _, err := f.Write(buf[:n]); err != nil {
				return err
			}
			x.stats.Unpacked += int64(n)
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return x.classify(rerr, "the archive is corrupt")
		}
	}
}

// packedReader counts the compressed bytes read and keeps the first error
// of the source, which Extract returns as it is.
type packedReader struct {
	r io.Reader
	x *extractor
}

func (p *packedReader) Read(b []byte) (int, error) {
	if p.x.err != nil {
		return 0, p.x.err
	}
	n, err := p.r.Read(b)
	p.x.stats.Packed += int64(n)
	if err != nil && err != io.EOF {
		p.x.err = err
	}
	return n, err
}

// inflatedReader sits between the gzip and the tar reader. It reads the
// gzip members one after the other, refusing data after them that is not
// gzip; it honours the context and bounds the tar metadata, which
// archive/tar reads without returning control (a chain of PAX headers,
// say); and it keeps the last bytes read, to look for the tar end marker.
type inflatedReader struct {
	zr    *gzip.Reader
	br    *bufio.Reader
	x     *extractor
	tail  [2 * 512]byte
	tailN int
}

func (i *inflatedReader) Read(b []byte) (int, error) {
	x := i.x
	for {
		if x.err != nil {
			return 0, x.err
		}
		if err := x.ctx.Err(); err != nil {
			x.err = err
			return 0, err
		}
		n, err := i.zr.Read(b)
		x.inflated += int64(n)
		i.keepTail(b[:n])
		allowance := int64(metaBase) + int64(x.entries)*int64(metaPerEntry+2*x.lim.MaxNameLen) + int64(len(b))
		if x.inflated-x.counted > allowance {
			x.err = formatErr("the archive has more tar metadata than its %d entries need", x.entries)
			return n, x.err
		}
		if err != io.EOF {
			return n, err
		}
		// The end of a gzip member: the end of the data, or another member.
		if _, perr := i.br.Peek(1); perr != nil {
			if perr == io.EOF {
				return n, io.EOF
			}
			return n, perr
		}
		if rerr := i.zr.Reset(i.br); rerr != nil {
			if x.err == nil {
				x.err = formatErr("the archive has data after its gzip stream that is not gzip")
			}
			return n, x.err
		}
		i.zr.Multistream(false)
		if n > 0 {
			return n, nil
		}
	}
}

func (i *inflatedReader) keepTail(p []byte) {
	if len(p) >= len(i.tail) {
		i.tailN = copy(i.tail[:], p[len(p)-len(i.tail):])
		return
	}
	keep := min(i.tailN, len(i.tail)-len(p))
	copy(i.tail[:keep], i.tail[i.tailN-keep:i.tailN])
	i.tailN = keep + copy(i.tail[keep:], p)
}

// endMarker reports whether the last bytes read were the two zero blocks
// that end a tar stream.
func (i *inflatedReader) endMarker() bool {
	if i.tailN < len(i.tail) {
		return false
	}
	for _, c := range i.tail {
		if c != 0 {
			return false
		}
	}
	return true
}

// entryName checks an entry name from an archive and returns it cleaned
// ("." for the directory itself), or says what is wrong with it.
func entryName(name string, maxLen int) (string, error) {
	switch {
	case name == "":
		return "", errors.New("is empty")
	case len(name) > maxLen:
		return "", fmt.Errorf("is longer than %d bytes", maxLen)
	case strings.IndexByte(name, 0) >= 0:
		return "", errors.New("contains a NUL byte")
	case strings.IndexByte(name, '\\') >= 0:
		return "", errors.New("contains a backslash")
	case name[0] == '/':
		return "", errors.New("is absolute")
	case len(name) >= 2 && name[1] == ':' && isLetter(name[0]):
		return "", errors.New("starts with a drive letter")
	}
	for _, elem := range strings.Split(name, "/") {
		if elem == ".." {
			return "", errors.New("contains a \"..\" element")
		}
		if len(elem) > maxElemLen {
			return "", fmt.Errorf("has an element longer than %d bytes", maxElemLen)
		}
	}
	return path.Clean(name), nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// quote quotes a name from an archive for a message, shortened if long.
func quote(name string) string {
	const max = 100
	if len(name) > max {
		return fmt.Sprintf("%q…", name[:max])
	}
	return fmt.Sprintf("%q", name)
}

// size writes n bytes in the largest binary unit that divides it.
func size(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
