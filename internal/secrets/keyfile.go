package secrets

import (
	"bytes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// The key file is JSON, written with mode 0600:
//
//	{
//	  "current": "5e0c2a91",
//	  "keys": [
//	    {"id": "0b7d31f4", "key": "<base64 of 32 bytes>", "created_at": "2025-01-02T03:04:05Z"},
//	    {"id": "5e0c2a91", "key": "<base64 of 32 bytes>", "created_at": "2025-06-01T00:00:00Z"}
//	  ]
//	}
//
// "current" seals new values; every key opens what it sealed. Keys are
// added by Rotate and never removed by Quarry.
type keyFile struct {
	Current string    `json:"current"`
	Keys    []fileKey `json:"keys"`
}

type fileKey struct {
	ID        string `json:"id"`
	Key       string `json:"key"`
	CreatedAt string `json:"created_at"`
}

// maxKeyFileBytes bounds what is read of a key file (thousands of keys).
const maxKeyFileBytes = 1 << 20

// parseKeyFile reads a key file's text strictly: unknown fields, keys that
// are not 32 bytes, repeated or malformed ids and a current key that is
// not among the keys are errors.
func parseKeyFile(b []byte) (keyFile, error) {
	var f keyFile
	if len(b) > maxKeyFileBytes {
		return f, errors.New("key file too large")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return f, fmt.Errorf("key file: %w", err)
	}
	if dec.More() {
		return f, errors.New("key file: text after the document")
	}
	if len(f.Keys) == 0 {
		return f, errors.New("key file holds no key")
	}
	seen := map[string]bool{}
	for i, k := range f.Keys {
		if !validID(k.ID) {
			return f, fmt.Errorf("key file: key %d: id %q is not 1-%d lower-case letters and digits", i+1, k.ID, maxIDLen)
		}
		if seen[k.ID] {
			return f, fmt.Errorf("key file: key id %q appears twice", k.ID)
		}
		seen[k.ID] = true
		raw, err := base64.StdEncoding.DecodeString(k.Key)
		if err != nil || len(raw) != keySize {
			return f, fmt.Errorf("key file: key %q is not %d bytes in base64", k.ID, keySize)
		}
	}
	if !seen[f.Current] {
		return f, fmt.Errorf("key file: current key %q is not among its keys", f.Current)
	}
	return f, nil
}

// ring builds the keyring of a parsed file.
func (f keyFile) ring() (*Keyring, error) {
	k := &Keyring{current: f.Current, keys: map[string]cipher.AEAD{}}
	for _, fk := range f.Keys {
		raw, err := base64.StdEncoding.DecodeString(fk.Key)
		if err != nil {
			return nil, err
		}
		a, err := newAEAD(raw)
		if err != nil {
			return nil, fmt.Errorf("key %q: %w", fk.ID, err)
		}
		k.keys[fk.ID] = a
	}
	return k, nil
}

// add makes a fresh key with an id the file does not hold yet and makes it
// current.
func (f *keyFile) add(now time.Time) (string, error) {
	raw := make([]byte, keySize)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	for {
		var b [4]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", err
		}
		id := hex.EncodeToString(b[:])
		taken := false
		for _, k := range f.Keys {
			taken = taken || k.ID == id
		}
		if taken {
			continue
		}
		f.Keys = append(f.Keys, fileKey{ID: id, Key: base64.StdEncoding.EncodeToString(raw), CreatedAt: now.UTC().Format(time.RFC3339)})
		f.Current = id
		return id, nil
	}
}

// Load reads the key file at path.
func Load(path string) (*Keyring, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	b, err := io.ReadAll(io.LimitReader(fh, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("secrets key file %s: %w", path, err)
	}
	f, err := parseKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	k, err := f.ring()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	k.path, k.stamp = path, stampOf(fi)
	k.checked.Store(time.Now().UnixNano())
	return k, nil
}

// LoadOrCreate reads the key file at path, first making it (and its
// folder, mode 0700) with one fresh key when there is none; created says
// whether it did. Processes racing to create it end up with the same file.
func LoadOrCreate(path string) (k *Keyring, created bool, err error) {
	if k, err := Load(path); err == nil || !errors.Is(err, fs.ErrNotExist) {
		return k, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, false, fmt.Errorf("secrets key folder: %w", err)
	}
	unlock, err := lock(path)
	if err != nil {
		return nil, false, err
	}
	defer unlock()
	if _, err := os.Stat(path); err == nil {
		k, err := Load(path) // made by another process meanwhile
		return k, false, err
	}
	var f keyFile
	if _, err := f.add(time.Now()); err != nil {
		return nil, false, err
	}
	if err := write(path, f); err != nil {
		return nil, false, err
	}
	k, err = Load(path)
	return k, err == nil, err
}

// Rotate adds a fresh key to the key file at path and makes it current;
// the keys it held stay, to open what they sealed. It returns the new
// ring. Values sealed before are re-sealed by whoever holds them (the
// store's pass).
func Rotate(path string) (*Keyring, error) {
	unlock, err := lock(path)
	if err != nil {
		return nil, err
	}
	defer unlock()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secrets key file: %w", err)
	}
	f, err := parseKeyFile(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	id, err := f.add(time.Now())
	if err != nil {
		return nil, err
	}
	if err := write(path, f); err != nil {
		return nil, err
	}
	k, err := Load(path)
	if err != nil {
		return nil, err
	}
	if k.current != id {
		return nil, fmt.Errorf("%s: the new key %s is not current after writing", path, id)
	}
	return k, nil
}

// write replaces the file at path with f atomically: a temporary file of
// mode 0600 in the same folder, synced, then renamed over it.
func write(path string, f keyFile) error {
	b, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".keys-*.tmp")
	if err != nil {
		return fmt.Errorf("secrets key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("secrets key file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("secrets key file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("secrets key file: %w", err)
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		_ = dir.Sync()
		dir.Close()
	}
	return nil
}

// lock takes an exclusive lock beside the key file (<path>.lock), so two
// processes never create or rotate it at once; the lock ends with the
// process if it dies.
func lock(path string) (unlock func(), err error) {
	fh, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock secrets key file: %w", err)
	}
	if err := syscall.Flock(int(fh.Fd()), syscall.LOCK_EX); err != nil {
		fh.Close()
		return nil, fmt.Errorf("lock secrets key file: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(fh.Fd()), syscall.LOCK_UN)
		fh.Close()
	}, nil
}
