// Package codeownerstest builds CODEOWNERS files for tests and benchmarks.
package codeownerstest

import (
	"fmt"
	"strings"
)

// Monorepo is a CODEOWNERS of n entries shaped like a large monorepo's: a
// default owner for everything, then 20 sections whose entries name single
// files (most), directories, documentation at any depth and wildcard
// patterns, each with one or two of 40 owners (users @colead-NN and groups
// @platform/team-NN, @platform/reviewers). Lines average about 100 bytes,
// so 10,000 entries come close to 1 MiB.
func Monorepo(n int) string {
	var b strings.Builder
	b.WriteString("# Code owners of the benchmark monorepo.\n# Each team owns its area; the platform team owns the rest.\n\n* @colead-00\n")
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
	return b.String()
}

// MonorepoChanges are count changed paths against Monorepo(n): paths each
// kind of entry owns, spread over the file, and a tenth that only the
// default owner owns.
func MonorepoChanges(n, count int) []string {
	var paths []string
	for j := 0; len(paths) < count; j++ {
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
	return paths
}
