// Package boards keeps projects' and groups' issue boards and their
// label lists (GitLab's Board and List with the Boards services).
//
// A board's label lists sit at positions 0.. in a row: a new list goes
// after the last one, a moved list shifts those between its old and new
// place, a removed one closes its gap. The backlog and closed lists exist
// on every board but are not listed. A list's label is one the board's
// owner sees: the project's own or an ancestor group's; a group's own or
// an ancestor's. Boards are read by whoever may use the project's issues
// (or reads the group) and written by Reporters up.
package boards

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"quarry/internal/auth"
	"quarry/internal/model"
	"quarry/internal/store"
)

// Projects resolves projects with the caller's access (the projects
// service).
type Projects interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Project, model.AccessLevel, error)
}

// Groups resolves groups with the caller's access (the groups service).
type Groups interface {
	Resolve(ctx context.Context, a auth.Actor, ref string) (model.Group, model.AccessLevel, error)
}

// Service manages boards.
type Service struct {
	db       *store.DB
	projects Projects
	groups   Groups
}

// New returns the service.
func New(db *store.DB, projects Projects, groups Groups) *Service {
	return &Service{db: db, projects: projects, groups: groups}
}

// Bounds of a board.
const (
	MaxNameLength = 255
	// MaxLists bounds the label lists of one board.
	MaxLists = 100
)

// View is a board with its project or group, for rendering.
type View struct {
	model.Board
	Project *model.Project
	Group   *model.Group
	// Access is the caller's in the project; CanReadCode whether the
	// caller reads its code (the project entity's default branch).
	Access      model.AccessLevel
	CanReadCode bool
}

// parent is a resolved project or group with the caller's access.
type parent struct {
	project *model.Project
	group   *model.Group
	access  model.AccessLevel
	// readCode: the caller reads the project's code.
	readCode bool
}

func (p *parent) owner() store.BoardOwner {
	if p.project != nil {
		return store.BoardOwner{ProjectID: p.project.ID}
	}
	return store.BoardOwner{GroupID: p.group.ID}
}

// labels are where a list's label may come from: the project's own and
// its ancestor groups', or the group's and its ancestors'.
func (p *parent) labels() store.LabelOwners {
	if p.project != nil {
		lo := store.LabelOwners{ProjectID: p.project.ID}
		if p.project.Namespace.Kind == model.NamespaceGroup {
			lo.GroupIDs = traversalIDs(p.project.Namespace.Traversal)
		}
		return lo
	}
	return store.LabelOwners{GroupIDs: traversalIDs(p.group.Traversal)}
}

// traversalIDs parses "1/5/9/" into [1 5 9].
func traversalIDs(t string) []int64 {
	var out []int64
	for _, f := range strings.Split(strings.TrimSuffix(t, "/"), "/") {
		if id, err := strconv.ParseInt(f, 10, 64); err == nil {
			out = append(out, id)
		}
	}
	return out
}

func (p *parent) view(b model.Board) View {
	return View{Board: b, Project: p.project, Group: p.group, Access: p.access, CanReadCode: p.readCode}
}

// open resolves o (404 when the caller does not see it) and checks
// action (403).
func (s *Service) open(ctx context.Context, a auth.Actor, o model.OwnerRef, action auth.Action) (*parent, error) {
	p := &parent{}
	if o.Group {
		g, acc, err := s.groups.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		p.group, p.access = &g, acc
	} else {
		pr, acc, err := s.projects.Resolve(ctx, a, o.Ref)
		if err != nil {
			return nil, err
		}
		p.project, p.access = &pr, acc
	}
	r := auth.Resource{Project: p.project, Group: p.group, Access: p.access}
	// The project or group is visible here; a board is not when its
	// issues are off: 403 as GitLab's authorize!.
	if !auth.Can(a, auth.ReadIssueBoard, r) {
		return nil, model.Forbidden("")
	}
	p.readCode = p.project != nil && auth.Can(a, auth.ReadCode, r)
	if action != auth.ReadIssueBoard && !auth.Can(a, action, r) {
		return nil, model.Forbidden("")
	}
	return p, nil
}

func (s *Service) board(ctx context.Context, p *parent, id int64) (model.Board, error) {
	b, err := s.db.Board(ctx, p.owner(), id)
	if errors.Is(err, model.ErrNotFound) {
		return b, model.NotFound("Board")
	}
	return b, err
}

// List returns a page of the owner's boards by id.
func (s *Service) List(ctx context.Context, a auth.Actor, o model.OwnerRef, page model.Page) ([]View, model.PageInfo, error) {
	p, err := s.open(ctx, a, o, auth.ReadIssueBoard)
	if err != nil {
		return nil, model.PageInfo{}, err
	}
	list, info, err := s.db.Boards(ctx, p.owner(), page)
	if err != nil {
		return nil, info, err
	}
	out := make([]View, len(list))
	for i, b := range list {
		out[i] = p.view(b)
	}
	return out, info, nil
}

