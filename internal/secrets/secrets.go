// Package secrets seals the values Quarry must keep and show back later
// (CI/CD variable values, registration tokens) with AES-256-GCM under keys
// that live in a key file, never in the database.
//
// A key file holds one or more keys, each with an id; one is current and
// seals every new value, the others open what they sealed before a
// rotation. A sealed value names its key:
//
//	qs1:<key id>:<base64url(nonce ‖ ciphertext ‖ tag)>
//
// and is bound to the column it is stored in (the context given to Seal
// and Open is the additional authenticated data), so a value copied to
// another column does not open.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Errors of Open (wrapped with the context).
var (
	// ErrMalformed is a value that is not a sealed value.
	ErrMalformed = errors.New("not a sealed value")
	// ErrUnknownKey is a sealed value whose key the key file lacks.
	ErrUnknownKey = errors.New("sealed with a key the key file lacks")
	// ErrTampered is a sealed value that does not authenticate: changed,
	// moved from another column, or sealed by another key of that id.
	ErrTampered = errors.New("sealed value does not authenticate")
)

const (
	prefix    = "qs1:"
	keySize   = 32 // AES-256
	nonceSize = 12 // GCM's standard nonce
	tagSize   = 16
	// maxIDLen bounds a key id; ids are made of maxIDLen or fewer
	// lower-case letters and digits.
	maxIDLen = 32
)

var b64 = base64.RawURLEncoding.Strict()

// Keyring seals and opens values. It is safe for concurrent use.
//
// A ring read from a file follows the file: when the file changed, a
// ring reads it again before it seals (looking at most every
// sealRecheck) and before it gives up opening a value sealed with a key
// it lacks. So a running process seals with a key another process
// rotated in within seconds, and opens at once what that process sealed.
type Keyring struct {
	path    string       // "" for a ring held only in memory
	checked atomic.Int64 // when the file was last looked at, in Unix nanoseconds

	mu      sync.RWMutex
	current string
	keys    map[string]cipher.AEAD
	stamp   fileStamp // the file as last read
}

// sealRecheck is how often a ring looks at its file again before
// sealing.
const sealRecheck = 10 * time.Second

// Ephemeral returns a ring with one fresh key held only in memory (tests,
// and nothing that must be read again later).
func Ephemeral() *Keyring {
	f := keyFile{}
	if _, err := f.add(time.Now()); err != nil {
		panic(err) // crypto/rand does not fail
	}
	k, err := f.ring()
	if err != nil {
		panic(err)
	}
	return k
}

// KeyID is the id of the current key, the one Seal uses.
func (k *Keyring) KeyID() string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	return k.current
}

// IDs are the ids of every key the ring holds, current first.
func (k *Keyring) IDs() []string {
	k.mu.RLock()
	defer k.mu.RUnlock()
	out := []string{k.current}
	for id := range k.keys {
		if id != k.current {
			out = append(out, id)
		}
	}
	return out
}

// Path is the key file the ring was read from ("" for Ephemeral).
func (k *Keyring) Path() string { return k.path }

// Holds reports whether the ring has the key named id.
func (k *Keyring) Holds(id string) bool {
	k.mu.RLock()
	defer k.mu.RUnlock()
	_, ok := k.keys[id]
	return ok
}

// Seal encrypts plaintext under the current key, bound to context (the
// column it will be stored in).
func (k *Keyring) Seal(plaintext, context string) (string, error) {
	k.refresh(sealRecheck)
	k.mu.RLock()
	id, aead := k.current, k.keys[k.current]
	k.mu.RUnlock()
	buf := make([]byte, nonceSize, nonceSize+len(plaintext)+tagSize)
	if _, err := rand.Read(buf); err != nil {
		return "", fmt.Errorf("seal %s: %w", context, err)
	}
	buf = aead.Seal(buf, buf[:nonceSize], []byte(plaintext), aad(id, context))
	return prefix + id + ":" + b64.EncodeToString(buf), nil
}

