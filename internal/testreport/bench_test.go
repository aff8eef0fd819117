package testreport

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkBuild parses a job of 10,000 cases, a tenth of them failing.
func BenchmarkBuild(b *testing.B) {
	var doc strings.Builder
	doc.WriteString(`<?xml version="1.0" encoding="UTF-8"?><testsuites><testsuite name="bench">`)
	for i := range 10_000 {
		if i%10 == 0 {
			fmt.Fprintf(&doc, `<testcase classname="pkg.Class%d" name="test %d" time="0.%03d"><failure message="m">expected 1, got 2
    at pkg.Class%d.test(Class.java:%d)</failure><system-out>log line</system-out></testcase>`, i%50, i, i%1000, i%50, i)
			continue
		}
		fmt.Fprintf(&doc, `<testcase classname="pkg.Class%d" name="test %d" file="src/class%d.js" time="0.%03d"/>`, i%50, i, i%50, i%1000)
	}
	doc.WriteString(`</testsuite></testsuites>`)
	data := gz(b, doc.String())
	b.SetBytes(int64(doc.Len()))
	b.ReportAllocs()
	for b.Loop() {
		r, err := Build([]Blob{blob(1, "bench", data)}, Limits{})
		if err != nil || r.TotalCount != 10_000 {
			b.Fatalf("Build: %v, %d cases", err, r.TotalCount)
		}
	}
}
