package groups

import (
	"context"
	"errors"
	"fmt"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
	"quarry/internal/tasks"
)

// ListInput are the filters of the group lists.
type ListInput struct {
	AllAvailable     *bool
	SkipGroups       []int64
	Search           string
	OrderBy          string
	Sort             string
	Owned            bool
	MinAccessLevel   int
	TopLevelOnly     bool
	CustomAttributes map[string]string
}

func (s *Service) filter(a auth.Actor, in ListInput) store.GroupFilter {
	f := store.GroupFilter{
		Viewer: Viewer(a, s.today()), SkipGroups: in.SkipGroups, Search: in.Search, OrderBy: in.OrderBy,
		Desc: in.Sort == "desc", Owned: in.Owned && a.SignedIn(), MinAccessLevel: in.MinAccessLevel, TopLevelOnly: in.TopLevelOnly,
	}
	if !a.SignedIn() {
		f.Owned, f.MinAccessLevel = false, 0
	}
	f.AllAvailable = a.Admin() || !a.SignedIn()
	if in.AllAvailable != nil {
		f.AllAvailable = *in.AllAvailable
	}
	if a.Admin() {
		f.CustomAttributes = in.CustomAttributes
	}
	return f
}

// List returns the groups for GET /groups: for a signed-in user those
// they belong to (or every visible one with all_available), for
// administrators and anonymous callers every visible group.
func (s *Service) List(ctx context.Context, a auth.Actor, in ListInput, page model.Page) ([]model.Group, model.PageInfo, error) {
	return s.db.ListGroups(ctx, s.filter(a, in), page)
}

// Subgroups lists a group's direct children (descendants when all is set)
// that the actor may see.
func (s *Service) Subgroups(ctx context.Context, a auth.Actor, ref string, all bool, in ListInput, page model.Page) ([]model.Group, model.PageInfo, error) {
	g, _, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	in.TopLevelOnly = false
	f := s.filter(a, in)
	f.AllAvailable = true
	f.SearchPathsOnly = true
	if all {
		f.DescendantsOf = g.Traversal
	} else {
		f.ParentID = &g.ID
	}
	return s.db.ListGroups(ctx, f, page)
}

// Namespace resolves /namespaces/:id (an id or a full path) for the actor.
func (s *Service) Namespace(ctx context.Context, a auth.Actor, ref string) (model.Namespace, error) {
	n, err := s.db.NamespaceByRef(ctx, ref)
	if err != nil {
		return n, model.NotFoundAs(err, "Namespace")
	}
	if a.Admin() {
		return n, nil
	}
	acc, err := s.Access(ctx, a, n.ID)
	if err != nil {
		return n, err
	}
	// GitLab shows a namespace to its members (and a user their own).
	if acc < model.Guest {
		return n, model.NotFound("Namespace")
	}
	return n, nil
}

// NamespacesInput filters GET /namespaces.
type NamespacesInput struct {
	Search                                  string
	FullPathSearch, OwnedOnly, TopLevelOnly bool
}

// Namespaces lists the actor's namespaces (all of them for admins).
func (s *Service) Namespaces(ctx context.Context, a auth.Actor, in NamespacesInput, page model.Page) ([]model.Namespace, model.PageInfo, error) {
	return s.db.ListNamespaces(ctx, store.NamespaceFilter{Viewer: Viewer(a, s.today()), Search: in.Search,
		FullPathSearch: in.FullPathSearch, OwnedOnly: in.OwnedOnly, TopLevelOnly: in.TopLevelOnly}, page)
}

// PathExists reports whether a namespace path is taken under parent (0:
// top level) and suggests a free one when it is.
func (s *Service) PathExists(ctx context.Context, a auth.Actor, path string, parent int64) (bool, []string, error) {
	taken, err := s.db.SiblingPathTaken(ctx, parent, path, 0)
	if err != nil || !taken {
		return false, []string{}, err
	}
	for i := 1; i < 1000; i++ {
		cand := fmt.Sprintf("%s%d", path, i)
		t, err := s.db.SiblingPathTaken(ctx, parent, cand, 0)
		if err != nil {
			return true, nil, err
		}
		if !t {
			return true, []string{cand}, nil
		}
	}
	return true, []string{}, nil
}

// deleteTask is the background removal of a group.
var deleteTask = tasks.Define("delete_group", tasks.KindOptions[deletePayload]{MaxAttempts: 5})

type deletePayload struct {
	GroupID int64 `json:"group_id"`
	// Delayed says the group was marked: a group no longer marked when
	// the task runs was restored meanwhile.
	Delayed bool `json:"delayed,omitempty"`
}

// ProjectRemover removes a project and its repository (the projects
// service); groups call it for the projects inside a deleted group.
type ProjectRemover interface {
	RemoveProject(ctx context.Context, p model.Project) error
}

