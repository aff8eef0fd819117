package model

import (
	"crypto/sha256"
	"math/big"
	"regexp"
	"strings"
	"time"
)

// FailureProtectedEnvironment: a job deploying to a protected environment
// its user may not deploy to.
const FailureProtectedEnvironment FailureReason = "protected_environment_failure"

// FailureEnvironmentCreation: a job whose environment name is invalid
// once its variables are expanded.
const FailureEnvironmentCreation FailureReason = "environment_creation_failure"

// EnvironmentState is an environment's state, as GitLab names them.
type EnvironmentState string

// The environment states.
const (
	EnvAvailable EnvironmentState = "available"
	EnvStopping  EnvironmentState = "stopping"
	EnvStopped   EnvironmentState = "stopped"
)

// EnvironmentStates are the valid states filter values.
var EnvironmentStates = []EnvironmentState{EnvAvailable, EnvStopping, EnvStopped}

// environmentMoves is GitLab's Environment state machine: start
// (stopped or stopping → available: a deployment, or a stop job that
// failed), stop (available → stopping when a stop job runs, → stopped
// without one), stop_complete (stopping → stopped).
var environmentMoves = map[EnvironmentState][]EnvironmentState{
	EnvAvailable: {EnvStopping, EnvStopped},
	EnvStopping:  {EnvStopped, EnvAvailable},
	EnvStopped:   {EnvAvailable},
}

// CanMoveTo reports whether the environment state machine allows s → to.
func (s EnvironmentState) CanMoveTo(to EnvironmentState) bool {
	for _, t := range environmentMoves[s] {
		if t == to {
			return true
		}
	}
	return false
}

// Environment tiers (deployment_tier).
const (
	TierProduction  = "production"
	TierStaging     = "staging"
	TierTesting     = "testing"
	TierDevelopment = "development"
	TierOther       = "other"
)

// Tiers are the valid tier values.
var Tiers = []string{TierProduction, TierStaging, TierTesting, TierDevelopment, TierOther}

// Environment is a place a project deploys to.
type Environment struct {
	ID          int64
	ProjectID   int64
	Name        string
	Slug        string
	Description string
	ExternalURL string
	Tier        string
	State       EnvironmentState
	AutoStopAt  *time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// Environment actions of a job's environment:action.
const (
	EnvActionStart   = "start"
	EnvActionPrepare = "prepare"
	EnvActionStop    = "stop"
	EnvActionVerify  = "verify"
	EnvActionAccess  = "access"
)

// EnvironmentActions are the valid environment:action values.
var EnvironmentActions = []string{EnvActionStart, EnvActionPrepare, EnvActionStop, EnvActionVerify, EnvActionAccess}

// DeploymentStatus is a deployment's status.
type DeploymentStatus string

// The deployment statuses.
const (
	DeployCreated  DeploymentStatus = "created"
	DeployRunning  DeploymentStatus = "running"
	DeploySuccess  DeploymentStatus = "success"
	DeployFailed   DeploymentStatus = "failed"
	DeployCanceled DeploymentStatus = "canceled"
	DeploySkipped  DeploymentStatus = "skipped"
	DeployBlocked  DeploymentStatus = "blocked"
)

// DeploymentStatuses are the valid status filter values.
var DeploymentStatuses = []DeploymentStatus{DeployCreated, DeployRunning, DeploySuccess, DeployFailed, DeployCanceled,
	DeployBlocked, DeploySkipped}

// deploymentMoves is GitLab's Deployment state machine: run (created →
// running), succeed (created, running → success), drop and cancel
// (created, running, blocked → failed, canceled), skip (created, running
// → skipped), block and unblock (created ↔ blocked). A finished
// deployment never moves again.
var deploymentMoves = map[DeploymentStatus][]DeploymentStatus{
	DeployCreated: {DeployRunning, DeploySuccess, DeployFailed, DeployCanceled, DeploySkipped, DeployBlocked},
	DeployRunning: {DeploySuccess, DeployFailed, DeployCanceled, DeploySkipped},
	DeployBlocked: {DeployCreated, DeployFailed, DeployCanceled},
}

// CanMoveTo reports whether the deployment state machine allows s → to.
func (s DeploymentStatus) CanMoveTo(to DeploymentStatus) bool {
	for _, t := range deploymentMoves[s] {
		if t == to {
			return true
		}
	}
	return false
}

// Finished: the deployment ended (success, failed, canceled); it has a
// finish time.
func (s DeploymentStatus) Finished() bool {
	return s == DeploySuccess || s == DeployFailed || s == DeployCanceled
}

// DeploymentFor is the status a deployment follows its job into (GitLab's
// Deployment#sync_status_with): ok is false when the job's status moves
// nothing.
func DeploymentFor(job CIStatus) (DeploymentStatus, bool) {
	switch job {
	case StatusRunning:
		return DeployRunning, true
	case StatusSuccess:
		return DeploySuccess, true
	case StatusFailed:
		return DeployFailed, true
	case StatusCanceled:
		return DeployCanceled, true
	case StatusSkipped:
		return DeploySkipped, true
	}
	return "", false
}

// Deployment is one deployment of a ref to an environment: by a job
// (JobID, the deployable), or reported through the API (JobID 0).
type Deployment struct {
	ID            int64
	ProjectID     int64
	EnvironmentID int64
	IID           int64
	Ref           string
	Tag           bool
	SHA           string
	UserID        int64
	JobID         int64
	Status        DeploymentStatus
	// OnStop names the job that stops the environment (environment:on_stop),
	// in the deployment's pipeline; AutoStopIn is environment:auto_stop_in,
	// applied when the deployment succeeds.
	OnStop     string
	AutoStopIn string
	CreatedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
}

var (
	envSlugUnsafe = regexp.MustCompile(`[^a-z0-9]`)
	envSlugDashes = regexp.MustCompile(`-+`)
)

// EnvironmentSlug is GitLab's slug of an environment name
// (Gitlab::Slug::Environment): lower-case letters, digits and single
// dashes, starting with a letter, at most 24 characters; a name the rules
// changed, or a long one, is cut to 17 characters and gets a dash and a
// 6-character suffix from the name's SHA-256, so different names keep
// different slugs.
func EnvironmentSlug(name string) string {
	s := envSlugUnsafe.ReplaceAllString(strings.ToLower(name), "-")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "env-" + s
	}
	s = envSlugDashes.ReplaceAllString(s, "-")
	if len(s) <= 24 && s == name {
		return strings.TrimSuffix(s, "-")
	}
	if len(s) > 17 {
		s = s[:17]
	}
	if !strings.HasSuffix(s, "-") {
		s += "-"
	}
	sum := sha256.Sum256([]byte(name))
	b36 := new(big.Int).SetBytes(sum[:]).Text(36)
	if len(b36) > 6 {
		b36 = b36[len(b36)-6:]
	}
	return s + b36
}

