package repofiles

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"quarry/internal/model"
)

func TestDecodeContent(t *testing.T) {
	for _, c := range []struct {
		content, encoding string
		want              string
		ok                bool
	}{
		{"hello", "", "hello", true},
		{"hello", "text", "hello", true},
		{"aGVsbG8=", "text", "aGVsbG8=", true},   // text is never decoded
		{"aGVsbG8=", "BASE64", "aGVsbG8=", true}, // the name is exact
		{"aGVsbG8=", "base64", "hello", true},
		{"aGVs\nbG8=", "base64", "hello", true}, // line breaks are ignored
		{"", "base64", "", true},
		{"aGVsbG8", "base64", "", false}, // padding is required
		{"aGVsbG8=!", "base64", "", false},
		{"aGVs bG8=", "base64", "", false},
		{"aGVsbG8_", "base64", "", false}, // URL alphabet is not standard Base64
	} {
		got, err := DecodeContent(c.content, c.encoding)
		if (err == nil) != c.ok || string(got) != c.want {
			t.Errorf("DecodeContent(%q, %q) = %q, %v; want %q, ok %v", c.content, c.encoding, got, err, c.want, c.ok)
		}
		var me *model.Error
		if err != nil && (!errors.As(err, &me) || me.Kind != model.KindBadRequest || me.Message != "content is not valid Base64") {
			t.Errorf("DecodeContent(%q) error %#v; want 400 content is not valid Base64", c.content, err)
		}
	}
}

// FuzzDecodeContent: any bytes survive a Base64 round trip (also wrapped
// in lines as MIME tools write it); non-Base64 encodings pass content
// through untouched; bad Base64 is the one 400; decoded data is never
// longer than its encoding allows.
func FuzzDecodeContent(f *testing.F) {
	f.Add([]byte("hello"), "aGVsbG8=", "base64")
	f.Add([]byte{0, 0xff, '\n'}, "aGVsbG8", "base64")
	f.Add([]byte(""), "a\r\nb", "text")
	f.Add(bytes.Repeat([]byte("x"), 200), "====", "base64")
	f.Add([]byte("é"), "w6k=\n", "")
	f.Fuzz(func(t *testing.T, data []byte, content, encoding string) {
		enc := base64.StdEncoding.EncodeToString(data)
		for _, s := range []string{enc, wrap(enc, 76, "\n"), wrap(enc, 60, "\r\n")} {
			got, err := DecodeContent(s, "base64")
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("round trip of %q via %q = %q, %v", data, s, got, err)
			}
		}

		got, err := DecodeContent(content, encoding)
		if encoding != "base64" {
			if err != nil || string(got) != content {
				t.Fatalf("DecodeContent(%q, %q) = %q, %v; want the content as given", content, encoding, got, err)
			}
			return
		}
		if err != nil {
			var me *model.Error
			if !errors.As(err, &me) || me.Kind != model.KindBadRequest || me.Message != "content is not valid Base64" || got != nil {
				t.Fatalf("DecodeContent(%q) = %q, %#v", content, got, err)
			}
			return
		}
		stripped := strings.NewReplacer("\r", "", "\n", "").Replace(content)
		if len(got) > len(stripped)/4*3 {
			t.Fatalf("DecodeContent(%q) = %d bytes from %d characters", content, len(got), len(stripped))
		}
		// Canonical length: decoding read every character as data.
		if n := base64.StdEncoding.EncodedLen(len(got)); n != len(stripped) {
			t.Fatalf("DecodeContent(%q) = %q, whose encoding has %d characters, not %d", content, got, n, len(stripped))
		}
	})
}

// wrap breaks s into lines of n characters ended by eol.
func wrap(s string, n int, eol string) string {
	var b strings.Builder
	for len(s) > n {
		b.WriteString(s[:n] + eol)
		s = s[n:]
	}
	b.WriteString(s)
	return b.String()
}
