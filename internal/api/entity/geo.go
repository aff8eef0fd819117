package entity

import (
	"strconv"
	"time"

	"quarry/internal/model"
)

// GeoNodeLinks are a node's API addresses on this instance.
type GeoNodeLinks struct {
	Self   string `json:"self"`
	Status string `json:"status"`
	Repair string `json:"repair"`
}

// GeoNode is GitLab's EE::API::Entities::GeoNode.
type GeoNode struct {
	ID                               int64        `json:"id"`
	Name                             string       `json:"name"`
	URL                              string       `json:"url"`
	InternalURL                      string       `json:"internal_url"`
	Primary                          bool         `json:"primary"`
	Enabled                          bool         `json:"enabled"`
	Current                          bool         `json:"current"`
	FilesMaxCapacity                 int          `json:"files_max_capacity"`
	ReposMaxCapacity                 int          `json:"repos_max_capacity"`
	VerificationMaxCapacity          int          `json:"verification_max_capacity"`
	ContainerRepositoriesMaxCapacity int          `json:"container_repositories_max_capacity"`
	SelectiveSyncType                *string      `json:"selective_sync_type"`
	SelectiveSyncShards              []string     `json:"selective_sync_shards"`
	SelectiveSyncNamespaceIDs        []int64      `json:"selective_sync_namespace_ids"`
	MinimumReverificationInterval    int          `json:"minimum_reverification_interval"`
	SyncObjectStorage                bool         `json:"sync_object_storage"`
	CloneProtocol                    string       `json:"clone_protocol"`
	WebEditURL                       string       `json:"web_edit_url"`
	WebGeoProjectsURL                *string      `json:"web_geo_projects_url"`
	Links                            GeoNodeLinks `json:"_links"`
}

func (r *Renderer) geoNodeAPI(id int64) string {
	return r.ExternalURL + "/api/v4/geo_nodes/" + strconv.FormatInt(id, 10)
}

// GeoNode renders a node; current says whether it is the node this
// instance is. Links and the edit page are on this instance; a
// secondary's projects page is on the node itself.
func (r *Renderer) GeoNode(n *model.GeoNode, current bool) GeoNode {
	api := r.geoNodeAPI(n.ID)
	j := GeoNode{ID: n.ID, Name: n.Name, URL: n.URL, InternalURL: n.ContactURL(), Primary: n.Primary, Enabled: n.Enabled,
		Current: current, FilesMaxCapacity: n.FilesMaxCapacity, ReposMaxCapacity: n.ReposMaxCapacity,
		VerificationMaxCapacity: n.VerificationMaxCapacity, ContainerRepositoriesMaxCapacity: n.ContainerRepositoriesMaxCapacity,
		SelectiveSyncType: StrPtr(n.SelectiveSyncType), SelectiveSyncShards: n.SelectiveSyncShards,
		SelectiveSyncNamespaceIDs: n.SelectiveSyncNamespaceIDs, MinimumReverificationInterval: n.MinimumReverificationInterval,
		SyncObjectStorage: n.SyncObjectStorage, CloneProtocol: n.CloneProtocol,
		WebEditURL: r.ExternalURL + "/admin/geo/nodes/" + strconv.FormatInt(n.ID, 10) + "/edit",
		Links:      GeoNodeLinks{Self: api, Status: api + "/status", Repair: api + "/repair"}}
	if j.SelectiveSyncShards == nil {
		j.SelectiveSyncShards = []string{}
	}
	if j.SelectiveSyncNamespaceIDs == nil {
		j.SelectiveSyncNamespaceIDs = []int64{}
	}
	if !n.Primary {
		u := n.URL + "admin/geo/projects"
		j.WebGeoProjectsURL = &u
	}
	return j
}

// GeoStorageShard is GitLab's StorageShardEntity.
type GeoStorageShard struct {
	Name string `json:"name"`
}

