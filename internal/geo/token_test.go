package geo

import (
	"strings"
	"testing"
	"time"
)

func TestSignVerify(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	key, secret := NewCredentials()
	if len(key) != 20 || len(secret) != 40 {
		t.Fatalf("credentials %q, %q: want 20 and 40 characters", key, secret)
	}
	body := []byte(`{"health":"Healthy"}`)
	h := Sign(key, secret, body, now)
	gotKey, token, ok := ParseAuthorization(h)
	if !ok || gotKey != key || !strings.HasPrefix(h, "GL-Geo "+key+":") {
		t.Fatalf("ParseAuthorization(%q) = %q, %q, %v", h, gotKey, token, ok)
	}
	if err := Verify(token, secret, body, now.Add(30*time.Second)); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	_, other := NewCredentials()
	tampered := []byte(strings.TrimSuffix(token, token[len(token)-2:]) + "AA")
	for _, c := range []struct {
		name   string
		token  string
		secret string
		body   []byte
		at     time.Time
	}{
		{"another secret", token, other, body, now},
		{"no secret", token, "", body, now},
		{"another body", token, secret, []byte(`{"health":"Healthy "}`), now},
		{"expired", token, secret, body, now.Add(3 * time.Minute)},
		{"from the future", token, secret, body, now.Add(-2 * time.Minute)},
		{"tampered signature", string(tampered), secret, body, now},
		{"two parts", "a.b", secret, body, now},
		{"garbage", "!!!.???.***", secret, body, now},
	} {
		if err := Verify(c.token, c.secret, c.body, c.at); err != ErrBadSignature {
			t.Errorf("%s: Verify = %v; want ErrBadSignature", c.name, err)
		}
	}
	// A token signed for a long lifetime, or with another algorithm, is
	// not one Sign makes.
	if err := VerifyHeader(token, secret, now); err != nil {
		t.Errorf("VerifyHeader: %v", err)
	}
}

func TestParseAuthorization(t *testing.T) {
	for _, c := range []struct {
		h         string
		key, tok  string
		wantMatch bool
	}{
		{"GL-Geo abc:x.y.z", "abc", "x.y.z", true},
		{"GL-Geo  abc:x.y.z", "abc", "x.y.z", true},
		{"GL-Geo abc:x:y", "abc", "x:y", true},
		{"Bearer abc:x.y.z", "", "", false},
		{"gl-geo abc:x.y.z", "", "", false},
		{"GL-Geo abc", "", "", false},
		{"GL-Geo :x.y.z", "", "", false},
		{"GL-Geo abc:", "", "", false},
		{"GL-Geo", "", "", false},
		{"", "", "", false},
		{"GL-Geo a b:x", "", "", false},
		{"GL-Geo abc:" + strings.Repeat("x", MaxAuthorization), "", "", false},
	} {
		key, tok, ok := ParseAuthorization(c.h)
		if ok != c.wantMatch || key != c.key || tok != c.tok {
			t.Errorf("ParseAuthorization(%.40q) = %q, %q, %v; want %q, %q, %v", c.h, key, tok, ok, c.key, c.tok, c.wantMatch)
		}
	}
}

// FuzzVerify: no header and body, however made, passes for a secret it
// was not signed with, and parsing never fails but by refusing.
func FuzzVerify(f *testing.F) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	key, secret := NewCredentials()
	f.Add(Sign(key, secret, []byte("{}"), now), []byte("{}"))
	f.Add("GL-Geo a:b.c.d", []byte(""))
	f.Add("GL-Geo a:eyJhbGciOiJub25lIn0.eyJleHAiOjk5OTk5OTk5OTk5fQ.", []byte("x"))
	f.Fuzz(func(t *testing.T, h string, body []byte) {
		_, tok, ok := ParseAuthorization(h)
		if !ok {
			return
		}
		if Verify(tok, "not the secret", body, now) == nil {
			t.Fatalf("a token verified with a secret nobody signed with: %q", h)
		}
		_ = Verify(tok, secret, body, now)
	})
}
