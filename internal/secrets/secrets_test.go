package secrets

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestKeyring_roundTrip(t *testing.T) {
	k := Ephemeral()
	for _, plain := range []string{"", "x", "hunter2", strings.Repeat("long value ", 10000), "ünïcödé\x00bytes\n"} {
		sealed, err := k.Seal(plain, "ci_variables.value")
		if err != nil {
			t.Fatal(err)
		}
		if len(plain) > 3 && strings.Contains(sealed, plain) {
			t.Errorf("sealed %q shows the plain text", sealed)
		}
		if id, ok := SealedWith(sealed); !ok || id != k.KeyID() {
			t.Errorf("SealedWith = %q, %v; want %q", id, ok, k.KeyID())
		}
		got, err := k.Open(sealed, "ci_variables.value")
		if err != nil || got != plain {
			t.Errorf("Open = %q, %v; want %q", got, err, plain)
		}
		again, _ := k.Seal(plain, "ci_variables.value")
		if again == sealed {
			t.Error("two seals of one value are equal (nonce reused)")
		}
	}
}

func TestKeyring_refuses(t *testing.T) {
	k, other := Ephemeral(), Ephemeral()
	sealed, err := k.Seal("secret value", "ci_variables.value")
	if err != nil {
		t.Fatal(err)
	}
	id, payload, err := Decode(sealed)
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) string {
		p := append([]byte(nil), payload...)
		p[i] ^= 1
		return prefix + id + ":" + b64.EncodeToString(p)
	}
	for _, c := range []struct {
		name, value, context string
		ring                 *Keyring
		want                 error
	}{
		{"another ring lacks the key", sealed, "ci_variables.value", other, ErrUnknownKey},
		{"another key id", strings.Replace(sealed, id, other.KeyID(), 1), "ci_variables.value", other, ErrTampered},
		{"unknown key id", strings.Replace(sealed, id, "zzzz", 1), "ci_variables.value", k, ErrUnknownKey},
		{"another column", sealed, "projects.runners_token", k, ErrTampered},
		{"nonce changed", flip(0), "ci_variables.value", k, ErrTampered},
		{"ciphertext changed", flip(nonceSize), "ci_variables.value", k, ErrTampered},
		{"tag changed", flip(len(payload) - 1), "ci_variables.value", k, ErrTampered},
		{"truncated", prefix + id + ":" + b64.EncodeToString(payload[:len(payload)-3]), "ci_variables.value", k, ErrTampered},
		{"plain text", "secret value", "ci_variables.value", k, ErrMalformed},
		{"no payload", prefix + id + ":", "ci_variables.value", k, ErrMalformed},
		{"bad base64", prefix + id + ":" + strings.Repeat("*", 40), "ci_variables.value", k, ErrMalformed},
		{"upper-case id", prefix + strings.ToUpper("ab") + ":" + b64.EncodeToString(payload), "ci_variables.value", k, ErrMalformed},
		{"other version", strings.Replace(sealed, "qs1:", "qs2:", 1), "ci_variables.value", k, ErrMalformed},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.ring.Open(c.value, c.context)
			if !errors.Is(err, c.want) {
				t.Errorf("Open = %q, %v; want %v", got, err, c.want)
			}
		})
	}
}

func TestKeyFile_createRotateReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "secrets", "encryption-keys.json")
	k, created, err := LoadOrCreate(path)
	if err != nil || !created {
		t.Fatalf("LoadOrCreate = %v, %v", created, err)
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]os.FileMode{true: 0o700, false: 0o600}[fi.IsDir()]; fi.Mode().Perm() != want {
			t.Errorf("%s mode %v; want %v", p, fi.Mode().Perm(), want)
		}
	}
	again, created, err := LoadOrCreate(path)
	if err != nil || created || again.KeyID() != k.KeyID() {
		t.Fatalf("second LoadOrCreate = %v, %v, %v; want the same key", again.KeyID(), created, err)
	}
	old, err := k.Seal("before rotation", "c")
	if err != nil {
		t.Fatal(err)
	}

	// Another process rotates; this one still opens the old value and,
	// reading the file again, the new one too, then seals with it.
	time.Sleep(10 * time.Millisecond) // a distinct modification time
	rotated, err := Rotate(path)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.KeyID() == k.KeyID() || !rotated.Holds(k.KeyID()) || len(rotated.IDs()) != 2 {
		t.Fatalf("rotated ring %v (current %s); want the old key kept and a new current one", rotated.IDs(), rotated.KeyID())
	}
	if got, err := rotated.Open(old, "c"); err != nil || got != "before rotation" {
		t.Errorf("rotated ring opens the old value: %q, %v", got, err)
	}
	fresh, err := rotated.Seal("after rotation", "c")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := k.Open(fresh, "c"); err != nil || got != "after rotation" {
		t.Errorf("the running ring opens a value of the new key: %q, %v", got, err)
	}
	if k.KeyID() != rotated.KeyID() {
		t.Errorf("running ring seals with %s after reading the file again; want %s", k.KeyID(), rotated.KeyID())
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("rotated file mode: %v, %v", fi.Mode().Perm(), err)
	}
}

