package entity

import (
	"bytes"
	"encoding/json"

	"quarry/internal/model"
	"quarry/internal/snippets"
)

// StorageMove is a repository storage move record: GitLab's
// ProjectRepositoryStorageMove, GroupRepositoryStorageMove and
// SnippetRepositoryStorageMove entities, the container under the key of
// its kind ("project", "group", "snippet").
type StorageMove struct {
	ID                     int64   `json:"id"`
	CreatedAt              Time    `json:"created_at"`
	State                  string  `json:"state"`
	SourceStorageName      string  `json:"source_storage_name"`
	DestinationStorageName string  `json:"destination_storage_name"`
	ErrorMessage           *string `json:"error_message"`
	kind                   model.ContainerKind
	container              any // nil: the container is gone
}

// MarshalJSON puts the container after the move's own attributes.
func (m StorageMove) MarshalJSON() ([]byte, error) {
	type plain StorageMove
	head, err := json.Marshal(plain(m))
	if err != nil {
		return nil, err
	}
	c, err := json.Marshal(m.container)
	if err != nil {
		return nil, err
	}
	key, _ := json.Marshal(string(m.kind))
	var b bytes.Buffer
	b.Write(head[:len(head)-1])
	b.WriteByte(',')
	b.Write(key)
	b.WriteByte(':')
	b.Write(c)
	b.WriteByte('}')
	return b.Bytes(), nil
}

// MoveGroup is a group as a move record shows it.
type MoveGroup struct {
	ID     int64  `json:"id"`
	WebURL string `json:"web_url"`
	Name   string `json:"name"`
}

// MoveSnippet is a snippet as a move record shows it.
type MoveSnippet struct {
	ID            int64   `json:"id"`
	Title         string  `json:"title"`
	Description   *string `json:"description"`
	Visibility    string  `json:"visibility"`
	UpdatedAt     Time    `json:"updated_at"`
	CreatedAt     Time    `json:"created_at"`
	ProjectID     *int64  `json:"project_id"`
	WebURL        string  `json:"web_url"`
	RawURL        string  `json:"raw_url"`
	SSHURLToRepo  *string `json:"ssh_url_to_repo"`
	HTTPURLToRepo *string `json:"http_url_to_repo"`
}

// StorageMove renders a move and its container (*model.Project,
// *model.Group, *snippets.View; nil when the container is gone).
func (r *Renderer) StorageMove(m model.RepositoryStorageMove, container any) StorageMove {
	j := StorageMove{ID: m.ID, CreatedAt: Time(m.CreatedAt), State: m.State.String(), SourceStorageName: m.SourceStorageName,
		DestinationStorageName: m.DestinationStorageName, ErrorMessage: StrPtr(m.ErrorMessage), kind: m.Kind}
	switch c := container.(type) {
	case *model.Project:
		j.container = r.ProjectIdentity(c)
	case *model.Group:
		j.container = MoveGroup{ID: c.ID, WebURL: r.NamespaceWebURL(&c.Namespace), Name: c.Name}
	case *snippets.View:
		sn := r.Snippet(*c, false)
		j.container = MoveSnippet{ID: sn.ID, Title: sn.Title, Description: sn.Description, Visibility: sn.Visibility,
			UpdatedAt: sn.UpdatedAt, CreatedAt: sn.CreatedAt, ProjectID: sn.ProjectID, WebURL: sn.WebURL, RawURL: sn.RawURL,
			SSHURLToRepo: sn.SSHURLToRepo, HTTPURLToRepo: sn.HTTPURLToRepo}
	}
	return j
}
