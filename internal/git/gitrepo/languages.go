package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"path"
	"strconv"
	"strings"

	"quarry/internal/git"
)

// languageByExt maps file extensions to programming and markup languages
// (prose such as Markdown and data such as JSON do not count, as in
// GitHub's linguist, which GitLab uses).
var languageByExt = map[string]string{
	".go": "Go", ".rb": "Ruby", ".py": "Python", ".js": "JavaScript", ".mjs": "JavaScript", ".jsx": "JavaScript",
	".ts": "TypeScript", ".tsx": "TypeScript", ".java": "Java", ".kt": "Kotlin", ".scala": "Scala", ".c": "C", ".h": "C",
	".cc": "C++", ".cpp": "C++", ".cxx": "C++", ".hpp": "C++", ".cs": "C#", ".rs": "Rust", ".php": "PHP", ".sh": "Shell",
	".bash": "Shell", ".html": "HTML", ".htm": "HTML", ".css": "CSS", ".scss": "SCSS", ".vue": "Vue", ".swift": "Swift",
	".m": "Objective-C", ".pl": "Perl", ".lua": "Lua", ".ex": "Elixir", ".exs": "Elixir", ".erl": "Erlang", ".hs": "Haskell",
	".clj": "Clojure", ".dart": "Dart", ".r": "R", ".sql": "PLpgSQL", ".ps1": "PowerShell", ".groovy": "Groovy",
	".tf": "HCL", ".hcl": "HCL", ".vim": "Vim Script", ".el": "Emacs Lisp", ".ml": "OCaml", ".fs": "F#", ".zig": "Zig",
	".nix": "Nix", ".jl": "Julia", ".svelte": "Svelte", ".coffee": "CoffeeScript", ".makefile": "Makefile",
}

// Languages returns the share (percent, two decimals) of each language in
// the tree at rev, by bytes.
func (r *Repo) Languages(ctx context.Context, rev string) (map[string]float64, error) {
	out, err := r.run(ctx, git.Command{Name: "ls-tree", Flags: []git.Flag{{Name: "-r"}, {Name: "-l"}, {Name: "-z"}, {Name: "--full-tree"}},
		Args: []string{rev}}, git.Options{})
	if err != nil {
		return nil, err
	}
	bytesBy := map[string]int64{}
	var total int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) {
		if i := bytes.IndexByte(data, 0); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		// "<mode> blob <id> <size>\t<path>"
		meta, p, ok := strings.Cut(sc.Text(), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[1] != "blob" {
			continue
		}
		size, err := strconv.ParseInt(f[3], 10, 64)
		if err != nil {
			continue
		}
		name := path.Base(p)
		lang := languageByExt[strings.ToLower(path.Ext(name))]
		if name == "Makefile" {
			lang = "Makefile"
		} else if name == "Dockerfile" {
			lang = "Dockerfile"
		}
		if lang == "" || strings.HasPrefix(p, "vendor/") || strings.Contains(p, "node_modules/") {
			continue
		}
		bytesBy[lang] += size
		total += size
	}
	shares := map[string]float64{}
	for lang, n := range bytesBy {
		if total > 0 {
			shares[lang] = math.Round(float64(n)*10000/float64(total)) / 100
		}
	}
	return shares, sc.Err()
}
