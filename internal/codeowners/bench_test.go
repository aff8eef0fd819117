package codeowners

import (
	"strings"
	"testing"

	"quarry/internal/codeowners/codeownerstest"
)

// monorepo is codeownerstest's monorepo file of n entries and 300 paths
// changed against it.
func monorepo(n int) (data []byte, paths []string) {
	return []byte(codeownerstest.Monorepo(n)), codeownerstest.MonorepoChanges(n, 300)
}

// BenchmarkOwnersFor: the owners of 300 changed paths in a CODEOWNERS of
// 10,000 entries (about 1 MiB), from the bytes (parse, index, match) and
// with the file indexed already; and the same with every entry a
// wildcard pattern, which no lookup finds.
func BenchmarkOwnersFor(b *testing.B) {
	data, paths := monorepo(MaxEntries)
	if len(data) > MaxFileBytes {
		b.Fatalf("%d bytes", len(data))
	}
	wild := []byte(strings.NewReplacer("/module_", "/mod*_", "/component_", "/comp*nent_", "/guide_number_", "/guide_n?mber_").Replace(string(data)))
	for _, c := range []struct {
		name string
		data []byte
	}{{"monorepo", data}, {"wildcards", wild}} {
		f, errs := Parse(c.data)
		if len(errs) != 0 {
			b.Fatal(errs)
		}
		if got := f.OwnersFor(paths); len(got) != 21 {
			b.Fatalf("%d sections own the paths", len(got))
		}
		b.Run(c.name+"/parse+index+match", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				f, _ := Parse(c.data)
				f.Index().OwnersFor(paths)
			}
		})
		ix := f.Index()
		b.Run(c.name+"/match", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ix.OwnersFor(paths)
			}
		})
	}
}
