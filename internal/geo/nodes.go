package geo

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Input carries a node's attributes; nil means "not given". Clear* asks
// for an attribute's removal (an explicit null).
type Input struct {
	Name, URL, InternalURL *string
	ClearInternalURL       bool
	Primary, Enabled       *bool

	FilesMaxCapacity                 *int64
	ReposMaxCapacity                 *int64
	VerificationMaxCapacity          *int64
	ContainerRepositoriesMaxCapacity *int64
	MinimumReverificationInterval    *int64
	SyncObjectStorage                *bool

	SelectiveSyncType         *string
	ClearSelectiveSyncType    bool
	SelectiveSyncShards       []string
	SetShards                 bool
	SelectiveSyncNamespaceIDs []int64
	SetNamespaceIDs           bool
}

// Bounds of a node's attributes.
const (
	maxNameLength   = 255
	maxListEntries  = 1000
	maxShardNameLen = 255
)

// Validation messages (GitLab's, from the model's validations).
const (
	msgBlank         = "can't be blank"
	msgTaken         = "has already been taken"
	msgNameTooLong   = "is too long (maximum is 255 characters)"
	msgPrimaryExists = "node already exists"
	msgPrimaryOff    = "Geo primary node cannot be disabled"
	msgNotInList     = "is not included in the list"
	msgLockedOut     = "Current node must be the primary node or you will be locking yourself out"
	msgNoGroups      = "must name existing groups"
	msgNoStorages    = "must name configured repository storages"
	msgListTooLong   = "is too long (maximum is 1000 entries)"
)

// Create makes a node with credentials of its own; attributes not given
// take GitLab's defaults.
func (s *Service) Create(ctx context.Context, a auth.Actor, in Input) (Node, error) {
	if err := admin(a); err != nil {
		return Node{}, err
	}
	n := model.GeoNode{Enabled: true, FilesMaxCapacity: model.GeoDefaultFilesMaxCapacity,
		ReposMaxCapacity: model.GeoDefaultReposMaxCapacity, VerificationMaxCapacity: model.GeoDefaultVerificationMaxCapacity,
		ContainerRepositoriesMaxCapacity: model.GeoDefaultContainerRepositoriesMaxCapacity,
		MinimumReverificationInterval:    model.GeoDefaultMinimumReverificationInterval, CloneProtocol: model.GeoCloneProtocolHTTP}
	if in.Primary != nil {
		n.Primary = *in.Primary
	}
	f := s.apply(&n, in)
	if err := s.check(ctx, &n, f); err != nil {
		return Node{}, err
	}
	key, secret := NewCredentials()
	n.AccessKey = key
	err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateGeoNode(ctx, &n, secret) })
	if err != nil {
		return Node{}, writeError(err)
	}
	cur, err := s.currentID(ctx)
	return s.view(n, cur), err
}

// Update changes a node's settings; its role (primary) is not among them,
// as GitLab's PUT does not take it. The change is applied to the node as
// it is when written: a write another beat is applied again on top of
// the other's, never over it.
func (s *Service) Update(ctx context.Context, a auth.Actor, id int64, in Input) (Node, error) {
	if err := admin(a); err != nil {
		return Node{}, err
	}
	in.Primary = nil
	for range updateAttempts {
		n, err := s.db.GeoNodeByID(ctx, id)
		if errors.Is(err, model.ErrNotFound) {
			return Node{}, notFound()
		}
		if err != nil {
			return Node{}, err
		}
		f := s.apply(&n, in)
		if err := s.check(ctx, &n, f); err != nil {
			return Node{}, err
		}
		var written bool
		err = s.db.InTx(ctx, func(tx *store.Tx) error {
			var err error
			written, err = tx.UpdateGeoNode(ctx, &n)
			return err
		})
		if err != nil {
			return Node{}, writeError(err)
		}
		if written {
			cur, err := s.currentID(ctx)
			return s.view(n, cur), err
		}
	}
	return Node{}, model.Conflict("")
}

// writeError turns what the database refused into the validation GitLab
// answers: a unique index another writer won meanwhile, a group deleted
// between the check and the write.
func writeError(err error) error {
	switch {
	case store.IsUnique(err, store.UniqueGeoNodeName):
		return model.Invalid("name", msgTaken)
	case store.IsUnique(err, store.UniqueGeoNodeURL):
		return model.Invalid("url", msgTaken)
	case store.IsUnique(err, store.UniqueGeoNodePrimary):
		return model.Invalid("primary", msgPrimaryExists)
	case store.IsUnique(err, store.UniqueGeoAccessKey):
		return model.Conflict("") // 80 random bits twice: a retry will do
	case errors.Is(err, model.ErrConflict) && !errors.As(err, new(*store.UniqueError)):
		return model.Invalid("selective_sync_namespace_ids", msgNoGroups)
	}
	return err
}