var (
	tierDevelopment = regexp.MustCompile(`(?i)(dev|review|trunk)`)
	tierTesting     = regexp.MustCompile(`(?i)(test|tst|int|ac(ce|)pt|qa|qc|control|quality)`)
	tierStaging     = regexp.MustCompile(`(?i)(st(a|)g|mod(e|)l|pre|demo|non)`)
	tierProduction  = regexp.MustCompile(`(?i)(pr(o|)d|live)`)
)

// GuessTier is the tier of an environment without deployment_tier, from
// its name as GitLab's Environment#guess_tier: the first of development,
// testing, staging and production whose pattern the name contains, else
// other.
func GuessTier(name string) string {
	switch {
	case tierDevelopment.MatchString(name):
		return TierDevelopment
	case tierTesting.MatchString(name):
		return TierTesting
	case tierStaging.MatchString(name):
		return TierStaging
	case tierProduction.MatchString(name):
		return TierProduction
	}
	return TierOther
}

// ValidTier reports whether t is a tier.
func ValidTier(t string) bool {
	for _, v := range Tiers {
		if v == t {
			return true
		}
	}
	return false
}

var environmentName = regexp.MustCompile(`^[a-zA-Z0-9 _/${}.-]+$`)

// ValidEnvironmentName reports whether name is a valid environment name
// (GitLab's environment_name_regex: letters, digits, spaces and
// - _ / $ { } .; not starting or ending with /; at most 255).
func ValidEnvironmentName(name string) bool {
	return len(name) <= 255 && environmentName.MatchString(name) && !strings.HasPrefix(name, "/") &&
		!strings.HasSuffix(name, "/")
}

// ScopeMatches reports whether a CI/CD variable's environment scope
// covers environment env (GitLab's wildcard matching): "*" covers every
// job, a scope without "*" names one environment exactly, and "*" in a
// scope stands for any characters. A job without an environment matches
// only "*".
func ScopeMatches(scope, env string) bool {
	if scope == "*" {
		return true
	}
	if env == "" {
		return false
	}
	if !strings.Contains(scope, "*") {
		return scope == env
	}
	parts := strings.Split(scope, "*")
	if !strings.HasPrefix(env, parts[0]) {
		return false
	}
	rest := env[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}
