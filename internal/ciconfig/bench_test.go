package ciconfig

import (
	"os"
	"testing"
)

// BenchmarkLoad_fiftyJobs and BenchmarkSeed_fiftyJobs measure the
// configuration the CI engine's benchmark uses.
func BenchmarkLoad_fiftyJobs(b *testing.B) {
	src, err := os.ReadFile("testdata/golden/fifty_jobs.yml")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Load(src, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSeed_fiftyJobs(b *testing.B) {
	src, err := os.ReadFile("testdata/golden/fifty_jobs.yml")
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := Load(src, Options{})
	if err != nil {
		b.Fatal(err)
	}
	in := push("main", "CI_DEFAULT_BRANCH", "main")
	for b.Loop() {
		if _, err := cfg.Seed(in); err != nil {
			b.Fatal(err)
		}
	}
}
