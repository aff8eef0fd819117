package gitrepo

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/dsnet/compress/bzip2"

	"quarry/internal/git"
)

// ArchiveFormats maps the API's format names to how the archive is made.
var ArchiveFormats = map[string]string{
	"tar.gz": "tar.gz", "tgz": "tar.gz", "gz": "tar.gz",
	"tar.bz2": "tar.bz2", "tbz": "tar.bz2", "tbz2": "tar.bz2", "tb2": "tar.bz2", "bz2": "tar.bz2",
	"tar": "tar", "zip": "zip",
}

// ArchiveFormatNames lists the format names, sorted.
func ArchiveFormatNames() []string {
	names := make([]string, 0, len(ArchiveFormats))
	for n := range ArchiveFormats {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Archive streams an archive of commit (limited to path when set) with
// every member under prefix/. The returned reader must be closed.
func (r *Repo) Archive(ctx context.Context, commit git.ObjectID, format, prefix, path string) (io.ReadCloser, error) {
	kind, ok := ArchiveFormats[format]
	if !ok {
		return nil, fmt.Errorf("unknown archive format %q", format)
	}
	gitFormat := "tar"
	if kind == "zip" {
		gitFormat = "zip"
	}
	c := git.Command{Name: "archive", Flags: []git.Flag{{Name: "--format", Value: gitFormat}, {Name: "--prefix", Value: prefix + "/"}},
		Args: []string{string(commit)}}
	if path != "" {
		c.PathArgs = []string{path}
	}
	proc, err := r.runner.Start(ctx, r.path, c)
	if err != nil {
		return nil, err
	}
	proc.Stdin.Close()
	pr, pw := io.Pipe()
	go func() {
		var err error
		switch kind {
		case "tar.gz":
			zw, _ := gzip.NewWriterLevel(pw, gzip.BestSpeed)
			if _, err = io.Copy(zw, proc.Stdout); err == nil {
				err = zw.Close()
			}
		case "tar.bz2":
			bw, werr := bzip2.NewWriter(pw, &bzip2.WriterConfig{Level: bzip2.BestSpeed})
			if err = werr; err == nil {
				if _, err = io.Copy(bw, proc.Stdout); err == nil {
					err = bw.Close()
				}
			}
		default:
			_, err = io.Copy(pw, proc.Stdout)
		}
		if werr := proc.Wait(); err == nil {
			err = werr
		}
		pw.CloseWithError(err)
	}()
	return pr, nil
}
