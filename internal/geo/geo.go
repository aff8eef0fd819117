// Package geo holds the rules of geo nodes (GitLab's Geo, the spec's
// replication nodes): the instance's sites and their settings, the status
// each reports, and the role of this process — the primary, or a
// read-only secondary that pushes its status to the primary.
//
// Quarry replicates nothing itself: a secondary reads a database the
// primary writes (the same PostgreSQL, or a streaming replica of it) and
// repository storages an operator keeps in step (a shared volume, or
// copies). Its status says what of it is there.
package geo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"quarry/internal/auth"
	"quarry/internal/git/gitrepo"
	"quarry/internal/jobfiles"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Config is what the service knows of this process.
type Config struct {
	// ExternalURL is where this process is reached (no trailing slash
	// needed): without a node name, the node of this URL is the current
	// one.
	ExternalURL string
	// NodeName, when set, names the node this process is (GitLab's
	// geo_node_name); a process naming a node that is not the primary is
	// a read-only secondary.
	NodeName string
	// StorageRoots are the repository storages of this process by name.
	StorageRoots map[string]string
	// Version and Revision are this build's, as /version reports them.
	Version, Revision string
}

// Service answers every geo node question.
type Service struct {
	db       *store.DB
	storages *gitrepo.Storages
	files    *jobfiles.Store
	log      *slog.Logger
	cfg      Config
	// selfURL is ExternalURL as a node URL.
	selfURL string
	// readOnly is decided once, when the process starts (Resolve).
	readOnly bool
}

// New returns the geo service. Call Resolve before serving.
func New(db *store.DB, storages *gitrepo.Storages, files *jobfiles.Store, log *slog.Logger, cfg Config) *Service {
	self, _ := NormalizeURL(cfg.ExternalURL)
	return &Service{db: db, storages: storages, files: files, log: log, cfg: cfg, selfURL: self}
}

// Resolve decides this process's role from its node name: with none, or
// naming the primary, it is the primary; naming a secondary — or a node
// not registered (yet) — it is a read-only secondary, so that a process
// told it is a copy never writes, whatever the primary knows of it.
func (s *Service) Resolve(ctx context.Context) error {
	if s.cfg.NodeName == "" {
		return nil
	}
	n, err := s.db.GeoNodeByName(ctx, s.cfg.NodeName)
	switch {
	case errors.Is(err, model.ErrNotFound):
		s.readOnly = true
		s.log.Warn("geo: this process names a node that is not registered; serving read-only", "geo_node_name", s.cfg.NodeName)
		return nil
	case err != nil:
		return fmt.Errorf("geo node %q: %w", s.cfg.NodeName, err)
	}
	s.readOnly = !n.Primary
	if s.readOnly {
		s.log.Info("geo: this process is a secondary node; serving read-only", "geo_node_name", n.Name, "geo_node_id", n.ID)
	}
	return nil
}

// ReadOnly reports whether this process is a secondary, which refuses
// every write.
func (s *Service) ReadOnly() bool { return s.readOnly }

// ReadOnlyMessage is how a secondary refuses a write (GitLab's read-only
// middleware).
const ReadOnlyMessage = "You cannot perform write operations on a read-only instance"

// currentNode is the node this process is: the one its node name names,
// else the one at its external URL. ok is false when there is none.
func (s *Service) currentNode(ctx context.Context) (model.GeoNode, bool, error) {
	var n model.GeoNode
	var err error
	if s.cfg.NodeName != "" {
		n, err = s.db.GeoNodeByName(ctx, s.cfg.NodeName)
	} else {
		n, err = s.db.GeoNodeByURL(ctx, s.selfURL)
	}
	if errors.Is(err, model.ErrNotFound) {
		return n, false, nil
	}
	return n, err == nil, err
}

