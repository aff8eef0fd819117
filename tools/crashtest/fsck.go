package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// fsckTimeout bounds git fsck of one repository.
const fsckTimeout = 5 * time.Minute

// repositories lists the bare repositories under root (projects'
// <hash>.git and wikis' <hash>.wiki.git, at hashed paths and under
// @groups): every folder named *.git that holds a HEAD.
func repositories(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || !strings.HasSuffix(d.Name(), ".git") {
			return nil
		}
		if _, err := os.Stat(filepath.Join(path, "HEAD")); err == nil {
			out = append(out, path)
			return filepath.SkipDir
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return out, err
}

// fsck runs git fsck --full on the repository at dir; it returns what
// git reported when the check fails.
func fsck(ctx context.Context, dir string, env []string) error {
	ctx, cancel := context.WithTimeout(ctx, fsckTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "--git-dir", dir, "fsck", "--full", "--no-progress", "--no-dangling")
	cmd.Env = env
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if lines := strings.Split(msg, "\n"); len(lines) > 5 {
			msg = strings.Join(lines[:5], "; ") + fmt.Sprintf("; … (%d lines)", len(lines))
		}
		return fmt.Errorf("%w: %s", err, strings.ReplaceAll(msg, "\n", "; "))
	}
	return nil
}

// staleLocks lists the lock files git left in the repository at dir
// (index.lock, refs/heads/x.lock, packed-refs.lock, config.lock…). With
// the server stopped, any left is one a killed writer never removed:
// the next update of what it locks fails until someone deletes it.
func staleLocks(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".lock") {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}
