package ci

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/ciconfig"
	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Cache keys as GitLab sends them to runners. A job's cache: entries are
// turned into keys in two steps, both GitLab's:
//
//  1. the key itself (Gitlab::Ci::Pipeline::Seed::Build::Cache): cache:key
//     as written, or for key:files / key:files_commits the prefix (default:
//     the cache's position in the job's list) and the SHA-1 of the files'
//     blob ids / last commits at the pipeline's commit, or "default";
//  2. the suffixes (Ci::Build#cache): "-<jobs_cache_index>" once the
//     project's runner caches have been cleared, then, when the project
//     keeps caches separated (ci_separated_caches, default true),
//     "-protected" or "-non_protected". Fallback keys get the same
//     suffixes.
//
// Variables in keys are left for the runner to expand, as GitLab does.

// cacheScope is what a job's cache keys depend on besides its cache:.
type cacheScope struct {
	Index     *int64 // the project's jobs_cache_index; nil before any clear
	Separated bool   // the project's ci_separated_caches
	// Protected: the pipeline's ref is protected, or the job's user is a
	// maintainer of the project (GitLab's uses_protected_cache?).
	Protected bool
}

// suffixed adds the scope's suffixes to a cache's key and fallback keys.
func (sc cacheScope) suffixed(key string, fallback []string, unprotect bool) (string, []string) {
	out := slices.Clone(fallback)
	if out == nil {
		out = []string{}
	}
	add := func(suffix string) {
		key += "-" + suffix
		for i := range out {
			out[i] += "-" + suffix
		}
	}
	if sc.Index != nil {
		add(strconv.FormatInt(*sc.Index, 10))
	}
	if sc.Separated {
		if sc.Protected && !unprotect {
			add("protected")
		} else {
			add("non_protected")
		}
	}
	return key, out
}

// filesKey is the key of a key:files or key:files_commits cache: its
// prefix (the cache's position when none is written) and the digest of
// ids, joined by "-".
func filesKey(prefix string, position int, ids []string) string {
	if prefix == "" {
		prefix = strconv.Itoa(position)
	}
	return prefix + "-" + filesDigest(ids)
}

