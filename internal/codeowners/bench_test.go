package codeowners

import (
	"fmt"
	"strings"
	"testing"
)

// monorepo is a CODEOWNERS of n entries like a large monorepo's (as
// e2e's BenchmarkCodeOwners uses): a default owner, then 20 sections of
// single files (most), directories, documentation at any depth and
// wildcard patterns, about 100 bytes a line; and 300 changed paths
// spread over it.
func monorepo(n int) (data []byte, paths []string) {
	var b strings.Builder
	b.WriteString("* @colead-00\n")
	for i := 0; i < n-1; i++ {
		if i%(n/20+1) == 0 {
			fmt.Fprintf(&b, "\n[Team %02d area]\n", i/(n/20+1))
		}
		area := i % 50
		owners := fmt.Sprintf("@colead-%02d @platform/team-%02d", i%20, (i/7)%20)
		if i%2 == 1 {
			owners += " @platform/reviewers"
		}
		switch i % 10 {
		case 0, 1, 2, 3, 4, 5:
			fmt.Fprintf(&b, "/app/services/billing_area_%02d/module_%06d/handler_%06d_processor.rb %s\n", area, i, i, owners)
		case 6:
			fmt.Fprintf(&b, "/lib/components/shared_area_%02d/component_%06d/ %s\n", area, i, owners)
		case 7:
			fmt.Fprintf(&b, "docs/area_%02d/guides/guide_number_%06d.md %s\n", area, i, owners)
		case 8:
			fmt.Fprintf(&b, "/spec/services/billing_area_%02d/**/handler_%06d_*_spec.rb %s\n", area, i, owners)
		case 9:
			fmt.Fprintf(&b, "/config/environments/area_%02d/*_settings_%06d.y*ml %s\n", area, i, owners)
		}
	}
	for j := 0; len(paths) < 300; j++ {
		i := (j * 7919) % (n - 1)
		area := i % 50
		var p string
		switch {
		case j%10 == 9:
			p = fmt.Sprintf("tools/scripts/unowned_%04d.sh", j)
		case i%10 <= 5:
			p = fmt.Sprintf("app/services/billing_area_%02d/module_%06d/handler_%06d_processor.rb", area, i, i)
		case i%10 == 6:
			p = fmt.Sprintf("lib/components/shared_area_%02d/component_%06d/src/main_%d.rb", area, i, j)
		case i%10 == 7:
			p = fmt.Sprintf("engines/x/docs/area_%02d/guides/guide_number_%06d.md", area, i)
		case i%10 == 8:
			p = fmt.Sprintf("spec/services/billing_area_%02d/unit/deep/handler_%06d_%d_spec.rb", area, i, j)
		default:
			p = fmt.Sprintf("config/environments/area_%02d/prod_settings_%06d.yaml", area, i)
		}
		paths = append(paths, p)
	}
	return []byte(b.String()), paths
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
