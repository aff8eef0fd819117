package importexport

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// ent is an entry for tarGz; typ defaults to a regular file.
type ent struct {
	name, body, link string
	typ              byte
	format           tar.Format
	pax              map[string]string
}

// tarBytes writes entries as an uncompressed tar stream.
func tarBytes(t testing.TB, ents ...ent) []byte {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range ents {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		hdr := &tar.Header{Typeflag: typ, Name: e.name, Linkname: e.link, Mode: 0o644,
			ModTime: time.Unix(1700000000, 0), Format: e.format, PAXRecords: e.pax}
		if typ == tar.TypeReg {
			hdr.Size = int64(len(e.body))
		}
		if typ == tar.TypeXGlobalHeader {
			hdr = &tar.Header{Typeflag: typ, PAXRecords: e.pax}
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("write header %q: %v", e.name, err)
		}
		if _, err := io.WriteString(tw, e.body); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gz(t testing.TB, raw []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func tarGz(t testing.TB, ents ...ent) []byte { return gz(t, tarBytes(t, ents...)) }

// rawHeader is a hand-made ustar header block, for what tar.Writer refuses
// to write.
func rawHeader(name string, typ byte, size int) []byte {
	b := make([]byte, 512)
	copy(b[0:100], name)
	copy(b[100:108], "0000644\x00")
	copy(b[108:116], "0000000\x00")
	copy(b[116:124], "0000000\x00")
	copy(b[124:136], fmt.Sprintf("%011o\x00", size))
	copy(b[136:148], fmt.Sprintf("%011o\x00", 1700000000))
	b[156] = typ
	copy(b[257:263], "ustar\x00")
	copy(b[263:265], "00")
	copy(b[148:156], "        ")
	sum := 0
	for _, c := range b {
		sum += int(c)
	}
	copy(b[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return b
}

// rawTar joins blocks (each padded to 512 bytes) and the end marker.
func rawTar(blocks ...[]byte) []byte {
	var b bytes.Buffer
	for _, blk := range blocks {
		b.Write(blk)
		if pad := len(blk) % 512; pad != 0 {
			b.Write(make([]byte, 512-pad))
		}
	}
	b.Write(make([]byte, 1024))
	return b.Bytes()
}

// extractDir makes parent/out and returns both.
func extractDir(t testing.TB) (parent, dir string) {
	parent = t.TempDir()
	dir = filepath.Join(parent, "out")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return parent, dir
}

// checkConfined fails unless parent holds only out, and out only
// directories and regular files; it returns the bytes of files in out.
func checkConfined(t testing.TB, parent string) int64 {
	t.Helper()
	des, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(des) != 1 || des[0].Name() != "out" {
		var names []string
		for _, d := range des {
			names = append(names, d.Name())
		}
		t.Fatalf("parent holds %v; want only out", names)
	}
	var total int64
	err = filepath.WalkDir(filepath.Join(parent, "out"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() && !d.IsDir() {
			t.Errorf("%s has type %v", p, d.Type())
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			total += fi.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return total
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." {
				got[rel+"/"] = ""
			}
			return nil
		}
		b, err := os.ReadFile(p)
		got[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestWriterExtract_roundTrip(t *testing.T) {
	big := make([]byte, 300<<10)
	rand.New(rand.NewSource(1)).Read(big)
	onDisk := filepath.Join(t.TempDir(), "upload.bin")
	if err := os.WriteFile(onDisk, []byte("from disk"), 0o600); err != nil {
		t.Fatal(err)
	}

	var archive bytes.Buffer
	w := NewWriter(&archive)
	w.SetTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	steps := []error{
		w.Bytes("VERSION", []byte("0.2.4")),
		w.Bytes("GITLAB_VERSION", []byte("17.0.0")),
		w.Bytes("tree/groups/_all.ndjson", []byte("{\"id\":1}\n{\"id\":2}\n")),
		w.Bytes("tree/groups/1/labels.ndjson", nil),
		w.File("tree/groups/1/big.bin", int64(len(big)), bytes.NewReader(big)),
		w.FromDisk("uploads/upload.bin", onDisk),
		w.Close(),
	}
	for i, err := range steps {
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}

	parent, dir := extractDir(t)
	st, err := Extract(context.Background(), bytes.NewReader(archive.Bytes()), dir, Limits{})
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	checkConfined(t, parent)
	want := map[string]string{
		"VERSION":                     "0.2.4",
		"GITLAB_VERSION":              "17.0.0",
		"tree/":                       "",
		"tree/groups/":                "",
		"tree/groups/1/":              "",
		"tree/groups/_all.ndjson":     "{\"id\":1}\n{\"id\":2}\n",
		"tree/groups/1/labels.ndjson": "",
		"tree/groups/1/big.bin":       string(big),
		"uploads/":                    "",
		"uploads/upload.bin":          "from disk",
	}
	got := readTree(t, dir)
	if len(got) != len(want) {
		t.Errorf("got %d paths; want %d", len(got), len(want))
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s: present %v, %d bytes; want %d bytes", k, ok, len(g), len(v))
		}
	}
	var unpacked int64
	for _, v := range want {
		unpacked += int64(len(v))
	}
	wantStats := Stats{Files: 6, Dirs: 4, Unpacked: unpacked, Packed: int64(archive.Len())}
	if st != wantStats {
		t.Errorf("stats %+v; want %+v", st, wantStats)
	}

	// The entries carry the writer's time and mode 0644.
	zr, _ := gzip.NewReader(bytes.NewReader(archive.Bytes()))
	hdr, err := tar.NewReader(zr).Next()
	if err != nil {
		t.Fatal(err)
	}
	if !hdr.ModTime.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) || hdr.Mode != 0o644 {
		t.Errorf("header time %v mode %o", hdr.ModTime, hdr.Mode)
	}
}

func TestWriter_errors(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(w *Writer) error
	}{
		{"absolute", func(w *Writer) error { return w.Bytes("/etc/passwd", nil) }},
		{"dotdot", func(w *Writer) error { return w.Bytes("a/../../b", nil) }},
		{"unclean", func(w *Writer) error { return w.Bytes("./VERSION", nil) }},
		{"trailing slash", func(w *Writer) error { return w.Bytes("tree/", nil) }},
		{"empty", func(w *Writer) error { return w.Bytes("", nil) }},
		{"backslash", func(w *Writer) error { return w.Bytes(`a\b`, nil) }},
		{"short", func(w *Writer) error { return w.File("a", 10, strings.NewReader("abc")) }},
		{"long", func(w *Writer) error { return w.File("a", 2, strings.NewReader("abc")) }},
		{"missing file", func(w *Writer) error { return w.FromDisk("a", filepath.Join(t.TempDir(), "nope")) }},
		{"directory", func(w *Writer) error { return w.FromDisk("a", t.TempDir()) }},
		{"after close", func(w *Writer) error { w.Close(); return w.Bytes("a", nil) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := NewWriter(io.Discard)
			if err := c.do(w); err == nil {
				t.Fatal("no error")
			}
		})
	}

	// A failed entry spoils the archive: later calls fail too.
	w := NewWriter(io.Discard)
	if err := w.File("a", 10, strings.NewReader("abc")); err == nil {
		t.Fatal("short file accepted")
	}
	if err := w.Bytes("b", []byte("x")); err == nil {
		t.Error("write after a failed entry accepted")
	}
	if err := w.Close(); err == nil {
		t.Error("close after a failed entry succeeded")
	}
}

func TestExtract_accepts(t *testing.T) {
	longName := "tree/" + strings.Repeat("d", 120) + "/" + strings.Repeat("f", 120) + ".ndjson"
	for _, c := range []struct {
		name    string
		archive func(t *testing.T) []byte
		want    map[string]string
	}{
		{"dot-slash names", func(t *testing.T) []byte {
			return tarGz(t, ent{name: "./", typ: tar.TypeDir}, ent{name: "./VERSION", body: "0.2.4"},
				ent{name: "./tree/", typ: tar.TypeDir}, ent{name: "./tree/a.ndjson", body: "{}"})
		}, map[string]string{"VERSION": "0.2.4", "tree/": "", "tree/a.ndjson": "{}"}},
		{"nested dirs, implied and listed", func(t *testing.T) []byte {
			return tarGz(t, ent{name: "a/b/c/d.txt", body: "d"}, ent{name: "a/b/", typ: tar.TypeDir},
				ent{name: "a/e/", typ: tar.TypeDir}, ent{name: "a//f.txt", body: "f"})
		}, map[string]string{"a/": "", "a/b/": "", "a/b/c/": "", "a/b/c/d.txt": "d", "a/e/": "", "a/f.txt": "f"}},
		{"PAX long name and global header", func(t *testing.T) []byte {
			return tarGz(t, ent{name: "pax_global_header", typ: tar.TypeXGlobalHeader, pax: map[string]string{"comment": "git"}},
				ent{name: longName, body: "long", format: tar.FormatPAX})
		}, map[string]string{"tree/": "", "tree/" + strings.Repeat("d", 120) + "/": "", longName: "long"}},
		{"GNU long name", func(t *testing.T) []byte {
			return tarGz(t, ent{name: longName, body: "gnu", format: tar.FormatGNU})
		}, map[string]string{"tree/": "", "tree/" + strings.Repeat("d", 120) + "/": "", longName: "gnu"}},
		{"old-style regular file", func(t *testing.T) []byte {
			return gz(t, rawTar(rawHeader("VERSION", '\x00', 5), []byte("0.2.4")))
		}, map[string]string{"VERSION": "0.2.4"}},
		{"zero padding after the tar", func(t *testing.T) []byte {
			return gz(t, append(tarBytes(t, ent{name: "VERSION", body: "1"}), make([]byte, 10240)...))
		}, map[string]string{"VERSION": "1"}},
		{"empty tar", func(t *testing.T) []byte { return tarGz(t) }, map[string]string{}},
		{"tar split across gzip members", func(t *testing.T) []byte {
			raw := tarBytes(t, ent{name: "VERSION", body: "0.2.4"}, ent{name: "tree/a", body: "a"})
			return append(gz(t, raw[:700]), gz(t, raw[700:])...)
		}, map[string]string{"VERSION": "0.2.4", "tree/": "", "tree/a": "a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent, dir := extractDir(t)
			if _, err := Extract(context.Background(), bytes.NewReader(c.archive(t)), dir, Limits{}); err != nil {
				t.Fatalf("Extract: %v", err)
			}
			checkConfined(t, parent)
			got := readTree(t, dir)
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %q; want %q", got, c.want)
			}
		})
	}
}

// refuse extracts archive and wants a *FormatError whose reason contains
// want, with nothing written outside the directory.
func refuse(t *testing.T, archive []byte, lim Limits, want string) (Stats, string) {
	t.Helper()
	parent, dir := extractDir(t)
	st, err := Extract(context.Background(), bytes.NewReader(archive), dir, lim)
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("Extract error %v (%T); want a *FormatError", err, err)
	}
	if !strings.Contains(fe.Reason, want) {
		t.Errorf("reason %q; want it to contain %q", fe.Reason, want)
	}
	checkConfined(t, parent)
	return st, dir
}

func TestExtract_refuses(t *testing.T) {
	good := tarGz(t, ent{name: "VERSION", body: "0.2.4"})
	badChecksum := append([]byte{}, good...)
	badChecksum[len(badChecksum)-8] ^= 0xff
	badHeader := rawHeader("VERSION", tar.TypeReg, 0)
	badHeader[148] = '7'
	badMethod := append([]byte{}, good...)
	badMethod[2] = 7
	badDeflate := append([]byte{}, good...)
	badDeflate[10] = 0xff // a reserved block type

	for _, c := range []struct {
		name    string
		archive []byte
		lim     Limits
		want    string
	}{
		{"empty input", nil, Limits{}, "the archive is empty"},
		{"plain text", []byte("this is not an archive at all"), Limits{}, "not a gzip-compressed tar"},
		{"plain tar", tarBytes(t, ent{name: "VERSION", body: "1"}), Limits{}, "not a gzip-compressed tar"},
		{"unknown gzip method", badMethod, Limits{}, "not a gzip-compressed tar"},
		{"damaged deflate data", badDeflate, Limits{}, "compressed data is damaged"},
		{"bad gzip checksum", badChecksum, Limits{}, "checksum does not match"},
		{"garbage after gzip", append(append([]byte{}, good...), "garbage"...), Limits{}, "after its gzip stream"},
		{"gzip of text", gz(t, bytes.Repeat([]byte("not a tar header "), 100)), Limits{}, "tar header that cannot be read"},
		{"bad tar header checksum", gz(t, rawTar(badHeader)), Limits{}, "tar header that cannot be read"},
		{"truncated tar", gz(t, tarBytes(t, ent{name: "VERSION", body: "0.2.4"})[:700]), Limits{}, "truncated"},
		{"tar without end marker", gz(t, tarBytes(t, ent{name: "VERSION", body: "0.2.4"})[:1024]), Limits{}, "truncated"},
		{"tar with one zero block", gz(t, tarBytes(t, ent{name: "VERSION", body: "0.2.4"})[:1536]), Limits{}, "truncated"},
		{"absolute name", tarGz(t, ent{name: "/etc/cron.d/x", body: "x"}), Limits{}, "is absolute"},
		{"drive letter", tarGz(t, ent{name: `C:\x`, body: "x"}), Limits{}, "backslash"},
		{"drive letter, slash", tarGz(t, ent{name: `C:/x`, body: "x"}), Limits{}, "drive letter"},
		{"backslash", tarGz(t, ent{name: `a\..\..\x`, body: "x"}), Limits{}, "backslash"},
		{"dotdot", tarGz(t, ent{name: "../x", body: "x"}), Limits{}, `".." element`},
		{"inner dotdot", tarGz(t, ent{name: "tree/../../x", body: "x"}), Limits{}, `".." element`},
		{"dotdot dir", tarGz(t, ent{name: "a/../", typ: tar.TypeDir}), Limits{}, `".." element`},
		{"empty name", gz(t, rawTar(rawHeader("", tar.TypeReg, 0))), Limits{}, "empty"},
		{"dot as a file", gz(t, rawTar(rawHeader("./", tar.TypeReg, 1), []byte("x"))), Limits{}, "empty name"},
		{"NUL in a PAX path", gz(t, rawTar(rawHeader("PaxHeaders/x", tar.TypeXHeader, 13), []byte("13 path=a\x00b\n"),
			rawHeader("x", tar.TypeReg, 0))), Limits{}, "tar header that cannot be read"},
		{"name too long", tarGz(t, ent{name: strings.Repeat("a/", 40) + "x", body: "x"}), Limits{MaxNameLen: 64}, "longer than 64 bytes"},
		{"element too long", tarGz(t, ent{name: strings.Repeat("a", 256), body: "x"}), Limits{}, "element longer than 255"},
		{"symlink", tarGz(t, ent{name: "VERSION", typ: tar.TypeSymlink, link: "/etc/passwd"}), Limits{}, "symbolic link"},
		{"hard link", tarGz(t, ent{name: "a", body: "x"}, ent{name: "VERSION", typ: tar.TypeLink, link: "a"}), Limits{}, "hard link"},
		{"char device", tarGz(t, ent{name: "null", typ: tar.TypeChar}), Limits{}, "a device"},
		{"block device", tarGz(t, ent{name: "sda", typ: tar.TypeBlock}), Limits{}, "a device"},
		{"fifo", tarGz(t, ent{name: "pipe", typ: tar.TypeFifo}), Limits{}, "a FIFO"},
		{"other type", gz(t, rawTar(rawHeader("x", 'V', 0))), Limits{}, "unsupported type"},
		{"duplicate file", tarGz(t, ent{name: "a", body: "1"}, ent{name: "a", body: "2"}), Limits{}, "two files"},
		{"duplicate after cleaning", tarGz(t, ent{name: "a/b", body: "1"}, ent{name: "./a//b", body: "2"}), Limits{}, "two files"},
		{"duplicate dir", tarGz(t, ent{name: "a/", typ: tar.TypeDir}, ent{name: "./a", typ: tar.TypeDir}), Limits{}, "directory \"a\" twice"},
		{"file where a dir was", tarGz(t, ent{name: "a/", typ: tar.TypeDir}, ent{name: "a", body: "x"}), Limits{}, "both a file and a directory"},
		{"file where an implied dir was", tarGz(t, ent{name: "a/b", body: "1"}, ent{name: "a", body: "x"}), Limits{}, "both a file and a directory"},
		{"dir where a file was", tarGz(t, ent{name: "a", body: "x"}, ent{name: "a/", typ: tar.TypeDir}), Limits{}, "both a file and a directory"},
		{"below a file", tarGz(t, ent{name: "a", body: "x"}, ent{name: "a/b/c", body: "y"}), Limits{}, "below the file"},
		{"too many entries", tarGz(t, ent{name: "a", body: "1"}, ent{name: "b", body: "2"}, ent{name: "c", body: "3"}), Limits{MaxEntries: 2}, "more than 2 entries"},
		{"too many directories", tarGz(t, ent{name: "a/b/c/d", body: "1"}), Limits{MaxEntries: 2}, "more than 2 directories"},
		{"too big a file", tarGz(t, ent{name: "a", body: strings.Repeat("x", 1025)}), Limits{MaxUnpacked: 1024}, "unpacks to more than 1 KiB"},
		{"too big together", tarGz(t, ent{name: "a", body: strings.Repeat("x", 600)}, ent{name: "b", body: strings.Repeat("x", 600)}), Limits{MaxUnpacked: 1024}, "unpacks to more than 1 KiB"},
	} {
		t.Run(c.name, func(t *testing.T) { refuse(t, c.archive, c.lim, c.want) })
	}
}

// TestExtract_bomb: 128 MiB of zeros in files of 256 KiB, about 130 KiB of
// gzip, against a 1 MiB limit: refused, and early.
func TestExtract_bomb(t *testing.T) {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	zeros := make([]byte, 256<<10)
	for i := range 512 {
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("f%03d", i), Size: int64(len(zeros)), Mode: 0o644}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	bomb := gz(t, raw.Bytes())
	t.Logf("%d bytes of gzip unpack to %d", len(bomb), raw.Len())

	const limit = 1 << 20
	st, dir := refuse(t, bomb, Limits{MaxUnpacked: limit}, "unpacks to more than 1 MiB")
	written := checkConfined(t, filepath.Dir(dir))
	if written > limit || st.Unpacked > limit {
		t.Errorf("wrote %d bytes (stats %d); want at most %d", written, st.Unpacked, limit)
	}
	if st.Packed > int64(len(bomb))/4 {
		t.Errorf("read %d of %d compressed bytes; want Extract to stop early", st.Packed, len(bomb))
	}
}

func TestExtract_trailingDataInGzip(t *testing.T) {
	tarball := tarBytes(t, ent{name: "VERSION", body: "0.2.4"})
	bomb := gz(t, append(tarball, make([]byte, 64<<20)...))
	st, _ := refuse(t, bomb, Limits{MaxUnpacked: 1 << 20}, "unpacks to more than 1 MiB")
	if st.Packed > int64(len(bomb))/4 {
		t.Errorf("read %d of %d compressed bytes; want Extract to stop early", st.Packed, len(bomb))
	}

	// Trailing data in a second gzip member counts too.
	two := append(gz(t, tarball), gz(t, make([]byte, 2<<20))...)
	refuse(t, two, Limits{MaxUnpacked: 1 << 20}, "unpacks to more than 1 MiB")
}

// paxRecord is one "length key=value\n" record of a PAX header.
func paxRecord(key, value string) string {
	body := key + "=" + value + "\n"
	n := len(body) + 1
	for len(fmt.Sprint(n))+1+len(body) != n {
		n = len(fmt.Sprint(n)) + 1 + len(body)
	}
	return fmt.Sprintf("%d %s", n, body)
}

// TestExtract_metadataChain: PAX headers that archive/tar reads in one go
// before the entry they describe are bounded too.
func TestExtract_metadataChain(t *testing.T) {
	rec := paxRecord("comment", strings.Repeat("x", 512<<10))
	var blocks [][]byte
	for range 64 {
		blocks = append(blocks, rawHeader("PaxHeaders/x", tar.TypeXHeader, len(rec)), []byte(rec))
	}
	blocks = append(blocks, rawHeader("x", tar.TypeReg, 0))
	st, _ := refuse(t, gz(t, rawTar(blocks...)), Limits{}, "more tar metadata")
	if st.Files != 0 {
		t.Errorf("%d files written", st.Files)
	}
}

func TestExtract_truncated(t *testing.T) {
	body := make([]byte, 64<<10)
	rand.New(rand.NewSource(2)).Read(body)
	archive := tarGz(t, ent{name: "VERSION", body: "0.2.4"}, ent{name: "tree/a.bin", body: string(body)})
	for _, at := range []int{1, 5, 10, 11, 100, len(archive) / 3, len(archive) / 2, len(archive) - 9, len(archive) - 8, len(archive) - 4, len(archive) - 1} {
		t.Run(fmt.Sprint(at), func(t *testing.T) {
			refuse(t, archive[:at], Limits{}, "truncated")
		})
	}
}

func TestExtract_context(t *testing.T) {
	archive := tarGz(t, ent{name: "VERSION", body: "0.2.4"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, dir := extractDir(t)
	if _, err := Extract(ctx, bytes.NewReader(archive), dir, Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract with a canceled context: %v; want context.Canceled", err)
	}

	// Canceled during the copy of a file.
	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	r := &cancelAfter{r: bytes.NewReader(tarGz(t, ent{name: "a", body: strings.Repeat("x", 1<<20)})), n: 600, cancel: cancel}
	_, dir = extractDir(t)
	if _, err := Extract(ctx, r, dir, Limits{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Extract canceled midway: %v; want context.Canceled", err)
	}
}

type cancelAfter struct {
	r      io.Reader
	n      int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.n <= 0 {
		c.cancel()
	}
	if len(p) > 100 {
		p = p[:100]
	}
	n, err := c.r.Read(p)
	c.n -= n
	return n, err
}

var errSource = errors.New("connection reset")

type failingReader struct{ r io.Reader }

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, errSource
	}
	return n, err
}

func TestExtract_sourceError(t *testing.T) {
	archive := tarGz(t, ent{name: "VERSION", body: "0.2.4"})
	for _, at := range []int{0, 5, len(archive) / 2, len(archive)} {
		_, dir := extractDir(t)
		_, err := Extract(context.Background(), &failingReader{bytes.NewReader(archive[:at])}, dir, Limits{})
		if !errors.Is(err, errSource) {
			t.Errorf("cut at %d: %v; want the source's error", at, err)
		}
	}
}

func TestExtract_dirNotEmpty(t *testing.T) {
	_, dir := extractDir(t)
	if err := os.WriteFile(filepath.Join(dir, "VERSION"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Extract(context.Background(), bytes.NewReader(tarGz(t, ent{name: "VERSION", body: "1"})), dir, Limits{})
	var fe *FormatError
	if err == nil || errors.As(err, &fe) {
		t.Errorf("Extract into a non-empty dir: %v; want a plain error", err)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(tarGz(f, ent{name: "./", typ: tar.TypeDir}, ent{name: "./VERSION", body: "0.2.4"},
		ent{name: "tree/groups/_all.ndjson", body: "{\"id\":1}\n"}))
	f.Add(tarGz(f, ent{name: "a", typ: tar.TypeSymlink, link: "../x"}))
	f.Add(tarGz(f, ent{name: "a/", typ: tar.TypeDir}, ent{name: "a/b", body: "x"}, ent{name: "a/b/c", body: "y"}))
	f.Add(tarGz(f, ent{name: strings.Repeat("p", 150), body: "pax", format: tar.FormatPAX}))
	f.Add(gz(f, rawTar(rawHeader("x", 'V', 0))))
	f.Add([]byte{})
	f.Add([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parent, dir := extractDir(t)
		lim := Limits{MaxUnpacked: 1 << 20, MaxEntries: 64, MaxNameLen: 256}
		st, err := Extract(context.Background(), bytes.NewReader(data), dir, lim)
		var fe *FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("Extract: %v (%T); want nil or a *FormatError", err, err)
		}
		if fe != nil && fe.Reason == "" {
			t.Fatal("a FormatError without a reason")
		}
		written := checkConfined(t, parent)
		if written > lim.MaxUnpacked || st.Unpacked != written {
			t.Fatalf("wrote %d bytes, stats %d; limit %d", written, st.Unpacked, lim.MaxUnpacked)
		}
	})
}
