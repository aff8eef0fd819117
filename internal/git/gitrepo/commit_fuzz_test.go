package gitrepo

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"quarry/internal/git"
)

// TestReadCommit_strangeObjects reads commits git accepts only with
// --literally: dates past what the API can show, zones out of range, and a
// header line longer than any line buffer.
func TestReadCommit_strangeObjects(t *testing.T) {
	ctx := context.Background()
	r, err := storages(t).Open("default", HashedPath("", 12))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Create(ctx, "main"); err != nil {
		t.Fatal(err)
	}
	tree := gitIn(t, r.Path(), "mktree")
	write := func(obj string) git.ObjectID {
		p := filepath.Join(t.TempDir(), "commit")
		if err := os.WriteFile(p, []byte(obj), 0o644); err != nil {
			t.Fatal(err)
		}
		return git.ObjectID(gitIn(t, r.Path(), "hash-object", "-t", "commit", "--literally", "-w", p))
	}
	long := strings.Repeat("x", 3<<20)
	for _, c := range []struct {
		name              string
		author, committer string
		extra             string
		authorWhen        time.Time // zero: no date shown
		committerWhen     time.Time
	}{
		{"year past 9999", "A <a@example.com> 99999999999999 +0000", "C <c@example.com> 1700000000 +0100", "",
			time.Time{}, time.Unix(1700000000, 0).In(time.FixedZone("", 3600))},
		{"past int64", "A <a@example.com> 18446744073709551617 +0000", "C <c@example.com> -5 +0000", "",
			time.Time{}, time.Time{}},
		{"zone out of range", "A <a@example.com> 1700000000 +9999", "C <c@example.com> 1700000000 +01x0", "",
			time.Unix(1700000000, 0).UTC(), time.Unix(1700000000, 0).UTC()},
		{"zone pushes the year past 9999", "A <a@example.com> 253402297200 +2300", "C <c@example.com> 253402297200 -2300", "",
			time.Time{}, time.Unix(253402297200, 0).In(time.FixedZone("", -23*3600))},
		{"long header line", "A " + long + " <a@example.com> 1 +0000", "C <c@example.com> 2 +0000", "x-long " + long + "\n",
			time.Unix(1, 0).UTC(), time.Unix(2, 0).UTC()},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := write("tree " + tree + "\nauthor " + c.author + "\ncommitter " + c.committer + "\n" + c.extra + "\nTitle\n\nBody\n")
			got, err := r.ReadCommit(ctx, string(id))
			if err != nil {
				t.Fatal(err)
			}
			if got.ID != id || string(got.Tree) != tree || got.Message != "Title\n\nBody\n" || len(got.ParentIDs) != 0 {
				t.Errorf("read %+v", got)
			}
			for _, p := range []struct {
				who  string
				got  time.Time
				want time.Time
			}{{"author", got.Author.When, c.authorWhen}, {"committer", got.Committer.When, c.committerWhen}} {
				_, gotOff := p.got.Zone()
				_, wantOff := p.want.Zone()
				if !p.got.Equal(p.want) || gotOff != wantOff {
					t.Errorf("%s date %v; want %v", p.who, p.got, p.want)
				}
				if _, err := json.Marshal(p.got); err != nil {
					t.Errorf("%s date does not encode: %v", p.who, err)
				}
			}
		})
	}
}

