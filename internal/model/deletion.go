package model

import (
	"strings"
	"time"
)

// Deletion is what a delete request of a project or group comes to.
type Deletion struct {
	// Mark keeps the resource, restorable, marked for deletion until RunAt;
	// otherwise it goes at RunAt (now).
	Mark  bool
	RunAt time.Time
}

// PlanDeletion decides a DELETE of a project or group (kind "Project" or
// "Group"): marked for delay when there is one, removed at once when there
// is none, or at once when permanently is asked on one already marked
// with its full path as confirmation. The refusals are GitLab's.
func PlanDeletion(kind string, marked, permanently bool, confirm, fullPath string, delay time.Duration, now time.Time) (Deletion, error) {
	switch {
	case permanently && !marked:
		return Deletion{}, BadRequestRaw(kind + " has not been marked for deletion")
	case permanently && confirm != fullPath:
		return Deletion{}, BadRequestRaw("`full_path` is incorrect. You must enter the complete path for the " + strings.ToLower(kind) + ".")
	case permanently:
		return Deletion{RunAt: now}, nil
	case marked:
		return Deletion{}, BadRequestRaw(kind + " has been already marked for deletion")
	case delay > 0:
		return Deletion{Mark: true, RunAt: now.Add(delay)}, nil
	}
	return Deletion{RunAt: now}, nil
}