// apply sets in's attributes on n and returns the problems found in the
// values themselves (those needing no lookups).
func (s *Service) apply(n *model.GeoNode, in Input) model.FieldErrors {
	var f model.FieldErrors
	if in.Name != nil {
		n.Name = trimName(*in.Name)
	}
	if in.URL != nil {
		n.URL = *in.URL
		if norm, problem := NormalizeURL(*in.URL); problem == "" {
			n.URL = norm
		} else {
			if trimName(*in.URL) == "" {
				f.Add("url", msgBlank)
			}
			f.Add("url", problem)
		}
	}
	if in.ClearInternalURL {
		n.InternalURL = ""
	}
	if in.InternalURL != nil {
		n.InternalURL = ""
		if trimName(*in.InternalURL) != "" {
			if norm, problem := NormalizeURL(*in.InternalURL); problem == "" {
				n.InternalURL = norm
			} else {
				f.Add("internal_url", problem)
			}
		}
	}
	if in.Enabled != nil {
		n.Enabled = *in.Enabled
	}
	if in.SyncObjectStorage != nil {
		n.SyncObjectStorage = *in.SyncObjectStorage
	}
	capacity := func(field string, v *int64, dst *int, least int64) {
		if v == nil {
			return
		}
		switch {
		case *v < least:
			f.Add(field, "must be greater than or equal to "+strconv.FormatInt(least, 10))
		case *v > math.MaxInt32:
			f.Add(field, "must be less than or equal to "+strconv.Itoa(math.MaxInt32))
		default:
			*dst = int(*v)
		}
	}
	capacity("files_max_capacity", in.FilesMaxCapacity, &n.FilesMaxCapacity, 0)
	capacity("repos_max_capacity", in.ReposMaxCapacity, &n.ReposMaxCapacity, 0)
	capacity("verification_max_capacity", in.VerificationMaxCapacity, &n.VerificationMaxCapacity, 0)
	capacity("container_repositories_max_capacity", in.ContainerRepositoriesMaxCapacity, &n.ContainerRepositoriesMaxCapacity, 0)
	capacity("minimum_reverification_interval", in.MinimumReverificationInterval, &n.MinimumReverificationInterval, 1)
	if in.ClearSelectiveSyncType {
		n.SelectiveSyncType = ""
	}
	if in.SelectiveSyncType != nil {
		switch t := *in.SelectiveSyncType; t {
		case "", model.GeoSyncNamespaces, model.GeoSyncShards:
			n.SelectiveSyncType = t
		default:
			f.Add("selective_sync_type", msgNotInList)
		}
	}
	if in.SetShards {
		n.SelectiveSyncShards = dedupe(in.SelectiveSyncShards)
		if len(n.SelectiveSyncShards) > maxListEntries {
			f.Add("selective_sync_shards", msgListTooLong)
		}
	}
	if in.SetNamespaceIDs {
		n.SelectiveSyncNamespaceIDs = dedupe(in.SelectiveSyncNamespaceIDs)
		if len(n.SelectiveSyncNamespaceIDs) > maxListEntries {
			f.Add("selective_sync_namespace_ids", msgListTooLong)
		}
	}
	return f
}

func dedupe[T comparable](vs []T) []T {
	out := make([]T, 0, len(vs))
	for _, v := range vs {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// check validates n as GitLab's GeoNode model does, adding to the problems
// apply found, and returns them as one validation error.
func (s *Service) check(ctx context.Context, n *model.GeoNode, f model.FieldErrors) error {
	switch {
	case n.Name == "":
		f.Add("name", msgBlank)
	case utf8.RuneCountInString(n.Name) > maxNameLength:
		f.Add("name", msgNameTooLong)
	default:
		if other, err := s.db.GeoNodeByName(ctx, n.Name); err == nil && other.ID != n.ID {
			f.Add("name", msgTaken)
		} else if err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
	}
	if n.URL == "" && len(f["url"]) == 0 {
		f.Add("url", msgBlank)
		f.Add("url", msgInvalidURL)
	}
	if len(f["url"]) == 0 {
		if other, err := s.db.GeoNodeByURL(ctx, n.URL); err == nil && other.ID != n.ID {
			f.Add("url", msgTaken)
		} else if err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
	}
	// GitLab keeps no internal URL equal to the URL: it reads as the URL.
	if n.InternalURL != "" && SameURL(n.InternalURL, n.URL) {
		n.InternalURL = ""
	}
	if n.Primary {
		if other, err := s.db.PrimaryGeoNode(ctx); err == nil && other.ID != n.ID {
			f.Add("primary", msgPrimaryExists)
		} else if err != nil && !errors.Is(err, model.ErrNotFound) {
			return err
		}
		if !n.Enabled {
			f.Add("enabled", msgPrimaryOff)
		}
	} else if s.locksOut(n) {
		f.Add("base", msgLockedOut)
	}
	if len(n.SelectiveSyncShards) > 0 && len(f["selective_sync_shards"]) == 0 {
		for _, sh := range n.SelectiveSyncShards {
			if _, ok := s.cfg.StorageRoots[sh]; !ok || utf8.RuneCountInString(sh) > maxShardNameLen {
				f.Add("selective_sync_shards", msgNoStorages)
				break
			}
		}
	}
	if ids := n.SelectiveSyncNamespaceIDs; len(ids) > 0 && len(f["selective_sync_namespace_ids"]) == 0 {
		groups, err := s.db.GroupIDsAmong(ctx, ids)
		if err != nil {
			return err
		}
		if len(groups) != len(ids) {
			f.Add("selective_sync_namespace_ids", msgNoGroups)
		}
	}
	return f.Err()
}

// locksOut reports whether n, a secondary, would be this process itself
// (GitLab's require_current_node_to_be_primary): the node this process is
// named for, or — without a name — the node at its URL, or one named for
// it (GitLab's default node name is the external URL).
func (s *Service) locksOut(n *model.GeoNode) bool {
	if s.cfg.NodeName != "" {
		return equalFold(n.Name, s.cfg.NodeName)
	}
	return SameURL(n.URL, s.selfURL) || equalFold(n.Name, s.selfURL) || equalFold(n.Name, trimSlash(s.selfURL))
}
