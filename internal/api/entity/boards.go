package entity

import (
	"quarry/internal/auth"
	"quarry/internal/boards"
	"quarry/internal/labels"
	"quarry/internal/model"
	"quarry/internal/projects"
)

// LabelBasic is GitLab's Entities::LabelBasic (a board list's label).
type LabelBasic struct {
	ID              int64   `json:"id"`
	Name            string  `json:"name"`
	Color           string  `json:"color"`
	Description     *string `json:"description"`
	DescriptionHTML *string `json:"description_html"`
	TextColor       string  `json:"text_color"`
}

// BoardList is GitLab's Entities::List.
type BoardList struct {
	ID       int64      `json:"id"`
	Label    LabelBasic `json:"label"`
	Position int        `json:"position"`
}

// BoardGroup is a group board's group.
type BoardGroup struct {
	ID     int64  `json:"id"`
	Name   string `json:"name"`
	WebURL string `json:"web_url"`
}

// Board is GitLab's Entities::Board: project (BasicProjectDetails) for a
// project's board, group for a group's, the other null; milestone null
// (no board scope is kept).
type Board struct {
	ID              int64         `json:"id"`
	Name            string        `json:"name"`
	HideBacklogList bool          `json:"hide_backlog_list"`
	HideClosedList  bool          `json:"hide_closed_list"`
	Project         *ProjectBasic `json:"project"`
	Group           *BoardGroup   `json:"group"`
	Milestone       *struct{}     `json:"milestone"`
	Lists           []BoardList   `json:"lists"`
}

// BoardList renders a label list.
func (r *Renderer) BoardList(l *model.BoardList) BoardList {
	j := BoardList{ID: l.ID, Position: l.Position, Label: LabelBasic{ID: l.Label.ID, Name: l.Label.Title, Color: l.Label.Color,
		TextColor: labels.TextColor(l.Label.Color)}}
	if d := l.Label.Description; d != "" {
		h := descriptionHTML(d)
		j.Label.Description, j.Label.DescriptionHTML = &d, &h
	}
	return j
}

// Board renders a board as its caller sees it.
func (r *Renderer) Board(v *boards.View, a auth.Actor) Board {
	j := Board{ID: v.ID, Name: v.Name, HideBacklogList: v.HideBacklogList, HideClosedList: v.HideClosedList,
		Lists: make([]BoardList, len(v.Lists))}
	for i := range v.Lists {
		j.Lists[i] = r.BoardList(&v.Lists[i])
	}
	if v.Project != nil {
		pb := r.ProjectBasic(&projects.View{Project: *v.Project, Access: v.Access, CanReadCode: v.CanReadCode}, a)
		j.Project = &pb
	}
	if g := v.Group; g != nil {
		j.Group = &BoardGroup{ID: g.ID, Name: g.Name, WebURL: r.NamespaceWebURL(&g.Namespace)}
	}
	return j
}
