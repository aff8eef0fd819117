package ci

import (
	"bytes"
	"compress/gzip"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"quarry/internal/model"
)

func envVars(kv ...string) []model.Variable {
	out := []model.Variable{}
	for i := 0; i+1 < len(kv); i += 2 {
		out = append(out, model.Variable{Key: kv[i], Value: kv[i+1], VariableType: model.VarEnv})
	}
	return out
}

func TestParseDotenv(t *testing.T) {
	tooLongKey := strings.Repeat("K", 256)
	for _, tc := range []struct {
		name    string
		in      string
		max     int
		want    []model.Variable
		wantErr string
	}{
		{name: "empty file", in: "", want: envVars()},
		{name: "one line", in: "URL=https://x.example\n", want: envVars("URL", "https://x.example")},
		{name: "no final newline", in: "A=1\nB=2", want: envVars("A", "1", "B", "2")},
		{name: "split at the first =", in: "Q=a=b==\n", want: envVars("Q", "a=b==")},
		{name: "empty value", in: "E=\n", want: envVars("E", "")},
		{name: "whitespace around key and value", in: "  K \t=  v v \n", want: envVars("K", "v v")},
		{name: "CRLF", in: "A=1\r\nB=2\r\n", want: envVars("A", "1", "B", "2")},
		{name: "quotes kept", in: `S="a b"` + "\nT='c'\n", want: envVars("S", `"a b"`, "T", "'c'")},
		{name: "no expansion", in: "A=$B\n", want: envVars("A", "$B")},
		{name: "later line replaces, keeps place", in: "A=1\nB=2\nA=3\n", want: envVars("A", "3", "B", "2")},
		{name: "UTF-8 byte order mark", in: "\uFEFFA=1\n", want: envVars("A", "1")},
		{name: "UTF-16LE", in: "\xFF\xFEA\x00=\x001\x00\n\x00", want: envVars("A", "1")},
		{name: "invalid UTF-8 value replaced", in: "A=\xff\n", want: envVars("A", "\uFFFD")},
		{name: "255-character key", in: strings.Repeat("K", 255) + "=v", want: envVars(strings.Repeat("K", 255), "v")},
		{name: "at the limit", in: "A=1\nB=2\n", max: 2, want: envVars("A", "1", "B", "2")},
		{name: "repeated keys count once", in: "A=1\nA=2\nB=2\n", max: 2, want: envVars("A", "2", "B", "2")},

		{name: "over the limit", in: "A=1\nB=2\nC=3\n", max: 2, wantErr: "Dotenv files cannot have more than 2 variables"},
		{name: "blank line", in: "A=1\n\nB=2\n", wantErr: "Invalid Format"},
		{name: "comment", in: "# note\nA=1\n", wantErr: "Invalid Format"},
		{name: "comment with =", in: "# a=b\n", wantErr: "Validation failed: Key can contain only letters, digits and '_'."},
		{name: "multi-line value", in: "A=\"x\ny\"\n", wantErr: "Invalid Format"},
		{name: "export prefix", in: "export A=1\n", wantErr: "Validation failed: Key can contain only letters, digits and '_'."},
		{name: "dash in key", in: "NO-WORK=1\n", wantErr: "Validation failed: Key can contain only letters, digits and '_'."},
		{name: "non-ASCII key", in: "ÜBER=1\n", wantErr: "Validation failed: Key can contain only letters, digits and '_'."},
		{name: "empty key", in: "=v\n", wantErr: "Validation failed: Key can't be blank, Key can contain only letters, digits and '_'."},
		{name: "key too long", in: tooLongKey + "=v\n", wantErr: "Validation failed: Key is too long (maximum is 255 characters)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseDotenv([]byte(tc.in), tc.max)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if got == nil {
				got = []model.Variable{}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

func gz(members ...string) []byte {
	var b bytes.Buffer
	for _, m := range members {
		w := gzip.NewWriter(&b)
		w.Write([]byte(m))
		w.Close()
	}
	return b.Bytes()
}

func TestDotenvUpload(t *testing.T) {
	big := make([]byte, DotenvMaxBytes)
	for _, tc := range []struct {
		name    string
		body    []byte
		format  string
		want    []model.Variable
		wantErr string
	}{
		{name: "gzip", body: gz("URL=https://a\n"), format: "gzip", want: envVars("URL", "https://a")},
		{name: "gzip members joined", body: gz("A=1\n", "B=2\n"), format: "gzip", want: envVars("A", "1", "B", "2")},
		{name: "raw", body: []byte("A=1\n"), format: "raw", want: envVars("A", "1")},
		{name: "not gzip", body: []byte("A=1\n"), format: "gzip", wantErr: "Invalid Format"},
		{name: "truncated gzip", body: gz("A=1\n")[:12], format: "gzip", wantErr: "Invalid Format"},
		{name: "file of the limit", body: big, format: "gzip", wantErr: "Dotenv Artifact Too Big. Maximum Allowable Size: 5120"},
		{name: "expands past the bound", body: gz("A=" + strings.Repeat("x", dotenvMaxPlain)), format: "gzip",
			wantErr: "Dotenv Artifact Too Big. Maximum Allowable Size: 5120"},
		{name: "too many variables", body: gz(strings.Repeat("A=1\n", 1) + manyVars(DotenvMaxVariables+1)), format: "gzip",
			wantErr: "Dotenv files cannot have more than 20 variables"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, got, err := DotenvUpload(bytes.NewReader(tc.body), tc.format)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr || model.KindOf(err) != model.KindBadRequest {
					t.Fatalf("error %v; want a bad request %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("error %v", err)
			}
			if !bytes.Equal(raw, tc.body) {
				t.Errorf("stored %d bytes; want the %d uploaded", len(raw), len(tc.body))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v; want %+v", got, tc.want)
			}
		})
	}
}

func manyVars(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("V")
		b.WriteString(strings.Repeat("X", i))
		b.WriteString("=1\n")
	}
	return b.String()
}

// FuzzDotenv: any bytes parse or are refused, never panic; what parses
// keeps GitLab's rules (valid keys, unique, within the limit, values on
// one line, in UTF-8).
func FuzzDotenv(f *testing.F) {
	for _, s := range []string{"", "A=1\n", "A=1\r\nB= x \n", "\uFEFFA=1", "\xFF\xFEA\x00=\x001\x00", "# c\n", "=\n", "A=1\nA=2",
		"A=\"x\ny\"", "K=\xff\xfe", "A=b=c"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ParseDotenv(b, 5)
		if err != nil {
			if got != nil {
				t.Fatalf("variables %+v with error %v", got, err)
			}
			return
		}
		if len(got) > 5 {
			t.Fatalf("%d variables over the limit of 5", len(got))
		}
		seen := map[string]bool{}
		for _, v := range got {
			if !reDotenvKey.MatchString(v.Key) || len(v.Key) > dotenvMaxKey {
				t.Fatalf("key %q breaks the rules", v.Key)
			}
			if seen[v.Key] {
				t.Fatalf("key %q twice", v.Key)
			}
			seen[v.Key] = true
			if strings.ContainsRune(v.Value, '\n') || !utf8.ValidString(v.Value) || v.Value != rubyStrip(v.Value) {
				t.Fatalf("value %q of %s is not one stripped UTF-8 line", v.Value, v.Key)
			}
		}
	})
}
