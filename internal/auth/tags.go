package auth

import "quarry/internal/model"

// CanCreateTag decides whether a signed-in actor with access acc to a
// project (pushes already allowed: developers up) may create tag under
// the project's protected tag rules (GitLab's UserAccess#can_create_tag?):
// a tag no rule covers, yes; a covered one when a grant of any matching
// rule admits the actor — a role (no one admits nobody, administrators
// pass any other), the user itself, or a group it belongs to (inGroup;
// nil admits no group).
func CanCreateTag(a Actor, acc model.AccessLevel, tag string, rules []model.ProtectedTag, inGroup func(groupID int64) bool) bool {
	if !a.SignedIn() {
		return false
	}
	matching := model.ProtectedTagsMatching(rules, tag)
	if len(matching) == 0 {
		return a.Admin() || acc >= model.Developer
	}
	for _, rule := range matching {
		for _, g := range rule.Create {
			if grantAdmits(a, acc, g, inGroup) {
				return true
			}
		}
	}
	return false
}

// grantAdmits applies one grant of a protected ref to an actor.
func grantAdmits(a Actor, acc model.AccessLevel, g model.BranchAccess, inGroup func(int64) bool) bool {
	switch {
	case g.AccessLevel != nil:
		switch lvl := *g.AccessLevel; {
		case lvl == model.NoOneAccess:
			return false
		case a.Admin():
			return true
		case lvl == model.AdminAccess:
			return false
		default:
			return acc >= model.Developer && acc >= lvl
		}
	case g.UserID != nil:
		return a.Is(*g.UserID) && (a.Admin() || acc >= model.Developer)
	case g.GroupID != nil:
		return inGroup != nil && (a.Admin() || acc >= model.Developer) && inGroup(*g.GroupID)
	}
	return false
}
