package model

import "time"

// EventAction is what a contribution event says its author did, as
// GitLab's Event model names its actions.
type EventAction string

// The actions GitLab's events API filters on (its Event.actions).
const (
	EventCreated   EventAction = "created"
	EventUpdated   EventAction = "updated"
	EventClosed    EventAction = "closed"
	EventReopened  EventAction = "reopened"
	EventPushed    EventAction = "pushed"
	EventCommented EventAction = "commented"
	EventMerged    EventAction = "merged"
	EventJoined    EventAction = "joined"
	EventLeft      EventAction = "left"
	EventDestroyed EventAction = "destroyed"
	EventExpired   EventAction = "expired"
	EventApproved  EventAction = "approved"
)

// EventActions are the actions in GitLab's order.
var EventActions = []string{string(EventCreated), string(EventUpdated), string(EventClosed), string(EventReopened),
	string(EventPushed), string(EventCommented), string(EventMerged), string(EventJoined), string(EventLeft),
	string(EventDestroyed), string(EventExpired), string(EventApproved)}

// EventTargetTypes maps the events API's target_type filter values to the
// target types events store (GitLab's Event::TARGET_TYPES).
var EventTargetTypes = map[string]string{
	"issue": "Issue", "milestone": "Milestone", "merge_request": "MergeRequest", "note": "Note", "project": "Project",
	"snippet": "Snippet", "user": "User", "wiki": "WikiPage::Meta", "design": "DesignManagement::Design",
}

// EventTargetMergeRequest is the target type of a merge request's events.
const EventTargetMergeRequest = "MergeRequest"

// Push actions and ref types (GitLab's PushEventPayload enums).
const (
	PushCreated = "created"
	PushRemoved = "removed"
	PushPushed  = "pushed"
	RefBranch   = "branch"
	RefTag      = "tag"
)

// PushData is what a push event records of its push: one ref moved, or
// (RefCount > 0, Ref empty) several refs of one type moved the same way.
type PushData struct {
	CommitCount int64
	Action      string // PushCreated, PushRemoved, PushPushed
	RefType     string // RefBranch, RefTag
	CommitFrom  string // "" for a created ref
	CommitTo    string // "" for a removed ref
	Ref         string // short name; "" for a bulk push
	CommitTitle string // newest commit's title, at most 70 characters
	RefCount    int64  // refs of a bulk push; 0 otherwise
}

// Event is one entry of the contributions feed: author did Action in a
// project (to a target, when TargetType is set).
type Event struct {
	ID         int64
	ProjectID  int64
	AuthorID   int64
	Action     EventAction
	TargetType string // "" for none (a project created, a member joined)
	TargetID   int64
	CreatedAt  time.Time
	Push       *PushData // set for EventPushed

	// Read with the event: the target's iid and title as they are now.
	TargetIID   int64
	TargetTitle string
	Author      User
}

// ActionName is the phrase GitLab shows for the event (Event#action_name).
func (e Event) ActionName() string {
	if e.Action == EventPushed && e.Push != nil {
		switch e.Push.Action {
		case PushCreated:
			return "pushed new"
		case PushRemoved:
			return "deleted"
		}
		return "pushed to"
	}
	switch e.Action {
	case EventClosed:
		return "closed"
	case EventMerged:
		return "accepted"
	case EventJoined:
		return "joined"
	case EventLeft:
		return "left"
	case EventExpired:
		return "removed due to membership expiration from"
	case EventDestroyed:
		return "destroyed"
	case EventCommented:
		return "commented on"
	case EventApproved:
		return "approved"
	case EventCreated:
		if e.TargetType == "" {
			return "created"
		}
	}
	return "opened"
}
