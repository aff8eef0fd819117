package settings

import (
	"flag"
	"os"
	"strings"
	"testing"

	"quarry/internal/model"
)

var update = flag.Bool("update", false, "rewrite README.md's settings table from the model")

const (
	tableStart = "<!-- settings table: generated from internal/model/appsettings.go by go test ./internal/settings -update -->"
	tableEnd   = "<!-- end of settings table -->"
)

// settingsTable is README's table of every attribute and where Quarry
// applies it, from the model's tags.
func settingsTable() string {
	var b strings.Builder
	b.WriteString("| Attribute | In Quarry |\n|---|---|\n")
	for _, a := range model.SettingAttributes() {
		switch {
		case a.Effect != "":
			b.WriteString("| `" + a.Name + "` | takes effect: " + a.Effect + " |\n")
		case a.Secret:
			b.WriteString("| `" + a.Name + "` | stored only (secret: written, never shown, kept sealed) |\n")
		default:
			b.WriteString("| `" + a.Name + "` | stored only |\n")
		}
	}
	return b.String()
}

// TestREADME_settingsTable keeps README's settings table honest: it must
// be the table the model's tags give.
func TestREADME_settingsTable(t *testing.T) {
	const path = "../../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i, j := strings.Index(doc, tableStart), strings.Index(doc, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md has no settings table between %q and %q", tableStart, tableEnd)
	}
	want := tableStart + "\n\n" + settingsTable() + "\n"
	if got := doc[i:j]; got != want {
		if *update {
			if err := os.WriteFile(path, []byte(doc[:i]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("README.md's settings table differs from the model (run go test ./internal/settings -update)")
	}
}