// Get returns one board.
func (s *Service) Get(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) (View, error) {
	p, err := s.open(ctx, a, o, auth.ReadIssueBoard)
	if err != nil {
		return View{}, err
	}
	b, err := s.board(ctx, p, id)
	return p.view(b), err
}

// Input carries a board's attributes; nil means "not given".
type Input struct {
	Name                            *string
	HideBacklogList, HideClosedList *bool
}

func validate(in *Input) error {
	if in.Name == nil {
		return nil
	}
	n := strings.TrimSpace(*in.Name)
	in.Name = &n
	switch {
	case n == "":
		return model.Invalid("name", "can't be blank")
	case utf8.RuneCountInString(n) > MaxNameLength:
		return model.Invalid("name", fmt.Sprintf("is too long (maximum is %d characters)", MaxNameLength))
	}
	return nil
}

// Create adds a board, with its backlog and closed lists (Reporters up).
func (s *Service) Create(ctx context.Context, a auth.Actor, o model.OwnerRef, in Input) (View, error) {
	p, err := s.open(ctx, a, o, auth.AdminIssueBoard)
	if err != nil {
		return View{}, err
	}
	if in.Name == nil {
		return View{}, model.Invalid("name", "can't be blank")
	}
	if err := validate(&in); err != nil {
		return View{}, err
	}
	b := model.Board{Name: *in.Name, Lists: []model.BoardList{}}
	if in.HideBacklogList != nil {
		b.HideBacklogList = *in.HideBacklogList
	}
	if in.HideClosedList != nil {
		b.HideClosedList = *in.HideClosedList
	}
	if p.project != nil {
		b.ProjectID = p.project.ID
	} else {
		b.GroupID = p.group.ID
	}
	if err := s.db.InTx(ctx, func(tx *store.Tx) error { return tx.CreateBoard(ctx, &b) }); err != nil {
		return View{}, err
	}
	return p.view(b), nil
}

// Update changes a board's name and which implicit lists it hides
// (Reporters up).
func (s *Service) Update(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64, in Input) (View, error) {
	p, err := s.open(ctx, a, o, auth.AdminIssueBoard)
	if err != nil {
		return View{}, err
	}
	b, err := s.board(ctx, p, id)
	if err != nil {
		return View{}, err
	}
	if err := validate(&in); err != nil {
		return View{}, err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		return tx.UpdateBoard(ctx, &b, in.Name, in.HideBacklogList, in.HideClosedList)
	})
	if errors.Is(err, model.ErrNotFound) {
		return View{}, model.NotFound("Board")
	}
	return p.view(b), err
}

// Delete removes a board with its lists (Reporters up).
func (s *Service) Delete(ctx context.Context, a auth.Actor, o model.OwnerRef, id int64) error {
	p, err := s.open(ctx, a, o, auth.AdminIssueBoard)
	if err != nil {
		return err
	}
	if _, err := s.board(ctx, p, id); err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error { return tx.DeleteBoard(ctx, id) })
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFound("Board")
	}
	return err
}

// Lists returns a board's label lists by position, and the board.
func (s *Service) Lists(ctx context.Context, a auth.Actor, o model.OwnerRef, boardID int64) ([]model.BoardList, error) {
	b, err := s.Get(ctx, a, o, boardID)
	return b.Lists, err
}

func findList(b model.Board, listID int64) (model.BoardList, error) {
	for _, l := range b.Lists {
		if l.ID == listID {
			return l, nil
		}
	}
	return model.BoardList{}, model.NotFound("List")
}

// GetList returns one label list of a board.
func (s *Service) GetList(ctx context.Context, a auth.Actor, o model.OwnerRef, boardID, listID int64) (model.BoardList, error) {
	b, err := s.Get(ctx, a, o, boardID)
	if err != nil {
		return model.BoardList{}, err
	}
	return findList(b.Board, listID)
}

// errAPI is GitLab's render_api_error!({ error: msg }, 400).
func errAPI(msg string) error { return model.WrappedError(model.KindBadRequest, msg) }