// GeoNodeStatus renders a node's status as GitLab's
// EE::API::Entities::GeoNodeStatus: every counter of every kind, nil
// where it does not apply, and the percentages GitLab derives from them
// (strings, "0.00%" when there is nothing to count).
func (r *Renderer) GeoNodeStatus(s *model.GeoStatus) map[string]any {
	healthy := s.Healthy(r.Now())
	health, healthStatus := s.Health, "Unhealthy"
	if healthy {
		health, healthStatus = model.GeoHealthy, model.GeoHealthy
	}
	namespaces := make([]Namespace, len(s.Namespaces))
	for i := range s.Namespaces {
		namespaces[i] = r.Namespace(&s.Namespaces[i])
	}
	shards := make([]GeoStorageShard, len(s.StorageShards))
	for i, n := range s.StorageShards {
		shards[i] = GeoStorageShard{Name: n}
	}
	api := r.geoNodeAPI(s.NodeID)
	j := map[string]any{
		"geo_node_id": s.NodeID, "healthy": healthy, "health": health, "health_status": healthStatus,
		"missing_oauth_application":                s.MissingOAuthApplication,
		"db_replication_lag_seconds":               s.DBReplicationLagSeconds,
		"replication_slots_count":                  s.ReplicationSlotsCount,
		"replication_slots_used_count":             s.ReplicationSlotsUsedCount,
		"replication_slots_used_in_percentage":     model.GeoPercentage(s.ReplicationSlotsUsedCount, s.ReplicationSlotsCount),
		"replication_slots_max_retained_wal_bytes": s.ReplicationSlotsMaxRetainedWALBytes,
		"last_event_id":                            s.LastEventID,
		"last_event_timestamp":                     unixOrZero(s.LastEventAt),
		"cursor_last_event_id":                     s.CursorLastEventID,
		"cursor_last_event_timestamp":              unixOrZero(s.CursorLastEventAt),
		"last_successful_status_check_timestamp":   s.LastSuccessfulStatusCheckAt.Unix(),
		"version":                                  s.Version,
		"revision":                                 s.Revision,
		"projects_count":                           s.ProjectsCount,
		"selective_sync_type":                      StrPtr(s.SelectiveSyncType),
		"namespaces":                               namespaces,
		"updated_at":                               Time(s.UpdatedAt),
		"storage_shards":                           shards,
		"storage_shards_match":                     s.StorageShardsMatch,
		"_links":                                   map[string]string{"self": api + "/status", "node": api},
	}
	for _, name := range model.GeoCounterNames() {
		j[name] = s.Counter(name)
	}
	for _, p := range model.GeoPercentages {
		j[p[0]+"_in_percentage"] = model.GeoPercentage(s.Counter(p[1]), s.Counter(p[2]))
	}
	return j
}

// unixOrZero is a time in Unix seconds, 0 for none (GitLab's
// nil.to_i).
func unixOrZero(t *time.Time) int64 {
	if t == nil {
		return 0
	}
	return t.Unix()
}

// GeoProjectRegistry is GitLab's GeoProjectRegistryEntity: a project whose
// repository or wiki this secondary failed to hold.
type GeoProjectRegistry struct {
	ProjectID                         int64   `json:"project_id"`
	LastRepositorySyncedAt            *Time   `json:"last_repository_synced_at"`
	LastRepositorySuccessfulSyncAt    *Time   `json:"last_repository_successful_sync_at"`
	LastWikiSyncedAt                  *Time   `json:"last_wiki_synced_at"`
	LastWikiSuccessfulSyncAt          *Time   `json:"last_wiki_successful_sync_at"`
	RepositoryRetryCount              *int    `json:"repository_retry_count"`
	WikiRetryCount                    *int    `json:"wiki_retry_count"`
	LastRepositorySyncFailure         *string `json:"last_repository_sync_failure"`
	LastWikiSyncFailure               *string `json:"last_wiki_sync_failure"`
	LastRepositoryVerificationFailure *string `json:"last_repository_verification_failure"`
	LastWikiVerificationFailure       *string `json:"last_wiki_verification_failure"`
	RepositoryVerificationChecksumSHA *string `json:"repository_verification_checksum_sha"`
	WikiVerificationChecksumSHA       *string `json:"wiki_verification_checksum_sha"`
	RepositoryChecksumMismatch        bool    `json:"repository_checksum_mismatch"`
	WikiChecksumMismatch              bool    `json:"wiki_checksum_mismatch"`
}

// GeoProjectRegistry renders one failure.
func (r *Renderer) GeoProjectRegistry(projectID int64, repositoryFailure, wikiFailure string) GeoProjectRegistry {
	return GeoProjectRegistry{ProjectID: projectID, LastRepositorySyncFailure: StrPtr(repositoryFailure),
		LastWikiSyncFailure: StrPtr(wikiFailure)}
}
