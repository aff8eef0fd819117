package sshd

import (
	"errors"
	"strings"

	"quarry/internal/git/smarthttp"
)

// maxCommand bounds the command a client may send.
const maxCommand = 4096

// Command is a git command a client asked for over SSH: the service and
// the repository's full path (without ".git", no leading slash).
type Command struct {
	Service smarthttp.Service
	Path    string
}

// errDisallowed is gitlab-shell's answer to a command it does not run.
var errDisallowed = errors.New("disallowed command")

// msgDisallowed is what gitlab-shell prints for it.
const msgDisallowed = "Disallowed command"

// ParseCommand reads what git sends over SSH — `git-upload-pack
// 'ns/project.git'`, `git upload-pack '/ns/project.git'`,
// git-receive-pack, git-upload-archive — quoted as a POSIX shell would
// (single quotes with '\” for a quote, as git writes them; double
// quotes; backslashes). Anything else is errDisallowed.
func ParseCommand(s string) (Command, error) {
	if len(s) > maxCommand {
		return Command{}, errDisallowed
	}
	args, ok := shellWords(s)
	if !ok || len(args) == 0 {
		return Command{}, errDisallowed
	}
	if len(args) == 3 && args[0] == "git" {
		args = []string{"git-" + args[1], args[2]}
	}
	if len(args) != 2 {
		return Command{}, errDisallowed
	}
	var svc smarthttp.Service
	switch args[0] {
	case string(smarthttp.UploadPack):
		svc = smarthttp.UploadPack
	case string(smarthttp.ReceivePack):
		svc = smarthttp.ReceivePack
	case string(smarthttp.UploadArchive):
		svc = smarthttp.UploadArchive
	default:
		return Command{}, errDisallowed
	}
	p, ok := repoPath(args[1])
	if !ok {
		return Command{}, errDisallowed
	}
	return Command{Service: svc, Path: p}, nil
}

// repoPath normalises a repository argument: "/ns/p.git", "ns/p.git/",
// "~/ns/p" → "ns/p"; false for what names no repository (empty, "."
// or ".." segments, control characters, a leading "-").
func repoPath(p string) (string, bool) {
	p = strings.TrimPrefix(p, "~")
	p = strings.Trim(p, "/")
	p = strings.TrimSuffix(p, ".git")
	if p == "" || strings.HasPrefix(p, "-") || len(p) > 1024 {
		return "", false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", false
		}
	}
	for _, r := range p {
		if r < ' ' || r == 0x7f {
			return "", false
		}
	}
	return p, true
}

// shellWords splits s into words as a POSIX shell would, without
// expansions; false for an unterminated quote or a trailing backslash.
func shellWords(s string) ([]string, bool) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
			inWord = true
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
			}
			i++
			cur.WriteByte(s[i])
			inWord = true
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, true
}
