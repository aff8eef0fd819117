package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// release is the payload's top-level "release" object: the job's
// release: keyword as written (Quarry's server sends it beside the
// release step, whose script is GitLab's release-cli command line). With
// it, the release step is run here, without release-cli: the release is
// made through the Releases API with the job token.
type release struct {
	TagName     string        `json:"tag_name"`
	TagMessage  string        `json:"tag_message"`
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Ref         string        `json:"ref"`
	ReleasedAt  string        `json:"released_at"`
	Milestones  []string      `json:"milestones"`
	Links       []releaseLink `json:"links"`
}

type releaseLink struct {
	Name            string `json:"name"`
	URL             string `json:"url"`
	Filepath        string `json:"filepath,omitempty"`
	DirectAssetPath string `json:"direct_asset_path,omitempty"`
	LinkType        string `json:"link_type,omitempty"`
}

// createRelease is the body of POST /projects/:id/releases.
type createRelease struct {
	TagName    string   `json:"tag_name"`
	TagMessage string   `json:"tag_message,omitempty"`
	Name       string   `json:"name,omitempty"`
	Desc       string   `json:"description"`
	Ref        string   `json:"ref,omitempty"`
	ReleasedAt string   `json:"released_at,omitempty"`
	Milestones []string `json:"milestones,omitempty"`
	Assets     *struct {
		Links []releaseLink `json:"links"`
	} `json:"assets,omitempty"`
}

// maxDescriptionFile bounds a description read from a file, as the
// Releases API bounds a description.
const maxDescriptionFile = 1 << 20

// runRelease makes the job's release as release-cli would: every field
// has the job's variables expanded ($VAR, ${VAR}, as the shell would in
// the double-quoted release-cli arguments), tag_name defaults to
// $CI_COMMIT_TAG and ref to $CI_COMMIT_SHA, and a description naming a
// file of the work tree is that file's text. A refusal (409: the release
// exists; 403; 422 …) is written to the log and fails the step with exit
// code 1, as a failed release-cli does.
func (b *build) runRelease(ctx context.Context, s step) error {
	r := b.job.Release
	for _, l := range s.Script {
		b.trace.Printf("%s$ %s%s\n", ansiBoldGreen, l, ansiReset)
	}
	lookup := func(k string) (string, bool) { v, ok := b.vars[k]; return v, ok }
	x := func(s string) string { return expand(s, lookup) }
	in := createRelease{TagName: x(r.TagName), TagMessage: x(r.TagMessage), Name: x(r.Name), Desc: x(r.Description),
		Ref: x(r.Ref), ReleasedAt: x(r.ReleasedAt)}
	if in.TagName == "" {
		in.TagName = b.variable("CI_COMMIT_TAG")
	}
	if in.Ref == "" {
		in.Ref = b.variable("CI_COMMIT_SHA")
	}
	for _, m := range r.Milestones {
		in.Milestones = append(in.Milestones, x(m))
	}
	if len(r.Links) > 0 {
		in.Assets = &struct {
			Links []releaseLink `json:"links"`
		}{}
		for _, l := range r.Links {
			in.Assets.Links = append(in.Assets.Links, releaseLink{Name: x(l.Name), URL: x(l.URL), Filepath: x(l.Filepath),
				DirectAssetPath: x(l.DirectAssetPath), LinkType: x(l.LinkType)})
		}
	}
	if text, ok, err := b.descriptionFile(in.Desc); err != nil {
		return b.releaseFailed(in.TagName, err)
	} else if ok {
		in.Desc = text
	}
	b.trace.Printf("level=info msg=\"Creating Release...\" cli=quarry-runner command=create name=%q project-id=%d tag-name=%q ref=%q\n",
		in.Name, b.job.JobInfo.ProjectID, in.TagName, in.Ref)
	if err := b.r.c.createRelease(ctx, b.job.JobInfo.ProjectID, b.job.Token, in); err != nil {
		return b.releaseFailed(in.TagName, err)
	}
	b.trace.Printf("level=info msg=\"Release created successfully!\" cli=quarry-runner command=create tag-name=%q\n", in.TagName)
	return nil
}

func (b *build) releaseFailed(tag string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	b.trace.Printf("%slevel=fatal msg=\"run app\" cli=quarry-runner tag-name=%q error=%q%s\n", ansiBoldRed, tag,
		"failed to create release: "+err.Error(), ansiReset)
	return &scriptError{Code: 1}
}

// descriptionFile is release-cli's description-from-a-file: a relative
// path of a regular file inside the work tree (never outside it).
func (b *build) descriptionFile(desc string) (string, bool, error) {
	if desc == "" || strings.ContainsAny(desc, "\n\x00") || filepath.IsAbs(desc) || !filepath.IsLocal(desc) {
		return "", false, nil
	}
	root, err := os.OpenRoot(b.dir)
	if err != nil {
		return "", false, nil
	}
	defer root.Close()
	f, err := root.Open(desc)
	if err != nil {
		return "", false, nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", false, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxDescriptionFile+1))
	switch {
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("read description file %q: %w", desc, err)
	case len(data) > maxDescriptionFile:
		return "", false, fmt.Errorf("description file %q is larger than %d bytes", desc, maxDescriptionFile)
	}
	return string(data), true, nil
}

// createRelease makes a release of project with the job token
// (POST /projects/:id/releases, JOB-TOKEN).
func (c *client) createRelease(ctx context.Context, project int64, token string, in createRelease) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	resp, err := c.doJSON(ctx, http.MethodPost, "projects/"+strconv.FormatInt(project, 10)+"/releases", in,
		http.Header{"Job-Token": {token}})
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusCreated {
		e := errorFrom(resp)
		return fmt.Errorf("API Error Response status_code: %d message: %s", e.Code, e.Message)
	}
	var out struct {
		TagName string `json:"tag_name"`
	}
	return readJSON(resp, &out)
}