// FuzzParseCommit: any commit object parses; the message is what follows
// the first empty line, every parent line is a parent, and the dates are
// ones the API can encode (or zero).
func FuzzParseCommit(f *testing.F) {
	f.Add([]byte("tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nparent 1111111111111111111111111111111111111111\n" +
		"author A U Thor <a@example.com> 1700000000 +0100\ncommitter C <c@example.com> 1700000000 -0230\n\nTitle\n\nBody\n"))
	f.Add([]byte("tree t\nauthor A <a> 99999999999999999999 +0000\ncommitter <> 1 +2400\ngpgsig -----BEGIN\n parent x\n -----END\n\nm"))
	f.Add([]byte("author no email\ncommitter C <c> -1\n\n"))
	f.Add([]byte("\n\n\n"))
	f.Add([]byte("parent a\nparent b\nparent\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCommit("id", data)
		if err != nil {
			t.Fatal(err)
		}
		_, msg, _ := bytes.Cut(data, []byte("\n\n"))
		if c.Message != string(msg) {
			t.Fatalf("message %q; want %q", c.Message, msg)
		}
		head, _, _ := bytes.Cut(data, []byte("\n\n"))
		parents := 0
		for _, l := range strings.Split(string(head), "\n") {
			if k, _, _ := strings.Cut(l, " "); k == "parent" {
				parents++
			}
		}
		if c.ParentIDs == nil || len(c.ParentIDs) != parents {
			t.Fatalf("%d parents; want %d", len(c.ParentIDs), parents)
		}
		checkWhen(t, c.Author)
		checkWhen(t, c.Committer)
	})
}

// FuzzParsePerson: any signature line gives a date the API can encode
// (or none), and a line git writes reads back whole.
func FuzzParsePerson(f *testing.F) {
	f.Add("A U Thor", "a@example.com", int64(1700000000), 60, "x")
	f.Add("", "", int64(0), 0, "<>")
	f.Add("Ünïcode", "u@example.com", int64(253402300799), -(23*60 + 59), "Name <e> 1 +1")
	f.Add("A", "a", int64(-1), 24*60, "A <a> 99999999999999999999 -0000")
	f.Add("A", "a", int64(1<<62), 5, " <a>> 1 +0100 extra")
	f.Fuzz(func(t *testing.T, name, email string, sec int64, zoneMinutes int, raw string) {
		p := parsePerson(raw)
		checkWhen(t, p)
		if lt, gt := strings.Index(raw, "<"), strings.LastIndex(raw, ">"); lt >= 0 && gt > lt {
			if p.Email != raw[lt+1:gt] || p.Name != strings.TrimSpace(raw[:lt]) {
				t.Fatalf("parsePerson(%q) = %+v", raw, p)
			}
		} else if p.Name != raw || p.Email != "" || !p.When.IsZero() {
			t.Fatalf("parsePerson(%q) = %+v; want the line as the name", raw, p)
		}

		// A line as git writes it.
		if strings.ContainsAny(name, "<>\n") || strings.TrimSpace(name) != name || strings.ContainsAny(email, "<>\n") {
			return
		}
		zoneMinutes %= 24 * 60
		sign, m := "+", zoneMinutes
		if m < 0 {
			sign, m = "-", -m
		}
		zone := sign + pad2(m/60) + pad2(m%60)
		if sec < 0 {
			sec = -(sec + 1)
		}
		line := name + " <" + email + "> " + strconv.FormatInt(sec, 10) + " " + zone
		got := parsePerson(line)
		if got.Name != name || got.Email != email {
			t.Fatalf("parsePerson(%q) = %q <%q>", line, got.Name, got.Email)
		}
		want := time.Unix(sec, 0).In(time.FixedZone("", zoneMinutes*60))
		if sec > maxPersonTime || want.Year() > 9999 {
			want = time.Time{}
		}
		_, gotOff := got.When.Zone()
		_, wantOff := want.Zone()
		if !got.When.Equal(want) || gotOff != wantOff {
			t.Fatalf("parsePerson(%q) date %v; want %v", line, got.When, want)
		}
	})
}

// checkWhen fails unless p's date is zero or encodes as JSON and in the
// API's UTC form with four year digits.
func checkWhen(t *testing.T, p Person) {
	t.Helper()
	if p.When.IsZero() {
		return
	}
	if _, err := json.Marshal(p.When); err != nil {
		t.Fatalf("date of %+v does not encode: %v", p, err)
	}
	if y := p.When.UTC().Year(); y < 1970 || y > 9999 {
		t.Fatalf("date of %+v in year %d", p, y)
	}
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}