// Open decrypts a value Seal made for context, under whichever key of the
// ring sealed it. A key the ring lacks makes a ring read from a file read
// it again, if it changed, before giving up.
func (k *Keyring) Open(sealed, context string) (string, error) {
	id, payload, err := Decode(sealed)
	if err != nil {
		return "", fmt.Errorf("open %s: %w", context, err)
	}
	k.mu.RLock()
	aead, ok := k.keys[id]
	k.mu.RUnlock()
	if !ok {
		k.refresh(0)
		k.mu.RLock()
		aead, ok = k.keys[id]
		k.mu.RUnlock()
		if !ok {
			return "", fmt.Errorf("open %s: key %s: %w", context, id, ErrUnknownKey)
		}
	}
	plain, err := aead.Open(nil, payload[:nonceSize], payload[nonceSize:], aad(id, context))
	if err != nil {
		return "", fmt.Errorf("open %s: %w", context, ErrTampered)
	}
	return string(plain), nil
}

// SealedWith names the key a stored value claims to be sealed with; ok is
// false when value is not in the sealed form at all.
func (k *Keyring) SealedWith(value string) (id string, ok bool) { return SealedWith(value) }

// SealedWith names the key a stored value claims to be sealed with; ok is
// false when value is not in the sealed form at all.
func SealedWith(value string) (id string, ok bool) {
	id, _, err := Decode(value)
	return id, err == nil
}

// Decode splits a sealed value into its key id and its payload (nonce,
// ciphertext and tag). It parses stored bytes: anything that is not
// exactly the form Seal writes is ErrMalformed.
func Decode(sealed string) (id string, payload []byte, err error) {
	rest, ok := strings.CutPrefix(sealed, prefix)
	if !ok {
		return "", nil, ErrMalformed
	}
	id, enc, ok := strings.Cut(rest, ":")
	if !ok || !validID(id) {
		return "", nil, ErrMalformed
	}
	// The shortest payload is a nonce and a tag (an empty plaintext).
	if len(enc) < b64.EncodedLen(nonceSize+tagSize) {
		return "", nil, ErrMalformed
	}
	// The decoder skips line breaks; a stored value has none.
	if strings.ContainsAny(enc, "\r\n") {
		return "", nil, ErrMalformed
	}
	payload, err = b64.DecodeString(enc)
	if err != nil || len(payload) < nonceSize+tagSize {
		return "", nil, ErrMalformed
	}
	return id, payload, nil
}

// aad binds a sealed value to its key id and the column it lives in.
func aad(id, context string) []byte { return []byte(prefix + id + ":" + context) }

func validID(id string) bool {
	if id == "" || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// fileStamp tells whether a key file changed since it was read.
type fileStamp struct {
	size    int64
	modTime time.Time
}

func stampOf(fi os.FileInfo) fileStamp { return fileStamp{size: fi.Size(), modTime: fi.ModTime()} }

// refresh reads the key file again when it changed since it was read,
// unless it was looked at within every. A file that cannot be read or
// parsed now leaves the ring as it is (the next look tries again).
func (k *Keyring) refresh(every time.Duration) {
	if k.path == "" {
		return
	}
	now := time.Now().UnixNano()
	last := k.checked.Load()
	if every > 0 && (now-last < int64(every) || !k.checked.CompareAndSwap(last, now)) {
		return
	}
	fi, err := os.Stat(k.path)
	if err != nil {
		return
	}
	k.mu.RLock()
	same := stampOf(fi) == k.stamp
	k.mu.RUnlock()
	if same {
		return
	}
	fresh, err := Load(k.path)
	if err != nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	// Keep every key held so far: a value sealed with a key since dropped
	// from the file still opens in this process.
	for id, a := range fresh.keys {
		k.keys[id] = a
	}
	k.current, k.stamp = fresh.current, fresh.stamp
}