func TestLoadOrCreate_racers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys.json")
	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k, _, err := LoadOrCreate(path)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.KeyID()
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("racing creators got keys %v; want one", ids)
		}
	}
}

func TestParseKeyFile(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	short := base64.StdEncoding.EncodeToString(make([]byte, 16))
	for _, c := range []struct {
		name, text, err string
	}{
		{"one key", `{"current":"a1","keys":[{"id":"a1","key":"` + key + `","created_at":""}]}`, ""},
		{"two keys", `{"current":"b2","keys":[{"id":"a1","key":"` + key + `"},{"id":"b2","key":"` + key + `"}]}`, ""},
		{"empty", ``, "EOF"},
		{"no keys", `{"current":"a1","keys":[]}`, "no key"},
		{"unknown field", `{"current":"a1","keys":[{"id":"a1","key":"` + key + `"}],"x":1}`, "unknown field"},
		{"short key", `{"current":"a1","keys":[{"id":"a1","key":"` + short + `"}]}`, "not 32 bytes"},
		{"not base64", `{"current":"a1","keys":[{"id":"a1","key":"!!"}]}`, "not 32 bytes"},
		{"bad id", `{"current":"A1","keys":[{"id":"A1","key":"` + key + `"}]}`, "lower-case"},
		{"id twice", `{"current":"a1","keys":[{"id":"a1","key":"` + key + `"},{"id":"a1","key":"` + key + `"}]}`, "twice"},
		{"current missing", `{"current":"zz","keys":[{"id":"a1","key":"` + key + `"}]}`, "not among"},
		{"trailing text", `{"current":"a1","keys":[{"id":"a1","key":"` + key + `"}]} {}`, "after the document"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := parseKeyFile([]byte(c.text))
			switch {
			case c.err == "" && err != nil:
				t.Fatalf("parse: %v", err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("parse = %v; want an error with %q", err, c.err)
			case c.err == "":
				if _, err := f.ring(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// Decode parses what the database holds: no input makes it panic, and
// what it accepts is exactly the form Seal writes.
func FuzzDecode(f *testing.F) {
	k := Ephemeral()
	for _, s := range []string{"", "hunter2", "x"} {
		sealed, _ := k.Seal(s, "c")
		f.Add(sealed)
	}
	f.Add("qs1:")
	f.Add("qs1:ab:")
	f.Add("qs1::AAAA")
	f.Fuzz(func(t *testing.T, s string) {
		id, payload, err := Decode(s)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("Decode error %v is not ErrMalformed", err)
			}
			return
		}
		if again := prefix + id + ":" + b64.EncodeToString(payload); again != s {
			t.Fatalf("Decode(%q) re-encodes as %q", s, again)
		}
		if _, err := k.Open(s, "c"); err != nil && !errors.Is(err, ErrTampered) && !errors.Is(err, ErrUnknownKey) {
			t.Fatalf("Open of a decodable value: %v", err)
		}
	})
}

// The key file may be written by hand (a configured key): parsing never
// panics, and what it accepts builds a ring.
func FuzzParseKeyFile(f *testing.F) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	f.Add([]byte(`{"current":"a1","keys":[{"id":"a1","key":"` + key + `","created_at":"2025-01-01T00:00:00Z"}]}`))
	f.Add([]byte(`{"current":"","keys":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		kf, err := parseKeyFile(b)
		if err != nil {
			return
		}
		k, err := kf.ring()
		if err != nil {
			t.Fatalf("accepted file builds no ring: %v", err)
		}
		sealed, err := k.Seal("v", "c")
		if err != nil {
			t.Fatal(err)
		}
		if got, err := k.Open(sealed, "c"); err != nil || got != "v" {
			t.Fatalf("round trip: %q, %v", got, err)
		}
	})
}

// Every project and group read opens its registration token: this is
// that cost.
func BenchmarkKeyring_openToken(b *testing.B) {
	k := Ephemeral()
	sealed, err := k.Seal("GR1348941"+strings.Repeat("x", 20), "projects.runners_token")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := k.Open(sealed, "projects.runners_token"); err != nil {
			b.Fatal(err)
		}
	}
}