// currentID is the id of the current node, 0 when there is none.
func (s *Service) currentID(ctx context.Context) (int64, error) {
	n, ok, err := s.currentNode(ctx)
	if !ok {
		return 0, err
	}
	return n.ID, nil
}

// admin refuses everyone but administrators (GitLab's
// authenticated_as_admin!; the route table refuses anonymous callers).
func admin(a auth.Actor) error {
	if !auth.Can(a, auth.AdminInstance, auth.Resource{}) {
		return model.Forbidden("")
	}
	return nil
}

// notFound is the answer for a node that does not exist.
func notFound() error { return model.NotFound("GeoNode") }

// Node is a node as the API shows it: whether it is the current one.
type Node struct {
	model.GeoNode
	Current bool
}

func (s *Service) view(n model.GeoNode, current int64) Node {
	return Node{GeoNode: n, Current: n.ID == current}
}

// Get returns one node.
func (s *Service) Get(ctx context.Context, a auth.Actor, id int64) (Node, error) {
	if err := admin(a); err != nil {
		return Node{}, err
	}
	n, err := s.db.GeoNodeByID(ctx, id)
	if errors.Is(err, model.ErrNotFound) {
		return Node{}, notFound()
	}
	if err != nil {
		return Node{}, err
	}
	cur, err := s.currentID(ctx)
	return s.view(n, cur), err
}

// List returns a page of nodes by id.
func (s *Service) List(ctx context.Context, a auth.Actor, page model.Page) ([]Node, model.PageInfo, error) {
	if err := admin(a); err != nil {
		return nil, model.PageInfo{}, err
	}
	nodes, info, err := s.db.ListGeoNodes(ctx, page)
	if err != nil {
		return nil, info, err
	}
	cur, err := s.currentID(ctx)
	out := make([]Node, len(nodes))
	for i, n := range nodes {
		out[i] = s.view(n, cur)
	}
	return out, info, err
}

// Delete removes a node with its status.
func (s *Service) Delete(ctx context.Context, a auth.Actor, id int64) error {
	if err := admin(a); err != nil {
		return err
	}
	err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteGeoNode(ctx, id) })
	if errors.Is(err, model.ErrNotFound) {
		return notFound()
	}
	return err
}

// Repair mends a node's credentials: a node whose secret is missing or no
// longer opens (a key file that lost its key) gets a fresh pair, which the
// node reads from the database it shares; a node whose credentials hold
// needs nothing. It returns the node, as GitLab's documentation shows.
func (s *Service) Repair(ctx context.Context, a auth.Actor, id int64) (Node, error) {
	if err := admin(a); err != nil {
		return Node{}, err
	}
	for range updateAttempts {
		n, err := s.db.GeoNodeByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			return Node{}, notFound()
		}
		if err != nil {
			return Node{}, err
		}
		key, secret, err := s.db.GeoNodeCredentials(ctx, id)
		if err == nil && key != "" && secret != "" {
			cur, err := s.currentID(ctx)
			return s.view(n, cur), err
		}
		if err != nil && errors.Is(err, model.ErrNotFound) {
			return Node{}, notFound()
		}
		if err != nil {
			s.log.Warn("geo: node credentials do not open; making new ones", "geo_node_id", id, "err", err)
		}
		newKey, newSecret := NewCredentials()
		var written bool
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			written, err = tx.SetGeoNodeCredentials(ctx, &n, newKey, newSecret)
			return err
		})
		if err != nil {
			return Node{}, err
		}
		if written {
			cur, err := s.currentID(ctx)
			return s.view(n, cur), err
		}
	}
	return Node{}, model.Conflict("")
}

// updateAttempts bounds the retries of a write that lost a race.
const updateAttempts = 10

// trimName is a node's name as GitLab keeps it (strip_attributes).
func trimName(s string) string { return strings.TrimSpace(s) }

func equalFold(a, b string) bool { return strings.EqualFold(a, b) }

func trimSlash(s string) string { return strings.TrimSuffix(s, "/") }
