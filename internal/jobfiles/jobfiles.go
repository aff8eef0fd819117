// Package jobfiles keeps the files CI jobs leave under the data folder:
// each job's log, appended as a runner sends it, and its artifacts,
// streamed to disk (never held in memory). Files are grouped by project,
// so a project's files go with it in one removal.
//
// Layout: <root>/logs/<project>/<job>.log and
// <root>/artifacts/<project>/<job>/<name>.
package jobfiles

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Store is the folder of job files.
type Store struct {
	root string
	// logLocks serialize appends to one log (striped by job id): a
	// runner sends a job's log in order, and two writers of one log must
	// not interleave.
	logLocks [64]sync.Mutex
}

// New returns the store rooted at dir.
func New(dir string) *Store { return &Store{root: dir} }

// ErrOffset reports an append that does not continue the log: Size is
// what the log holds.
type ErrOffset struct{ Size int64 }

func (e *ErrOffset) Error() string { return fmt.Sprintf("log holds %d bytes", e.Size) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (s *Store) logPath(projectID, jobID int64) string {
	return filepath.Join(s.root, "logs", itoa(projectID), itoa(jobID)+".log")
}

// AppendLog writes data at offset of a job's log: the log is cut to
// offset first (a runner resending from an earlier offset), and an offset
// past the end is refused with *ErrOffset. It returns the new size.
func (s *Store) AppendLog(projectID, jobID, offset int64, data io.Reader) (int64, error) {
	mu := &s.logLocks[uint64(jobID)%uint64(len(s.logLocks))]
	mu.Lock()
	defer mu.Unlock()
	p := s.logPath(projectID, jobID)
	if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
		return 0, fmt.Errorf("log folder: %w", err)
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return 0, fmt.Errorf("open log: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if offset > st.Size() {
		return st.Size(), &ErrOffset{Size: st.Size()}
	}
	if offset < st.Size() {
		if err := f.Truncate(offset); err != nil {
			return 0, fmt.Errorf("cut log: %w", err)
		}
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return 0, err
	}
	n, err := io.Copy(f, data)
	if err != nil {
		return offset + n, fmt.Errorf("append log: %w", err)
	}
	return offset + n, nil
}

// OpenLog opens a job's log; ok is false when it has none.
func (s *Store) OpenLog(projectID, jobID int64) (f *os.File, ok bool, err error) {
	f, err = os.Open(s.logPath(projectID, jobID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	return f, err == nil, err
}

// RemoveLog deletes a job's log (none is fine).
func (s *Store) RemoveLog(projectID, jobID int64) error {
	err := os.Remove(s.logPath(projectID, jobID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// artifactPath is the relative path of a job's artifact file.
func artifactPath(projectID, jobID int64, name string) string {
	return filepath.Join("artifacts", itoa(projectID), itoa(jobID), filepath.Base(name))
}

// PutArtifact streams r into a job's artifact file named name, at most
// limit bytes (more fails with ErrTooLarge and leaves nothing), and
// returns the file's relative path and size. The file appears whole or
// not at all.
func (s *Store) PutArtifact(projectID, jobID int64, name string, r io.Reader, limit int64) (rel string, size int64, err error) {
	rel = artifactPath(projectID, jobID, name)
	dst := filepath.Join(s.root, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return "", 0, fmt.Errorf("artifact folder: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".upload-*")
	if err != nil {
		return "", 0, fmt.Errorf("artifact file: %w", err)
	}
	defer os.Remove(tmp.Name())
	size, err = io.Copy(tmp, io.LimitReader(r, limit+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, fmt.Errorf("write artifact: %w", err)
	}
	if size > limit {
		return "", 0, ErrTooLarge
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", 0, fmt.Errorf("store artifact: %w", err)
	}
	return rel, size, nil
}

// ErrTooLarge is an artifact over its size limit.
var ErrTooLarge = errors.New("artifact too large")

// OpenArtifact opens an artifact file by the relative path PutArtifact
// gave.
func (s *Store) OpenArtifact(rel string) (*os.File, error) {
	return os.Open(filepath.Join(s.root, filepath.Clean("/"+rel)))
}

// HasArtifact reports whether the artifact file at rel (as PutArtifact
// gave it) is on this machine's disk.
func (s *Store) HasArtifact(rel string) bool {
	fi, err := os.Stat(filepath.Join(s.root, filepath.Clean("/"+rel)))
	return err == nil && fi.Mode().IsRegular()
}

// RemoveArtifact deletes an artifact file (none is fine).
func (s *Store) RemoveArtifact(rel string) error {
	err := os.Remove(filepath.Join(s.root, filepath.Clean("/"+rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// RemoveJob deletes every file of a job.
func (s *Store) RemoveJob(projectID, jobID int64) error {
	return errors.Join(s.RemoveLog(projectID, jobID),
		os.RemoveAll(filepath.Join(s.root, "artifacts", itoa(projectID), itoa(jobID))))
}

// RemoveProject deletes every file of a project's jobs.
func (s *Store) RemoveProject(projectID int64) error {
	return errors.Join(os.RemoveAll(filepath.Join(s.root, "logs", itoa(projectID))),
		os.RemoveAll(filepath.Join(s.root, "artifacts", itoa(projectID))))
}
