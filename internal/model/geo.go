package model

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// GeoNode is one site of the instance (GitLab's Geo node, the spec's
// replication node). At most one node is the primary; the others are
// secondaries, read-only copies that report their status to it.
type GeoNode struct {
	ID   int64
	Name string
	// URL is where users reach the node, ending with "/"; InternalURL is
	// where other nodes reach it, "" when it is the URL.
	URL, InternalURL string
	Primary, Enabled bool

	FilesMaxCapacity                 int
	ReposMaxCapacity                 int
	VerificationMaxCapacity          int
	ContainerRepositoriesMaxCapacity int
	SyncObjectStorage                bool
	// SelectiveSyncType is "", "namespaces" or "shards".
	SelectiveSyncType         string
	SelectiveSyncShards       []string
	SelectiveSyncNamespaceIDs []int64
	// MinimumReverificationInterval is in days.
	MinimumReverificationInterval int
	CloneProtocol                 string

	// AccessKey names the node's credentials (the public half; the secret
	// beside it never leaves the store but to sign and check pushes).
	AccessKey string

	CreatedAt, UpdatedAt time.Time
	Version              int64
}

// ContactURL is where other nodes reach the node: its internal URL, or its
// URL when it has none.
func (n *GeoNode) ContactURL() string {
	if n.InternalURL != "" {
		return n.InternalURL
	}
	return n.URL
}

// The defaults of a new node (GitLab's column defaults).
const (
	GeoDefaultFilesMaxCapacity                 = 10
	GeoDefaultReposMaxCapacity                 = 25
	GeoDefaultVerificationMaxCapacity          = 100
	GeoDefaultContainerRepositoriesMaxCapacity = 10
	GeoDefaultMinimumReverificationInterval    = 7
	GeoCloneProtocolHTTP                       = "http"
)

// The selective sync types.
const (
	GeoSyncNamespaces = "namespaces"
	GeoSyncShards     = "shards"
)

// GeoKinds are the kinds of data a node status counts, by GitLab's names.
var GeoKinds = []string{
	"lfs_objects", "job_artifacts", "container_repositories", "design_repositories", "repositories", "wikis",
	"merge_request_diffs", "package_files", "pages_deployments", "terraform_state_versions", "snippet_repositories",
	"group_wiki_repositories", "pipeline_artifacts", "uploads",
}

// GeoCounters are the counters a status holds for every kind K, as
// "K_<counter>": how many items there are, how many a secondary synced
// or failed to, how many its registry tracks, and the checksum
// (primary) and verification (secondary) counters.
var GeoCounters = []string{
	"count", "synced_count", "failed_count", "registry_count",
	"checksum_total_count", "checksummed_count", "checksum_failed_count",
	"verification_total_count", "verified_count", "verification_failed_count",
}

// GeoExtraCounters are the counters only some kinds have.
var GeoExtraCounters = []string{
	"lfs_objects_synced_missing_on_primary_count", "job_artifacts_synced_missing_on_primary_count",
	"uploads_synced_missing_on_primary_count",
	"repositories_checked_count", "repositories_checked_failed_count",
	"wikis_checked_count", "wikis_checked_failed_count",
	"repositories_checksum_mismatch_count", "wikis_checksum_mismatch_count",
	"repositories_retrying_verification_count", "wikis_retrying_verification_count",
}

// GeoPercentages are the percentages a status shows: name → (count,
// total), each a counter name; a name is "<name>_in_percentage".
var GeoPercentages = func() [][3]string {
	var out [][3]string
	for _, k := range GeoKinds {
		out = append(out, [3]string{k + "_synced", k + "_synced_count", k + "_count"},
			[3]string{k + "_verified", k + "_verified_count", k + "_count"})
	}
	for _, k := range []string{"repositories", "wikis"} {
		out = append(out, [3]string{k + "_checksummed", k + "_checksummed_count", k + "_count"},
			[3]string{k + "_checked", k + "_checked_count", k + "_count"})
	}
	return out
}()

// GeoCounterNames is every counter of a status: each kind's counters and
// the extra ones.
func GeoCounterNames() []string {
	out := make([]string, 0, len(GeoKinds)*len(GeoCounters)+len(GeoExtraCounters))
	for _, k := range GeoKinds {
		for _, c := range GeoCounters {
			out = append(out, k+"_"+c)
		}
	}
	return append(out, GeoExtraCounters...)
}

// GeoStatus is what a node reports of itself. A nil counter does not
// apply to the node (a kind of data Quarry does not keep, a counter of
// the other role).
type GeoStatus struct {
	NodeID int64
	// Health is the health check's message: "" or "Healthy" when every
	// check passed.
	Health                  string
	MissingOAuthApplication bool

	DBReplicationLagSeconds                *int64
	ReplicationSlotsCount                  *int64
	ReplicationSlotsUsedCount              *int64
	ReplicationSlotsMaxRetainedWALBytes    *int64
	LastEventID, CursorLastEventID         *int64
	LastEventAt, CursorLastEventAt         *time.Time
	ProjectsCount                          *int64
	Counters                               map[string]*int64
	Version, Revision                      string
	StorageShards                          []string
	LastSuccessfulStatusCheckAt, UpdatedAt time.Time
	SelectiveSyncType                      string
	Namespaces                             []Namespace
	StorageShardsMatch                     bool
	RepositoryVerificationEnabled          bool
}

// GeoHealthy is the health message of a node whose checks all passed.
const GeoHealthy = "Healthy"

// GeoStatusExpiry is how long a pushed status counts as current: a node
// silent for longer is unhealthy (GitLab's EXPIRATION_IN_MINUTES).
const GeoStatusExpiry = 10 * time.Minute

// Healthy reports whether the status's checks passed and it is recent,
// by now.
func (s *GeoStatus) Healthy(now time.Time) bool {
	if s.Health != "" && s.Health != GeoHealthy {
		return false
	}
	return now.Sub(s.LastSuccessfulStatusCheckAt) <= GeoStatusExpiry
}

// Counter is one counter (nil when it does not apply).
func (s *GeoStatus) Counter(name string) *int64 {
	if s.Counters == nil {
		return nil
	}
	return s.Counters[name]
}

// SetCounter sets a counter.
func (s *GeoStatus) SetCounter(name string, v int64) {
	if s.Counters == nil {
		s.Counters = map[string]*int64{}
	}
	s.Counters[name] = &v
}

// GeoPercentage is count of total as GitLab shows it: two decimals and a
// percent sign ("48.78%"), "0.00%" when there is nothing to count or
// nobody counted (number_to_percentage of calc_percentage).
func GeoPercentage(count, total *int64) string {
	if total == nil || *total <= 0 || count == nil {
		return "0.00%"
	}
	// Integer arithmetic, rounded half up at the second decimal, so the
	// text never depends on float formatting: hundredths of a percent,
	// (c·10000 + t/2) / t in 128 bits.
	c, t := *count, *total
	if c < 0 {
		c = 0
	}
	// A bound, so the quotient fits: no real count is this far past its
	// total.
	if t <= math.MaxInt64/1000 && c > t*1000 {
		c = t * 1000
	}
	hi, lo := bits.Mul64(uint64(c), 20000)
	lo, carry := bits.Add64(lo, uint64(t), 0)
	hi += carry
	q, _ := bits.Div64(hi, lo, 2*uint64(t))
	h := int64(q)
	return strconv.FormatInt(h/100, 10) + "." + twoDigits(h%100) + "%"
}

func twoDigits(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}