// Delete marks a group for deletion (owners and administrators); it goes,
// with everything inside, after the deletion delay (at once when the delay
// is zero or permanently is set on an already-marked group).
func (s *Service) Delete(ctx context.Context, a auth.Actor, ref string, permanently bool, fullPath string) error {
	g, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return err
	}
	if !auth.Can(a, auth.AdminGroup, auth.Resource{Group: &g, Access: acc}) {
		return model.Forbidden("")
	}
	st, err := s.instance(ctx)
	if err != nil {
		return err
	}
	plan, err := model.PlanDeletion("Group", g.MarkedForDeletionOn != "", permanently, fullPath, g.FullPath, st.GroupDeletionDelay(), s.now())
	if err != nil {
		return err
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		if plan.Mark {
			g.MarkedForDeletionOn = s.today()
			g.UpdatedAt = s.now().UTC()
			if err := tx.UpdateGroup(ctx, &g); err != nil {
				return err
			}
		}
		_, err := deleteTask.Enqueue(ctx, tx, deletePayload{GroupID: g.ID, Delayed: plan.Mark}, tasks.At(plan.RunAt))
		return err
	})
}

// Restore unmarks a group marked for deletion.
func (s *Service) Restore(ctx context.Context, a auth.Actor, ref string) (model.Group, error) {
	g, acc, err := s.Resolve(ctx, a, ref)
	if err != nil {
		return g, err
	}
	if !auth.Can(a, auth.AdminGroup, auth.Resource{Group: &g, Access: acc}) {
		return g, model.Forbidden("")
	}
	if g.MarkedForDeletionOn == "" {
		return g, model.BadRequestRaw("Group has not been marked for deletion")
	}
	g.MarkedForDeletionOn = ""
	g.UpdatedAt = s.now().UTC()
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateGroup(ctx, &g) })
	return g, err
}

// OnRemoved registers what else goes when a group is removed (its wiki
// repository); it runs for the group and each subgroup before their rows
// go, so a failure leaves the group to be removed again. Call it while
// composing, before use.
func (s *Service) OnRemoved(fn func(ctx context.Context, groupID int64) error) {
	s.removed = append(s.removed, fn)
}

// SetProjectRemover tells the service how to remove the projects inside a
// deleted group (the projects service); the composition root sets it.
func (s *Service) SetProjectRemover(r ProjectRemover) { s.remover = r }

// runDelete removes a group once it is due: still marked (or deleted at
// once), its projects first, then the namespaces.
func (s *Service) runDelete(ctx context.Context, p deletePayload) error {
	g, err := s.db.GroupByID(ctx, p.GroupID)
	if errors.Is(err, model.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.Delayed && g.MarkedForDeletionOn == "" {
		return nil // restored meanwhile
	}
	return s.RemoveGroup(ctx, g)
}

// RemoveGroup removes a group now: the projects in it and its subgroups
// (repositories included), then the namespaces, and the access their
// members had through them.
func (s *Service) RemoveGroup(ctx context.Context, g model.Group) error {
	projects, err := s.db.ProjectsInTree(ctx, g.Traversal)
	if err != nil {
		return err
	}
	for _, pr := range projects {
		if err := s.remover.RemoveProject(ctx, pr); err != nil {
			return fmt.Errorf("remove project %d: %w", pr.ID, err)
		}
	}
	ids, err := s.db.GroupIDsInTree(ctx, g.Traversal)
	if err != nil {
		return err
	}
	for _, id := range ids {
		for _, fn := range s.removed {
			if err := fn(ctx, id); err != nil {
				return fmt.Errorf("remove what group %d keeps: %w", id, err)
			}
		}
	}
	return s.db.InTx(ctx, func(tx *store.Tx) error {
		users, err := tx.UsersInTree(ctx, g.Traversal)
		if err != nil {
			return err
		}
		if err := tx.DeleteNamespaceTree(ctx, g.Traversal); err != nil {
			return err
		}
		return tx.RefreshAuthorizations(ctx, users...)
	})
}

// StatisticsOf is Statistics for a page of groups, in one query.
func (s *Service) StatisticsOf(ctx context.Context, gs []model.Group) (map[int64]model.ProjectStatistics, error) {
	ids := make([]int64, len(gs))
	for i := range gs {
		ids[i] = gs[i].ID
	}
	return s.db.GroupStatistics(ctx, ids)
}

// Statistics sums the storage of the projects inside a group and of the
// wikis of the group, its subgroups and their projects.
func (s *Service) Statistics(ctx context.Context, g model.Group) (model.ProjectStatistics, error) {
	projects, err := s.db.ProjectsInTree(ctx, g.Traversal)
	if err != nil {
		return model.ProjectStatistics{}, err
	}
	var st model.ProjectStatistics
	for _, p := range projects {
		st.RepositorySize += p.RepositorySize
		st.WikiSize += p.WikiSize
	}
	groupWikis, err := s.db.GroupWikiSizeInTree(ctx, g.Traversal)
	st.WikiSize += groupWikis
	st.StorageSize = st.RepositorySize + st.WikiSize
	return st, err
}
