package entity

import (
	"quarry/internal/auth"
	"quarry/internal/ci"
	"quarry/internal/model"
)

// Environment entities (GitLab's EnvironmentBasic, Environment and
// Deployment).

type EnvironmentBasic struct {
	ID          int64   `json:"id"`
	Name        string  `json:"name"`
	Slug        string  `json:"slug"`
	ExternalURL *string `json:"external_url"`
	CreatedAt   Time    `json:"created_at"`
	UpdatedAt   Time    `json:"updated_at"`
}

type Environment struct {
	EnvironmentBasic
	Description     *string     `json:"description"`
	State           string      `json:"state"`
	Tier            string      `json:"tier"`
	AutoStopAt      *Time       `json:"auto_stop_at"`
	AutoStopSetting string      `json:"auto_stop_setting"`
	LastDeployment  *Deployment `json:"last_deployment,omitempty"`
}

type Deployment struct {
	ID          int64             `json:"id"`
	IID         int64             `json:"iid"`
	Ref         string            `json:"ref"`
	SHA         string            `json:"sha"`
	CreatedAt   Time              `json:"created_at"`
	UpdatedAt   Time              `json:"updated_at"`
	FinishedAt  *Time             `json:"finished_at"`
	User        *UserBasic        `json:"user"`
	Environment *EnvironmentBasic `json:"environment,omitempty"`
	Deployable  *Job              `json:"deployable"`
	Status      string            `json:"status"`
}

// EnvironmentBasic renders an environment's short form.
func (r *Renderer) EnvironmentBasic(e model.Environment) EnvironmentBasic {
	out := EnvironmentBasic{ID: e.ID, Name: e.Name, Slug: e.Slug, CreatedAt: Time(e.CreatedAt), UpdatedAt: Time(e.UpdatedAt)}
	if e.ExternalURL != "" {
		u := e.ExternalURL
		out.ExternalURL = &u
	}
	return out
}

// Environment renders an environment; its last deployment (without its
// environment, as GitLab's single-environment answer) when the view has
// one.
func (r *Renderer) Environment(v ci.EnvironmentView, viewer auth.Actor) Environment {
	out := Environment{EnvironmentBasic: r.EnvironmentBasic(v.Environment), State: string(v.State), Tier: v.Tier,
		AutoStopAt: TimePtr(v.AutoStopAt), AutoStopSetting: "always"}
	if v.Description != "" {
		d := v.Description
		out.Description = &d
	}
	if v.LastDeployment != nil {
		d := r.Deployment(*v.LastDeployment, viewer)
		d.Environment = nil
		out.LastDeployment = &d
	}
	return out
}

// Deployment renders a deployment with its environment, user and job.
func (r *Renderer) Deployment(v ci.DeploymentView, viewer auth.Actor) Deployment {
	env := r.EnvironmentBasic(v.Environment)
	out := Deployment{ID: v.ID, IID: v.IID, Ref: v.Ref, SHA: v.SHA, CreatedAt: Time(v.CreatedAt), UpdatedAt: Time(v.UpdatedAt),
		FinishedAt: TimePtr(v.FinishedAt), Environment: &env, Status: string(v.Status)}
	if v.User != nil {
		u := r.UserBasic(v.User)
		out.User = &u
	}
	if v.Job != nil {
		j := r.Job(*v.Job, viewer)
		out.Deployable = &j
	}
	return out
}