// CreateList appends a list of a label the board's owner sees
// (Reporters up): 400 "Label not found!" for any other label, 400 "Label
// has already been taken" when the board has a list of it.
func (s *Service) CreateList(ctx context.Context, a auth.Actor, o model.OwnerRef, boardID, labelID int64) (model.BoardList, error) {
	p, err := s.open(ctx, a, o, auth.ReadIssueBoard)
	if err != nil {
		return model.BoardList{}, err
	}
	b, err := s.board(ctx, p, boardID)
	if err != nil {
		return model.BoardList{}, err
	}
	// As GitLab: the label check comes before the permission check.
	var label model.Label
	if labelID > 0 {
		label, err = s.db.FindLabel(ctx, p.labels(), labelID, "")
	}
	if labelID <= 0 || errors.Is(err, model.ErrNotFound) {
		return model.BoardList{}, errAPI("Label not found!")
	}
	if err != nil {
		return model.BoardList{}, err
	}
	if !auth.Can(a, auth.AdminIssueBoard, auth.Resource{Project: p.project, Group: p.group, Access: p.access}) {
		return model.BoardList{}, model.Forbidden("")
	}
	l := model.BoardList{BoardID: b.ID, Label: label}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockBoard(ctx, b.ID); err != nil {
			return err
		}
		n, err := tx.CountBoardLabelLists(ctx, b.ID)
		if err != nil {
			return err
		}
		if n >= MaxLists {
			return errAPI(fmt.Sprintf("A board has at most %d lists", MaxLists))
		}
		return tx.CreateBoardList(ctx, &l)
	})
	switch {
	case errors.Is(err, model.ErrConflict):
		return model.BoardList{}, errAPI("Label has already been taken")
	case errors.Is(err, model.ErrNotFound): // the board or label went away
		return model.BoardList{}, model.NotFound("Board")
	}
	return l, err
}

// MoveList moves a label list to position (0.. below the number of
// label lists, not its own): 400 "List could not be moved!" otherwise.
func (s *Service) MoveList(ctx context.Context, a auth.Actor, o model.OwnerRef, boardID, listID int64, position int64) (model.BoardList, error) {
	p, err := s.open(ctx, a, o, auth.ReadIssueBoard)
	if err != nil {
		return model.BoardList{}, err
	}
	b, err := s.board(ctx, p, boardID)
	if err != nil {
		return model.BoardList{}, err
	}
	if _, err := findList(b, listID); err != nil {
		return model.BoardList{}, err
	}
	if !auth.Can(a, auth.AdminIssueBoard, auth.Resource{Project: p.project, Group: p.group, Access: p.access}) {
		return model.BoardList{}, model.Forbidden("")
	}
	var moved model.BoardList
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockBoard(ctx, b.ID); err != nil {
			return err
		}
		// Read again under the lock: another move may have run.
		cur, err := tx.Board(ctx, p.owner(), b.ID)
		if err != nil {
			return err
		}
		l, err := findList(cur, listID)
		if err != nil {
			return err
		}
		if !ValidMove(l.Position, position, len(cur.Lists)) {
			return errAPI("List could not be moved!")
		}
		if err := tx.MoveBoardList(ctx, b.ID, l.ID, l.Position, int(position)); err != nil {
			return err
		}
		l.Position = int(position)
		moved = l
		return nil
	})
	if errors.Is(err, model.ErrNotFound) {
		return model.BoardList{}, model.NotFound("List")
	}
	return moved, err
}

// ValidMove is GitLab's Boards::Lists::MoveService#valid_move?: a new
// position, within the board's n label lists.
func ValidMove(from int, to int64, n int) bool {
	return to >= 0 && to < int64(n) && to != int64(from)
}

// DeleteList removes a label list, moving the later ones up (Reporters
// up).
func (s *Service) DeleteList(ctx context.Context, a auth.Actor, o model.OwnerRef, boardID, listID int64) error {
	p, err := s.open(ctx, a, o, auth.AdminIssueBoard)
	if err != nil {
		return err
	}
	b, err := s.board(ctx, p, boardID)
	if err != nil {
		return err
	}
	if _, err := findList(b, listID); err != nil {
		return err
	}
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockBoard(ctx, b.ID); err != nil {
			return err
		}
		return tx.DeleteBoardList(ctx, b.ID, listID)
	})
	if errors.Is(err, model.ErrNotFound) {
		return model.NotFound("List")
	}
	return err
}

// GroupBoards lists a group's boards with their label lists (and each
// list's label, to carry its title), at most limit: what a group export
// carries.
func (s *Service) GroupBoards(ctx context.Context, groupID int64, limit int) ([]model.Board, error) {
	return s.db.GroupBoards(ctx, groupID, 0, limit)
}

// ImportBoard recreates a board in a group with lists of the given label
// ids in order (the importer maps exported titles to the new group's
// label ids; a list whose label it could not map is left out by giving
// 0). No permission check: the importer has made it.
func (s *Service) ImportBoard(ctx context.Context, groupID int64, b model.Board, labelIDs []int64) (model.Board, error) {
	b.ID, b.ProjectID, b.GroupID, b.Lists = 0, 0, groupID, []model.BoardList{}
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.CreateBoard(ctx, &b); err != nil {
			return err
		}
		for _, id := range labelIDs {
			if id <= 0 || len(b.Lists) >= MaxLists {
				continue
			}
			l := model.BoardList{BoardID: b.ID, Label: model.Label{ID: id}}
			if err := tx.CreateBoardList(ctx, &l); err != nil {
				if errors.Is(err, model.ErrConflict) {
					continue
				}
				return err
			}
			b.Lists = append(b.Lists, l)
		}
		return nil
	})
	return b, err
}
