package gitrepo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"quarry/internal/git"
)

// Ref is a branch or tag with what it points at.
type Ref struct {
	Name   string
	Target git.ObjectID // the object the ref names (tag object for annotated tags)
	Commit git.ObjectID // the commit it resolves to
	// Annotated tags only.
	Message string
	Tagger  Person
}

// Refs lists branches ("refs/heads/") or tags ("refs/tags/"), by name.
func (r *Repo) Refs(ctx context.Context, prefix string) ([]Ref, error) {
	out, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{
		{Name: "--format", Value: "%(refname)%00%(objectname)%00%(*objectname)%00%(objecttype)%00%(taggername) %(taggeremail) %(taggerdate:raw)%00%(contents)%01"},
		{Name: "--sort", Value: "refname"}}, Args: []string{prefix}}, git.Options{})
	if err != nil {
		return nil, err
	}
	var refs []Ref
	for _, rec := range bytes.Split(out, []byte{1}) {
		rec = bytes.TrimLeft(rec, "\n")
		if len(rec) == 0 {
			continue
		}
		f := strings.SplitN(string(rec), "\x00", 6)
		if len(f) < 6 {
			continue
		}
		ref := Ref{Name: strings.TrimPrefix(f[0], prefix), Target: git.ObjectID(f[1]), Commit: git.ObjectID(f[1])}
		if f[3] == "tag" {
			ref.Commit = git.ObjectID(f[2])
			ref.Message = strings.TrimSpace(f[5])
			ref.Tagger = parsePerson(f[4])
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

// MergedBranches lists the branches merged into commit.
func (r *Repo) MergedBranches(ctx context.Context, commit git.ObjectID) (map[string]bool, error) {
	names, err := r.refNames(ctx, "--merged", commit, "refs/heads/")
	m := map[string]bool{}
	for _, n := range names {
		m[strings.TrimPrefix(n, "refs/heads/")] = true
	}
	return m, err
}

// RefsContaining lists the full names of the refs under prefixes whose
// history contains commit, sorted.
func (r *Repo) RefsContaining(ctx context.Context, commit git.ObjectID, prefixes ...string) ([]string, error) {
	return r.refNames(ctx, "--contains", commit, prefixes...)
}

// refNames runs for-each-ref with a commit filter (--merged, --contains).
func (r *Repo) refNames(ctx context.Context, filter string, commit git.ObjectID, prefixes ...string) ([]string, error) {
	out, err := r.run(ctx, git.Command{Name: "for-each-ref", Flags: []git.Flag{{Name: "--format", Value: "%(refname)"},
		{Name: filter, Value: string(commit)}}, Args: prefixes}, git.Options{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if n != "" {
			names = append(names, n)
		}
	}
	return names, nil
}

// ErrRefExists reports a branch or tag that already exists.
var ErrRefExists = errors.New("ref exists")

// ErrRefHierarchy is a ref that cannot exist beside another: "a" and "a/b".
var ErrRefHierarchy = errors.New("ref conflicts with the ref hierarchy")

// CreateRef creates a ref at an object, failing if it exists.
func (r *Repo) CreateRef(ctx context.Context, ref string, target git.ObjectID) error {
	err := r.UpdateRef(ctx, ref, target, "")
	if errors.Is(err, ErrRefMoved) {
		// "'refs/heads/a' exists; cannot create 'refs/heads/a/b'" is a
		// clash of hierarchy, not the same name.
		if strings.Contains(err.Error(), "cannot create") {
			return fmt.Errorf("%w: %v", ErrRefHierarchy, err)
		}
		return ErrRefExists
	}
	return err
}

// DeleteRef deletes a ref if it still points at old.
func (r *Repo) DeleteRef(ctx context.Context, ref string, old git.ObjectID) error {
	_, err := r.run(ctx, git.Command{Name: "update-ref", Flags: []git.Flag{{Name: "-d"}}, Args: []string{ref, string(old)}}, git.Options{})
	return err
}

// CreateAnnotatedTag writes a tag object for commit and the ref to it.
func (r *Repo) CreateAnnotatedTag(ctx context.Context, name string, commit git.ObjectID, message string, tagger Signature) (git.ObjectID, error) {
	var b strings.Builder
	b.WriteString("object " + string(commit) + "\ntype commit\ntag " + name + "\n")
	b.WriteString("tagger " + tagger.Name + " <" + tagger.Email + "> " + strconv.FormatInt(tagger.When.Unix(), 10) + " +0000\n\n")
	b.WriteString(strings.TrimRight(message, "\n") + "\n")
	out, err := r.run(ctx, git.Command{Name: "hash-object", Flags: []git.Flag{{Name: "-t", Value: "tag"}, {Name: "-w"}, {Name: "--stdin"}}},
		git.Options{Stdin: strings.NewReader(b.String())})
	if err != nil {
		return "", err
	}
	id := git.ObjectID(strings.TrimSpace(string(out)))
	return id, r.CreateRef(ctx, "refs/tags/"+name, id)
}

// LogOptions select commits for Log.
type LogOptions struct {
	Rev         string // start revision (ignored with All)
	All         bool
	Path        string
	Since       *time.Time
	Until       *time.Time
	Author      string
	FirstParent bool
	Skip, Max   int
}

func (o LogOptions) command(name string, extra ...git.Flag) git.Command {
	c := git.Command{Name: name, Flags: extra}
	if o.Since != nil {
		c.Flags = append(c.Flags, git.Flag{Name: "--since", Value: o.Since.Format(time.RFC3339)})
	}
	if o.Until != nil {
		c.Flags = append(c.Flags, git.Flag{Name: "--until", Value: o.Until.Format(time.RFC3339)})
	}
	if o.Author != "" {
		c.Flags = append(c.Flags, git.Flag{Name: "--author", Value: o.Author})
	}
	if o.FirstParent {
		c.Flags = append(c.Flags, git.Flag{Name: "--first-parent"})
	}
	if o.All {
		c.Flags = append(c.Flags, git.Flag{Name: "--all"})
	} else {
		c.Args = []string{o.Rev}
	}
	if o.Path != "" {
		c.PathArgs = []string{o.Path}
	}
	return c
}

// Log lists commit ids newest first.
func (r *Repo) Log(ctx context.Context, o LogOptions) ([]git.ObjectID, error) {
	flags := []git.Flag{}
	if o.Skip > 0 {
		flags = append(flags, git.Flag{Name: "--skip", Value: strconv.Itoa(o.Skip)})
	}
	if o.Max > 0 {
		flags = append(flags, git.Flag{Name: "--max-count", Value: strconv.Itoa(o.Max)})
	}
	out, err := r.run(ctx, o.command("rev-list", flags...), git.Options{})
	if err != nil {
		return nil, err
	}
	var ids []git.ObjectID
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			ids = append(ids, git.ObjectID(l))
		}
	}
	return ids, sc.Err()
}

// CountCommits counts the commits Log would list without paging.
func (r *Repo) CountCommits(ctx context.Context, o LogOptions) (int, error) {
	out, err := r.run(ctx, o.command("rev-list", git.Flag{Name: "--count"}), git.Options{})
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(out)))
}
