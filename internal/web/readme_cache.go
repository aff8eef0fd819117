package web

// Rendered READMEs are cached (pageCache) by their blob id, their name
// (Markdown or not), the project's path and the ref (their relative links
// name both): a blob's bytes never change, so an entry is never stale,
// and a project renamed or a default branch changed is a new key. READMEs
// rendered larger than maxCachedReadme are not kept.
const maxCachedReadme = 256 << 10

func readmeKey(blobID, name, project, ref string) string {
	return blobID + "\x00" + name + "\x00" + project + "\x00" + ref
}