// filesDigest is GitLab's digest of the ids found for a key's files: the
// SHA-1 of the distinct ids, sorted, joined by "-"; "default" when no
// file was found.
func filesDigest(ids []string) string {
	ids = slices.Clone(ids)
	ids = slices.DeleteFunc(ids, func(s string) bool { return s == "" })
	if len(ids) == 0 {
		return "default"
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	sum := sha1.Sum([]byte(strings.Join(ids, "-")))
	return hex.EncodeToString(sum[:])
}

// wildcardPattern is GitLab's search_files_by_wildcard_path: "**" is
// anything, "*" anything but "/", the rest literal, the whole path
// matched. A glob that is not UTF-8 is an error (it matches nothing).
func wildcardPattern(glob string) (*regexp.Regexp, error) {
	if !utf8.ValidString(glob) {
		return nil, errors.New("wildcard is not UTF-8")
	}
	q := regexp.QuoteMeta(glob)
	q = strings.ReplaceAll(q, `\*\*`, "\x00")
	q = strings.ReplaceAll(q, `\*`, `[^/]*?`)
	q = strings.ReplaceAll(q, "\x00", `.*?`)
	return regexp.Compile("^" + q + "$")
}

// maxKeyTreeEntries bounds the listing a wildcard in key:files is matched
// against; a larger tree matches nothing beyond it.
const maxKeyTreeEntries = 100000

// keyFileIDs are the ids key:files (blob ids of the files' contents,
// wildcards expanded) or key:files_commits (the last commit that changed
// each path) stand for at commit; paths that name nothing are left out.
func keyFileIDs(ctx context.Context, repo *gitrepo.Repo, commit git.ObjectID, files []string, commits bool) ([]string, error) {
	var ids []string
	var tree []gitrepo.TreeEntry
	for _, f := range files {
		if f == "" || strings.ContainsAny(f, "\x00\n\r") {
			continue
		}
		if commits {
			id, err := repo.LastCommit(ctx, commit, f)
			if errors.Is(err, gitrepo.ErrPathNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("last commit of %q at %s: %w", f, commit, err)
			}
			ids = append(ids, string(id))
			continue
		}
		if !strings.Contains(f, "*") {
			info, err := repo.ObjectAt(ctx, commit, f)
			if errors.Is(err, gitrepo.ErrPathNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("blob %q at %s: %w", f, commit, err)
			}
			if info.Type == "blob" {
				ids = append(ids, string(info.OID))
			}
			continue
		}
		re, err := wildcardPattern(f)
		if err != nil {
			continue
		}
		if tree == nil {
			if tree, err = repo.Tree(ctx, commit, "", true); err != nil {
				return nil, fmt.Errorf("list %s: %w", commit, err)
			}
			if len(tree) > maxKeyTreeEntries {
				tree = tree[:maxKeyTreeEntries]
			}
		}
		for _, e := range tree {
			if e.Type == "blob" && re.MatchString(e.Path) {
				ids = append(ids, e.ID)
			}
		}
	}
	return ids, nil
}

// requestCaches are the payload's cache entries for a job of pipeline pl
// in project p: keys computed and suffixed as GitLab's.
func (s *Service) requestCaches(ctx context.Context, p model.Project, pl model.Pipeline, j model.Job, caches []ciconfig.Cache) ([]RequestCache, error) {
	out := []RequestCache{}
	if len(caches) == 0 {
		return out, nil
	}
	sc, err := s.cacheScope(ctx, p, pl, j)
	if err != nil {
		return nil, err
	}
	var repo *gitrepo.Repo
	for i, c := range caches {
		key := c.Key
		if files, commits := c.KeyFiles, false; len(files) > 0 || len(c.KeyFilesCommits) > 0 {
			if len(files) == 0 {
				files, commits = c.KeyFilesCommits, true
			}
			if repo == nil {
				if repo, err = s.repo(p); err != nil {
					return nil, err
				}
			}
			ids, err := keyFileIDs(ctx, repo, git.ObjectID(pl.SHA), files, commits)
			if err != nil {
				return nil, err
			}
			key = filesKey(c.KeyPrefix, i, ids)
		} else if key == "" {
			key = "default"
		}
		when, policy := c.When, c.Policy
		if when == "" {
			when = "on_success"
		}
		if policy == "" {
			policy = "pull-push"
		}
		key, fallback := sc.suffixed(key, c.FallbackKeys, c.Unprotect)
		out = append(out, RequestCache{Key: key, Untracked: c.Untracked, Paths: nonNil(c.Paths), Policy: policy, When: when,
			FallbackKeys: fallback})
	}
	return out, nil
}

// cacheScope reads what a job's cache keys depend on: the project's
// cache index and separation, the pipeline's protection, and whether
// the job's user is a maintainer (whose jobs use the protected cache
// even on an unprotected ref, as GitLab's).
func (s *Service) cacheScope(ctx context.Context, p model.Project, pl model.Pipeline, j model.Job) (cacheScope, error) {
	idx, err := s.db.JobsCacheIndex(ctx, p.ID)
	if err != nil {
		return cacheScope{}, err
	}
	sc := cacheScope{Index: idx, Separated: p.Settings.SeparatedCaches(), Protected: pl.Protected}
	if sc.Separated && !sc.Protected && j.UserID != 0 {
		acc, err := s.db.ProjectAccess(ctx, j.UserID, p.ID, s.now().UTC().Format(model.DateLayout))
		if err != nil {
			return cacheScope{}, err
		}
		sc.Protected = acc >= model.Maintainer
	}
	return sc, nil
}

// ResetCache clears a project's runner caches, GitLab's "Clear runner
// caches" (ResetProjectCacheService): the project's cache index goes up
// by one, so every key a job is sent from now on differs from the keys
// of earlier caches. Maintainers; the new index is returned.
func (s *Service) ResetCache(ctx context.Context, a auth.Actor, ref string) (int64, error) {
	p, _, err := s.project(ctx, a, ref, auth.AdminCI)
	if err != nil {
		return 0, err
	}
	var idx int64
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		idx, err = tx.BumpJobsCacheIndex(ctx, p.ID)
		return err
	})
	return idx, err
}
