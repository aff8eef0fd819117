package api

import (
	"net/http"

	"quarry/internal/topics"
)

func topicInput(p *Params) topics.Input {
	in := topics.Input{Name: p.StringPtr("name"), Title: p.StringPtr("title"), Description: p.StringPtr("description"), Avatar: p.File("avatar")}
	if p.Has("avatar") && in.Avatar == nil {
		if v, _ := p.Raw("avatar"); v == "" {
			in.RemoveAvatar = true
		}
	}
	return in
}

func (c *call) listTopics() error {
	search, _ := c.p.String("search")
	without := c.p.Flag("without_projects")
	pg, err := c.page()
	if err != nil {
		return err
	}
	ts, info, err := c.s.Topics.List(c.r.Context(), search, without, pg)
	if err != nil {
		return err
	}
	out := make([]topicJSON, len(ts))
	for i := range ts {
		out[i] = c.s.topic(&ts[i])
	}
	c.paginate(pg, info)
	return c.json(http.StatusOK, out)
}

func (c *call) getTopic() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	t, err := c.s.Topics.Get(c.r.Context(), id)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.topic(&t))
}

func (c *call) createTopic() error {
	c.p.Require("name")
	in := topicInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	t, err := c.s.Topics.Create(c.r.Context(), c.actor, in)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, c.s.topic(&t))
}

func (c *call) updateTopic() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	in := topicInput(c.p)
	if err := c.p.Err(); err != nil {
		return err
	}
	t, err := c.s.Topics.Update(c.r.Context(), c.actor, id, in)
	if err != nil {
		return err
	}
	return c.json(http.StatusOK, c.s.topic(&t))
}

func (c *call) deleteTopic() error {
	id, err := c.pathInt("id")
	if err != nil {
		return err
	}
	if err := c.s.Topics.Delete(c.r.Context(), c.actor, id); err != nil {
		return err
	}
	return c.noContent()
}

func (c *call) mergeTopics() error {
	c.p.Require("source_topic_id", "target_topic_id")
	src, _ := c.p.Int("source_topic_id")
	dst, _ := c.p.Int("target_topic_id")
	if err := c.p.Err(); err != nil {
		return err
	}
	t, err := c.s.Topics.Merge(c.r.Context(), c.actor, src, dst)
	if err != nil {
		return err
	}
	return c.json(http.StatusCreated, c.s.topic(&t))
}
