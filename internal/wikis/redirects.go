package wikis

import (
	"context"
	"errors"
	"maps"

	"go.yaml.in/yaml/v3"

	"quarry/internal/git"
	"quarry/internal/git/gitrepo"
)

// redirectFiles are where a wiki keeps the old slugs of renamed pages, as
// a YAML mapping of old slug to new slug: Quarry writes the first; a
// wiki that only has the second (GitLab's name) keeps using it.
var redirectFiles = [...]string{".service/redirects.yml", ".gitlab/redirects.yml"}

// maxRedirectsSize is the largest redirect file a write updates; a larger
// one is left as it is.
const maxRedirectsSize = 512 << 10

// redirectActions returns the change to the wiki's redirect file at base
// that a page now at slug (renamed from old, "" for a new page) needs:
// old points to slug, and slug itself no longer redirects anywhere. It
// returns nothing when the file would not change, and leaves a file that
// is not a mapping of strings (or is too large) alone rather than lose
// what someone wrote there.
func redirectActions(ctx context.Context, repo *gitrepo.Repo, base git.ObjectID, slug, old string) ([]gitrepo.Action, error) {
	path, data, found, err := readRedirects(ctx, repo, base)
	if err != nil {
		return nil, err
	}
	redirects := map[string]string{}
	if found {
		if data == nil || yaml.Unmarshal(data, &redirects) != nil {
			return nil, nil
		}
		if redirects == nil { // an empty document
			redirects = map[string]string{}
		}
	}
	before := maps.Clone(redirects)
	if old != "" && old != slug {
		redirects[old] = slug
	}
	delete(redirects, slug)
	if found && maps.Equal(before, redirects) || !found && len(redirects) == 0 {
		return nil, nil
	}
	out, err := yaml.Marshal(redirects)
	if err != nil {
		return nil, err
	}
	kind := "create"
	if found {
		kind = "update"
	}
	return []gitrepo.Action{{Kind: kind, Path: path, Content: out, HasContent: true}}, nil
}

// readRedirects finds the wiki's redirect file at base: its path (the
// one to write when there is none), its content (nil when too large to
// update) and whether it exists.
func readRedirects(ctx context.Context, repo *gitrepo.Repo, base git.ObjectID) (path string, data []byte, found bool, err error) {
	if base == "" {
		return redirectFiles[0], nil, false, nil
	}
	for _, p := range redirectFiles {
		info, err := repo.ObjectAt(ctx, base, p)
		if errors.Is(err, gitrepo.ErrPathNotFound) {
			continue
		}
		if err != nil {
			return "", nil, false, err
		}
		if info.Type != "blob" || info.Size > maxRedirectsSize {
			return p, nil, true, nil
		}
		_, data, err := repo.ReadObject(ctx, string(info.OID))
		if err != nil {
			return "", nil, false, err
		}
		return p, data, true, nil
	}
	return redirectFiles[0], nil, false, nil
}
