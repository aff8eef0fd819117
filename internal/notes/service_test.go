package notes

import (
	"strings"
	"testing"
	"unicode/utf8"

	"quarry/internal/model"
)

func TestValidEmoji(t *testing.T) {
	for _, c := range []struct {
		name string
		want bool
	}{
		{"thumbsup", true}, {"thumbsdown", true}, {"tada", true}, {"+1", true},
		{"", false}, {":tada:", false}, {"tada:", false}, {"no_such_emoji", false}, {"THUMBSUP", false},
		{strings.Repeat("a", MaxEmojiName+1), false}, {"../etc", false}, {"tada\x00", false},
	} {
		if got := ValidEmoji(c.name); got != c.want {
			t.Errorf("ValidEmoji(%q) = %v; want %v", c.name, got, c.want)
		}
	}
}

func TestCheckBody(t *testing.T) {
	for _, c := range []struct {
		body string
		want string // "" valid, else part of the message
	}{
		{"hello", ""}, {"  x  ", ""}, {strings.Repeat("é", model.NoteBodyMax), ""},
		{"", "can't be blank"}, {" \n\t", "can't be blank"},
		{strings.Repeat("é", model.NoteBodyMax+1), "is too long (maximum is 1000000 characters)"},
		{"a\x00b", "is invalid"}, {"a\xffb", "is invalid"},
	} {
		err := checkBody(c.body)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("checkBody(%.20q): %v; want nil", c.body, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("checkBody(%.20q): %v; want %q", c.body, err, c.want)
		case err != nil && model.KindOf(err) != model.KindBadRequest:
			t.Errorf("checkBody(%.20q): kind %v; want a 400", c.body, model.KindOf(err))
		}
	}
}

// FuzzInput: the checks of user input never panic, and what they accept
// is what the store may hold.
func FuzzInput(f *testing.F) {
	for _, s := range []string{"", "tada", ":x:", "a\x00", "\xff", "thumbsup"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ValidEmoji(s) && (len(s) > MaxEmojiName || strings.Contains(s, ":")) {
			t.Fatalf("ValidEmoji(%q) accepted", s)
		}
		if checkBody(s) == nil && (!utf8.ValidString(s) || strings.TrimSpace(s) == "" || utf8.RuneCountInString(s) > model.NoteBodyMax) {
			t.Fatalf("checkBody(%q) accepted", s)
		}
	})
}
