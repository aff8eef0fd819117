package importexport

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Writer writes a gzip-compressed tar archive streaming to an io.Writer.
// After a failed File, Bytes or FromDisk the archive is unusable: every
// later call, Close included, returns the same error.
type Writer struct {
	gz     *gzip.Writer
	tw     *tar.Writer
	t      time.Time
	err    error
	closed bool
}

// NewWriter returns a Writer that writes the archive to w.
func NewWriter(w io.Writer) *Writer {
	gz := gzip.NewWriter(w)
	return &Writer{gz: gz, tw: tar.NewWriter(gz)}
}

// SetTime sets the modification time of the entries written from now on
// (the default is the time each is written).
func (w *Writer) SetTime(t time.Time) { w.t = t }

func (w *Writer) now() time.Time {
	if w.t.IsZero() {
		return time.Now()
	}
	return w.t
}

var errClosed = errors.New("archive writer is closed")

// File adds a regular file name (slash-separated, relative, clean) of
// exactly size bytes read from r, with mode 0644. An r shorter or longer
// than size is an error.
func (w *Writer) File(name string, size int64, r io.Reader) error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return errClosed
	}
	if err := checkWriteName(name); err != nil {
		return err
	}
	if size < 0 {
		return fmt.Errorf("archive entry %q: negative size %d", name, size)
	}
	hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o644, ModTime: w.now()}
	if err := w.tw.WriteHeader(hdr); err != nil {
		return w.fail(fmt.Errorf("archive entry %q: %w", name, err))
	}
	n, err := io.CopyN(w.tw, r, size)
	if err == io.EOF {
		return w.fail(fmt.Errorf("archive entry %q: content is %d bytes, shorter than its size %d", name, n, size))
	}
	if err != nil {
		return w.fail(fmt.Errorf("archive entry %q: %w", name, err))
	}
	var one [1]byte
	if m, _ := io.ReadFull(r, one[:]); m > 0 {
		return w.fail(fmt.Errorf("archive entry %q: content is longer than its size %d", name, size))
	}
	return nil
}

// Bytes adds a file name with content b.
func (w *Writer) Bytes(name string, b []byte) error {
	return w.File(name, int64(len(b)), bytes.NewReader(b))
}

// FromDisk adds the regular file at path as name, streamed; its size is
// taken from Stat, and a file that changes size meanwhile is an error.
func (w *Writer) FromDisk(name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("archive entry %q: %s is not a regular file", name, path)
	}
	return w.File(name, st.Size(), f)
}

// Close ends the tar and the gzip stream. It does not close the underlying
// writer.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.closed {
		return nil
	}
	w.closed = true
	if err := w.tw.Close(); err != nil {
		return w.fail(fmt.Errorf("end tar stream: %w", err))
	}
	if err := w.gz.Close(); err != nil {
		return w.fail(fmt.Errorf("end gzip stream: %w", err))
	}
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// checkWriteName reports whether name is one that Extract accepts as is.
func checkWriteName(name string) error {
	clean, err := entryName(name, maxNameLenDefault)
	if err != nil {
		return fmt.Errorf("archive entry name %q: %w", name, err)
	}
	if clean != name {
		return fmt.Errorf("archive entry name %q is not clean (want %q)", name, clean)
	}
	return nil
}
