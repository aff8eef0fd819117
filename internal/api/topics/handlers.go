package topics

import (
	"net/http"

	"quarry/internal/api/endpoint"
	"quarry/internal/api/entity"
	"quarry/internal/topics"
)

func topicInput(p *endpoint.Params) topics.Input {
	in := topics.Input{Name: p.StringPtr("name"), Title: p.StringPtr("title"), Description: p.StringPtr("description"), Avatar: p.File("avatar")}
	if p.Has("avatar") && in.Avatar == nil {
		if v, _ := p.Raw("avatar"); v == "" {
			in.RemoveAvatar = true
		}
	}
	return in
}

func (h *Handlers) listTopics(c *endpoint.Call) error {
	search, _ := c.P.String("search")
	without := c.P.Flag("without_projects")
	pg, err := c.Page()
	if err != nil {
		return err
	}
	ts, info, err := h.topics.List(c.Ctx(), search, without, pg)
	if err != nil {
		return err
	}
	out := make([]entity.Topic, len(ts))
	for i := range ts {
		out[i] = h.r.Topic(&ts[i])
	}
	c.Paginate(pg, info)
	return c.JSON(http.StatusOK, out)
}

func (h *Handlers) getTopic(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	t, err := h.topics.Get(c.Ctx(), id)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Topic(&t))
}

func (h *Handlers) createTopic(c *endpoint.Call) error {
	c.P.Require("name")
	in := topicInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	t, err := h.topics.Create(c.Ctx(), c.Actor, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Topic(&t))
}

func (h *Handlers) updateTopic(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	in := topicInput(c.P)
	if err := c.P.Err(); err != nil {
		return err
	}
	t, err := h.topics.Update(c.Ctx(), c.Actor, id, in)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, h.r.Topic(&t))
}

func (h *Handlers) deleteTopic(c *endpoint.Call) error {
	id, err := c.PathID("id")
	if err != nil {
		return err
	}
	if err := h.topics.Delete(c.Ctx(), c.Actor, id); err != nil {
		return err
	}
	return c.NoContent()
}

func (h *Handlers) mergeTopics(c *endpoint.Call) error {
	c.P.Require("source_topic_id", "target_topic_id")
	src, _ := c.P.Int("source_topic_id")
	dst, _ := c.P.Int("target_topic_id")
	if err := c.P.Err(); err != nil {
		return err
	}
	t, err := h.topics.Merge(c.Ctx(), c.Actor, src, dst)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, h.r.Topic(&t))
}
