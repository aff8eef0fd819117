package entity

import (
	"net/url"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/model"
)

// SSHKey is a user's key (GitLab's Entities::SSHKey): the key shown
// without its comment, which may hold an address, but with its owner's
// name and the host instead.
type SSHKey struct {
	ID         int64  `json:"id"`
	Title      string `json:"title"`
	CreatedAt  Time   `json:"created_at"`
	ExpiresAt  *Time  `json:"expires_at"`
	LastUsedAt *Time  `json:"last_used_at"`
	Key        string `json:"key"`
	UsageType  string `json:"usage_type"`
}

// SSHKey renders a key of the user named ownerName.
func (r *Renderer) SSHKey(k model.SSHKey, ownerName string) SSHKey {
	return SSHKey{ID: k.ID, Title: k.Title, CreatedAt: Time(k.CreatedAt), ExpiresAt: TimePtr(k.ExpiresAt),
		LastUsedAt: TimePtr(k.LastUsedAt), Key: r.publishableKey(k.Key, ownerName), UsageType: string(k.Usage)}
}

// publishableKey is "<algorithm> <base64> <owner name> (<host>)".
func (r *Renderer) publishableKey(key, ownerName string) string {
	f := strings.Fields(key)
	if len(f) > 2 {
		f = f[:2]
	}
	host := r.ExternalURL
	if u, err := url.Parse(r.ExternalURL); err == nil {
		host = u.Hostname()
	}
	return strings.Join(append(f, ownerName+" ("+host+")"), " ")
}

// SSHKeyWithUser is a key with its user (GET /keys/:id, /keys?fingerprint=).
type SSHKeyWithUser struct {
	SSHKey
	User *UserPublic `json:"user"`
}

// SSHKeyWithUser renders a user's key with its user.
func (r *Renderer) SSHKeyWithUser(k model.SSHKey, u *model.User, viewer auth.Actor) SSHKeyWithUser {
	out := SSHKeyWithUser{SSHKey: r.SSHKey(k, userName(u))}
	if u != nil {
		p := r.UserPublic(u, viewer)
		out.User = &p
	}
	return out
}

func userName(u *model.User) string {
	if u == nil {
		return ""
	}
	return u.Name
}

// DeployKey is a deploy key (Entities::DeployKey): the key as written,
// with its fingerprints.
type DeployKey struct {
	ID                int64  `json:"id"`
	Title             string `json:"title"`
	CreatedAt         Time   `json:"created_at"`
	ExpiresAt         *Time  `json:"expires_at"`
	LastUsedAt        *Time  `json:"last_used_at"`
	Key               string `json:"key"`
	UsageType         string `json:"usage_type"`
	Fingerprint       string `json:"fingerprint"`
	FingerprintSHA256 string `json:"fingerprint_sha256"`
}

// DeployKey renders a deploy key.
func (r *Renderer) DeployKey(k model.SSHKey) DeployKey {
	return DeployKey{ID: k.ID, Title: k.Title, CreatedAt: Time(k.CreatedAt), ExpiresAt: TimePtr(k.ExpiresAt),
		LastUsedAt: TimePtr(k.LastUsedAt), Key: k.Key, UsageType: string(k.Usage), Fingerprint: k.FingerprintMD5,
		FingerprintSHA256: "SHA256:" + k.FingerprintSHA256}
}

// DeployKeyWithProjects is an instance list's deploy key with the
// projects it may push to and those it may only read.
type DeployKeyWithProjects struct {
	DeployKey
	ProjectsWithWriteAccess    []ProjectIdentity `json:"projects_with_write_access"`
	ProjectsWithReadonlyAccess []ProjectIdentity `json:"projects_with_readonly_access"`
}

// DeployKeyWithProjects renders k with its projects.
func (r *Renderer) DeployKeyWithProjects(k model.SSHKey, write, readOnly []model.Project) DeployKeyWithProjects {
	out := DeployKeyWithProjects{DeployKey: r.DeployKey(k), ProjectsWithWriteAccess: make([]ProjectIdentity, len(write)),
		ProjectsWithReadonlyAccess: make([]ProjectIdentity, len(readOnly))}
	for i := range write {
		out.ProjectsWithWriteAccess[i] = r.ProjectIdentity(&write[i])
	}
	for i := range readOnly {
		out.ProjectsWithReadonlyAccess[i] = r.ProjectIdentity(&readOnly[i])
	}
	return out
}

// DeployKeyWithUser is a deploy key found by its fingerprint, with its
// creator.
type DeployKeyWithUser struct {
	DeployKey
	User *UserPublic `json:"user"`
}

// DeployKeyWithUser renders a deploy key with its creator (nil once gone).
func (r *Renderer) DeployKeyWithUser(k model.SSHKey, u *model.User, viewer auth.Actor) DeployKeyWithUser {
	out := DeployKeyWithUser{DeployKey: r.DeployKey(k)}
	if u != nil {
		p := r.UserPublic(u, viewer)
		out.User = &p
	}
	return out
}

// DeployKeysProject is a deploy key as enabled on a project
// (Entities::DeployKeysProject).
type DeployKeysProject struct {
	DeployKey
	CanPush bool `json:"can_push"`
}

// DeployKeysProject renders a project's deploy key.
func (r *Renderer) DeployKeysProject(d model.DeployKeyProject) DeployKeysProject {
	return DeployKeysProject{DeployKey: r.DeployKey(d.Key), CanPush: d.CanPush}
}
