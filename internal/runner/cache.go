package runner

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
)

// The runner's local cache, as gitlab-runner's shell executor keeps one
// without a distributed cache: one zip per project and key,
// <cache_dir>/project-<id>/<key>/cache.zip. The key is the one the server
// sent (GitLab's suffixes included) with the job's variables expanded.
// Restoring tries the key, then its fallback keys, then CACHE_FALLBACK_KEY;
// a cache that cannot be restored or saved is a warning, never a failure.

// cache is one entry of the payload's cache.
type cache struct {
	Key          string   `json:"key"`
	Untracked    bool     `json:"untracked"`
	Paths        []string `json:"paths"`
	Policy       string   `json:"policy"` // pull-push (default), pull, push; may be a variable
	When         string   `json:"when"`   // on_success (default), on_failure, always
	FallbackKeys []string `json:"fallback_keys"`
}

// expandVar expands $VAR in s with the job's variables.
func (b *build) expandVar(s string) string {
	return expand(s, func(k string) (string, bool) { v, ok := b.vars[k]; return v, ok })
}

// cacheFile is where a key's archive lives; "" for a key that would leave
// the project's cache folder.
func (b *build) cacheFile(key string) string {
	if key == "" || strings.ContainsAny(key, "\x00\\") || strings.HasPrefix(key, "/") {
		return ""
	}
	clean := path.Clean(key)
	if clean != key || clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return ""
	}
	return filepath.Join(b.r.cfg.CacheDir, "project-"+strconv.FormatInt(b.job.JobInfo.ProjectID, 10), filepath.FromSlash(key), "cache.zip")
}

// cachePolicy is a cache's policy, expanded; ok is false for an unknown
// one.
func (b *build) cachePolicy(c cache) (pull, push, ok bool) {
	switch b.expandVar(c.Policy) {
	case "", "pull-push":
		return true, true, true
	case "pull":
		return true, false, true
	case "push":
		return false, true, true
	}
	return false, false, false
}

// restoreCaches extracts each pulled cache: the first of its keys that
// has an archive.
func (b *build) restoreCaches() {
	for _, c := range b.job.Cache {
		pull, _, ok := b.cachePolicy(c)
		if !ok {
			b.trace.Printf("%sWARNING: unknown cache policy %q; skipping cache%s\n", ansiYellow, b.expandVar(c.Policy), ansiReset)
			continue
		}
		if !pull {
			b.trace.Printf("Not downloading cache %s due to policy\n", b.expandVar(c.Key))
			continue
		}
		keys := []string{b.expandVar(c.Key)}
		for _, k := range c.FallbackKeys {
			keys = append(keys, b.expandVar(k))
		}
		// As gitlab-runner: the runner-wide fallback may not reach into
		// protected caches.
		if k := b.variable("CACHE_FALLBACK_KEY"); k != "" && !strings.HasSuffix(k, "-protected") {
			keys = append(keys, k)
		}
		for _, key := range keys {
			if b.restoreCache(key) {
				break
			}
		}
	}
}

func (b *build) restoreCache(key string) bool {
	b.trace.Printf("Checking cache for %s...\n", key)
	file := b.cacheFile(key)
	if file == "" {
		b.trace.Printf("%sWARNING: cache key %q is not a valid path; skipping%s\n", ansiYellow, key, ansiReset)
		return false
	}
	f, err := os.Open(file)
	if err != nil {
		b.trace.Printf("%sWARNING: file does not exist%s\n", ansiYellow, ansiReset)
		b.trace.Printf("%sFailed to extract cache%s\n", ansiYellow, ansiReset)
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil {
		_, err = extractZip(f, st.Size(), b.dir)
	}
	if err != nil {
		b.trace.Printf("%sWARNING: %v%s\n", ansiYellow, err, ansiReset)
		b.trace.Printf("%sFailed to extract cache%s\n", ansiYellow, ansiReset)
		return false
	}
	b.trace.Printf("Successfully extracted cache\n")
	return true
}

// wantsCaches reports whether some cache is saved for a job that failed
// (or not).
func (b *build) wantsCaches(failed bool) bool {
	for _, c := range b.job.Cache {
		if _, push, _ := b.cachePolicy(c); push && uploadsWhen(c.When, failed) {
			return true
		}
	}
	return false
}

// archiveCaches saves each pushed cache whose when fits the job's result.
func (b *build) archiveCaches(ctx context.Context, failed bool) {
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		b.trace.Printf("%sWARNING: %v%s\n", ansiYellow, err, ansiReset)
		return
	}
	defer root.Close()
	for _, c := range b.job.Cache {
		_, push, ok := b.cachePolicy(c)
		if !ok || !uploadsWhen(c.When, failed) {
			continue
		}
		key := b.expandVar(c.Key)
		if !push {
			b.trace.Printf("Not uploading cache %s due to policy\n", key)
			continue
		}
		b.trace.Printf("Creating cache %s...\n", key)
		file := b.cacheFile(key)
		if file == "" {
			b.trace.Printf("%sWARNING: cache key %q is not a valid path; skipping%s\n", ansiYellow, key, ansiReset)
			continue
		}
		var untracked []string
		if c.Untracked {
			if untracked, err = b.untrackedFiles(ctx); err != nil {
				b.trace.Printf("%sWARNING: untracked: %v%s\n", ansiYellow, err, ansiReset)
			}
		}
		sel := selectArtifacts(root.FS(), b.dir, c.Paths, untracked, nil)
		for i, p := range c.Paths {
			b.trace.Printf("%s: found %d matching artifact files and directories\n", p, sel.Found[i])
		}
		for _, w := range sel.Warnings {
			b.trace.Printf("%sWARNING: %s%s\n", ansiYellow, w, ansiReset)
		}
		if len(sel.Names) == 0 {
			b.trace.Printf("%sWARNING: No files to archive%s\n", ansiYellow, ansiReset)
			continue
		}
		if err := writeCacheFile(file, root, sel.Names); err != nil {
			b.trace.Printf("%sWARNING: %v%s\n", ansiYellow, err, ansiReset)
			b.trace.Printf("%sFailed to create cache%s\n", ansiYellow, ansiReset)
			continue
		}
		b.trace.Printf("Created cache\n")
	}
}

// writeCacheFile writes the archive beside file and renames it into
// place, so a job restoring the key never reads half of it.
func writeCacheFile(file string, root *os.Root, names []string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(file), ".cache-*.zip")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // gone after the rename; cleans up on failure
	if err := writeZip(f, root, names); err != nil {
		f.Close()
		return fmt.Errorf("archive cache: %w", err)
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), file)
}
