// Package uploads keeps uploaded files (avatars, attachments) under the data
// folder and hands them back as streams.
package uploads

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"quarry/internal/model"
)

// File is an uploaded file on its way in.
type File struct {
	Name string // the client's file name
	Size int64
	Open func() (io.ReadCloser, error)
}

// Store is a folder of uploaded files addressed by slash-separated paths
// such as "user/avatar/12/me.png".
type Store struct{ root string }

// New returns a store rooted at dir.
func New(dir string) *Store { return &Store{root: dir} }

// Avatar limits, as GitLab applies them.
const MaxAvatarSize = 200 << 10

var avatarExts = []string{"png", "jpg", "jpeg", "gif", "bmp", "tiff", "ico", "webp"}

// ValidateAvatar checks an avatar's format and size and returns the field
// messages for what it breaks.
func ValidateAvatar(f *File) []string {
	var msgs []string
	ext := strings.TrimPrefix(strings.ToLower(path.Ext(f.Name)), ".")
	ok := false
	for _, e := range avatarExts {
		ok = ok || e == ext
	}
	if !ok {
		msgs = append(msgs, "file format is not supported. Please try one of the following supported formats: "+strings.Join(avatarExts, ", "))
	}
	if f.Size > MaxAvatarSize {
		msgs = append(msgs, "is too big (should be at most 200 KiB)")
	}
	return msgs
}

// SafeName reduces a client file name to a safe base name.
func SafeName(name string) string {
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	s := strings.TrimLeft(b.String(), ".")
	if s == "" {
		s = "file"
	}
	return s
}

// Save stores f at dir/SafeName(f.Name), replacing the folder's earlier
// content, and returns the stored path.
func (s *Store) Save(dir string, f *File) (string, error) {
	rel := path.Join(dir, SafeName(f.Name))
	full, err := s.full(rel)
	if err != nil {
		return "", err
	}
	folder := filepath.Dir(full)
	if err := os.RemoveAll(folder); err != nil {
		return "", fmt.Errorf("clear %q: %w", dir, err)
	}
	if err := os.MkdirAll(folder, 0o750); err != nil {
		return "", fmt.Errorf("create %q: %w", dir, err)
	}
	src, err := f.Open()
	if err != nil {
		return "", fmt.Errorf("open upload: %w", err)
	}
	defer src.Close()
	tmp, err := os.CreateTemp(folder, ".upload-*")
	if err != nil {
		return "", fmt.Errorf("store upload: %w", err)
	}
	if _, err := io.Copy(tmp, src); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return "", fmt.Errorf("store upload: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("store upload: %w", err)
	}
	if err := os.Rename(tmp.Name(), full); err != nil {
		return "", fmt.Errorf("store upload: %w", err)
	}
	return rel, nil
}

// Remove deletes the folder holding the stored path rel.
func (s *Store) Remove(rel string) error {
	if rel == "" {
		return nil
	}
	full, err := s.full(rel)
	if err != nil {
		return err
	}
	return os.RemoveAll(filepath.Dir(full))
}

// Open returns the stored file at rel; model.ErrNotFound when absent.
func (s *Store) Open(rel string) (*os.File, error) {
	full, err := s.full(rel)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, model.ErrNotFound
	}
	return f, err
}

// full maps a stored path into the root, refusing anything that escapes it.
func (s *Store) full(rel string) (string, error) {
	clean := path.Clean("/" + rel)
	if clean == "/" || strings.Contains(rel, "..") {
		return "", model.ErrNotFound
	}
	return filepath.Join(s.root, filepath.FromSlash(clean)), nil
}
