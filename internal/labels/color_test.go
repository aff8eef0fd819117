package labels

import "testing"

func TestColor(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"#AABBCC", "#AABBCC", true},
		{"#abcdef", "#abcdef", true},
		{"#abc", "#abc", true},
		{"red", "#ff0000", true},
		{"RebeccaPurple", "#663399", true},
		{"", "", false},
		{"#", "", false},
		{"AABBCC", "", false},
		{"#AABBCCEE", "", false},
		{"#GGHHII", "", false},
		{"G-ITLAB", "", false},
		{"#ab", "", false},
		{"notacolourname", "", false},
	} {
		got, ok := Color(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Color(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestTextColor(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"#FFFFFF", "#1F1E24"},
		{"#fff", "#1F1E24"},
		{"#ffff00", "#1F1E24"},
		{"#000000", "#FFFFFF"},
		{"#0000ff", "#FFFFFF"},
		{"#6699cc", "#FFFFFF"},
		{"bad", "#FFFFFF"},
	} {
		if got := TextColor(c.in); got != c.want {
			t.Errorf("TextColor(%q) = %q; want %q", c.in, got, c.want)
		}
	}
}

func FuzzColor(f *testing.F) {
	for _, s := range []string{"#abc", "#AABBCC", "red", "", "#", "#zzzzzz", "LightGoldenRodYellow"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		hex, ok := Color(s)
		if !ok {
			if hex != "" {
				t.Fatalf("Color(%q) = %q with ok false", s, hex)
			}
			return
		}
		if _, _, _, valid := rgb(hex); !valid {
			t.Fatalf("Color(%q) = %q, not a hex colour", s, hex)
		}
		if again, ok := Color(hex); !ok || again != hex {
			t.Fatalf("Color(%q) = %q, %v; want it unchanged", hex, again, ok)
		}
		if tc := TextColor(hex); tc != "#FFFFFF" && tc != "#1F1E24" {
			t.Fatalf("TextColor(%q) = %q", hex, tc)
		}
	})
}
