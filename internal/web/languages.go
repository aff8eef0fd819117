package web

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/projects"
)

// language is one language of the overview's languages bar: its share
// of the default branch's code, as GET /projects/:id/languages gives it,
// shown with one decimal as GitLab's bar does; the bar's segment takes
// the width class of the share rounded to a whole percent (at least 1,
// so that a small language stays visible: the page's CSP forbids inline
// styles) and the colour class of the language.
type language struct {
	Name, Percent string
	Width, Colour string // CSS classes
}

// languages orders shares by size (then name), as GitLab's bar does.
func languages(shares map[string]float64) []language {
	names := make([]string, 0, len(shares))
	for n, v := range shares {
		if v > 0 {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		if shares[names[i]] != shares[names[j]] {
			return shares[names[i]] > shares[names[j]]
		}
		return names[i] < names[j]
	})
	out := make([]language, 0, len(names))
	for _, n := range names {
		v := shares[n]
		w := min(100, max(1, int(v+0.5)))
		out = append(out, language{Name: n, Percent: strconv.FormatFloat(v, 'f', 1, 64),
			Width: "lang-w-" + strconv.Itoa(w), Colour: languageColourClass(n)})
	}
	return out
}

// languageColours are linguist's colours (GitLab's bar uses them) of the
// languages Quarry recognises; any other language is grey.
var languageColours = map[string]string{
	"Go": "00add8", "Ruby": "701516", "Python": "3572a5", "JavaScript": "f1e05a", "TypeScript": "3178c6",
	"Java": "b07219", "Kotlin": "a97bff", "Scala": "c22d40", "C": "555555", "C++": "f34b7d", "C#": "178600",
	"Rust": "dea584", "PHP": "4f5d95", "Shell": "89e051", "HTML": "e34c26", "CSS": "563d7c", "SCSS": "c6538c",
	"Vue": "41b883", "Swift": "f05138", "Objective-C": "438eff", "Perl": "0298c3", "Lua": "000080",
	"Elixir": "6e4a7e", "Erlang": "b83998", "Haskell": "5e5086", "Clojure": "db5855", "Dart": "00b4ab",
	"R": "198ce7", "PLpgSQL": "336790", "PowerShell": "012456", "Groovy": "4298b8", "HCL": "844fba",
	"Vim Script": "199f4b", "Emacs Lisp": "c065db", "OCaml": "ef7a08", "F#": "b845fc", "Zig": "ec915c",
	"Nix": "7e7eff", "Julia": "a270ba", "Svelte": "ff3e00", "CoffeeScript": "244776", "Makefile": "427819",
	"Dockerfile": "384d54",
}

const otherLanguageColour = "8b8b8b"

// languageColourClass names the class of a language's colour by the
// colour itself, so no two languages' names can clash.
func languageColourClass(name string) string {
	c, ok := languageColours[name]
	if !ok {
		c = otherLanguageColour
	}
	return "lang-c-" + c
}

// languageCSS is the bar's style sheet, appended to app.css: the bar,
// its legend, a width class per whole percent and a class per colour.
func languageCSS() []byte {
	var b bytes.Buffer
	b.WriteString("\n/* The languages bar (generated: a class per width and colour, no inline styles) */\n" +
		".languages { margin: 12px 0; }\n" +
		".languages .bar { display: flex; height: 8px; border-radius: 4px; overflow: hidden; background: var(--border); }\n" +
		".languages .bar span { display: block; height: 100%; }\n" +
		".languages ul { list-style: none; display: flex; flex-wrap: wrap; gap: 4px 16px; margin: 6px 0 0; padding: 0; font-size: 13px; }\n" +
		".languages li .dot { display: inline-block; width: 10px; height: 10px; border-radius: 50%; margin-right: 6px; }\n" +
		".languages li .pct { color: var(--muted); margin-left: 4px; }\n")
	for w := 0; w <= 100; w++ {
		fmt.Fprintf(&b, ".lang-w-%d{width:%d%%}", w, w)
	}
	b.WriteByte('\n')
	seen := map[string]bool{otherLanguageColour: true}
	colours := []string{otherLanguageColour}
	for _, c := range languageColours {
		if !seen[c] {
			seen[c] = true
			colours = append(colours, c)
		}
	}
	sort.Strings(colours)
	for _, c := range colours {
		fmt.Fprintf(&b, ".lang-c-%s{background:#%s}", c, strings.ToLower(c))
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// languages are the project's languages for its overview.
func (h *Handler) languages(r *http.Request, a auth.Actor, v projects.View) ([]language, error) {
	shares, err := h.Projects.LanguagesOf(r.Context(), a, v.Project, v.Access)
	if err != nil {
		return nil, err
	}
	return languages(shares), nil
}
