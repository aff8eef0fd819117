package entity

import (
	"encoding/json"
	"fmt"
	"strconv"

	"quarry/internal/auth"
	"quarry/internal/mergerequests"
)

// A merge request's template is its JSON as its row (labels, merge check,
// changes count and diff refs included), its assignees' and reviewers'
// links and its target project's row and namespace show it, keyed by
// their entity_version (moved by triggers on every write of any process).
// What moves without them is a hole filled per request: the people (their
// names move with their own rows), detailed_merge_status (approvals, the
// head pipeline, the merge method), and in the detail the caller's
// subscribed and user.can_merge and the head pipeline.
const (
	holeMerger    = `,"merged_by":null,"merge_user":null`
	holeCloser    = `,"closed_by":null`
	holePeople    = `,"author":null,"assignees":[],"assignee":null,"reviewers":[]`
	holeDetailed  = `,"detailed_merge_status":""`
	holeSubscr    = `,"subscribed":false`
	holePipelines = `,"pipeline":null,"head_pipeline":null`
	holeUser      = `,"user":{"can_merge":false}`
)

// mergeRequestKey is the cache key of a merge request's template (kind:
// list or detail); ok is false when a version is unknown (a view changed
// after its row was read, or a target not read), which is not cached.
func mergeRequestKey(kind uint8, v *mergerequests.View) (CacheKey, bool) {
	t := &v.Target
	if v.EntityVersion <= 0 || t.ID != v.TargetProjectID || t.EntityVersion <= 0 || t.Namespace.EntityVersion <= 0 {
		return CacheKey{}, false
	}
	return CacheKey{Kind: kind, ID: v.ID, Created: v.CreatedAt.UnixMicro(),
		V: [3]int64{v.EntityVersion, t.EntityVersion, t.Namespace.EntityVersion}}, true
}

// cutHoles removes each of holes (in order) from b where it first occurs
// after the previous one and returns the template with holes there.
func cutHoles(b []byte, id int64, holes ...string) (*Template, error) {
	cuts := make([]int, len(holes))
	at := 0
	for i, h := range holes {
		s := cutBefore(b[at:], h)
		if s < 0 {
			return nil, fmt.Errorf("entity: merge request %d: hole %d not found", id, i)
		}
		s += at
		b = append(b[:s:s], b[s+len(h):]...)
		cuts[i], at = s, s
	}
	return NewTemplate(b, cuts...), nil
}

// mergeRequestTemplate encodes v without what the holes hold.
func (r *Renderer) mergeRequestTemplate(v mergerequests.View, detail bool) (*Template, error) {
	m := r.mergeRequest(v, summaries{})
	m.MergedBy, m.MergeUser, m.ClosedBy, m.Author, m.Assignee = nil, nil, nil, nil, nil
	m.Assignees, m.Reviewers, m.DetailedMergeStatus = []UserBasic{}, []UserBasic{}, ""
	holes := []string{holeMerger, holeCloser, holePeople, holeDetailed}
	var j any = m
	if detail {
		d := r.mergeRequestDetail(v, auth.Actor{})
		d.MergeRequest, d.Subscribed, d.User = m, false, MRUserPerms{}
		j = d
		holes = append(holes, holeSubscr, holePipelines, holeUser)
	}
	b, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	return cutHoles(b, v.ID, holes...)
}

// encodedPeople are the user summaries encoded so far for a response
// (nil: an unknown user, encoded null).
type encodedPeople map[int64][]byte

func (p encodedPeople) of(r *Renderer, v *mergerequests.View, id int64) ([]byte, error) {
	if b, ok := p[id]; ok {
		return b, nil
	}
	var b []byte
	if u, ok := v.Users[id]; ok {
		var err error
		if b, err = json.Marshal(r.UserBasic(&u)); err != nil {
			return nil, err
		}
	}
	p[id] = b
	return b, nil
}

// appendPerson appends a person's summary, null for none.
func (p encodedPeople) appendPerson(dst []byte, r *Renderer, v *mergerequests.View, id int64) ([]byte, error) {
	b, err := p.of(r, v, id)
	if err != nil {
		return nil, err
	}
	if b == nil {
		return append(dst, "null"...), nil
	}
	return append(dst, b...), nil
}

// appendPeople appends a list of the known people among ids; first is
// the first one's summary (nil: none).
func (p encodedPeople) appendPeople(dst []byte, r *Renderer, v *mergerequests.View, ids []int64) (out, first []byte, err error) {
	dst = append(dst, '[')
	n := 0
	for _, id := range ids {
		b, err := p.of(r, v, id)
		if err != nil {
			return nil, nil, err
		}
		if b == nil {
			continue
		}
		if n > 0 {
			dst = append(dst, ',')
		} else {
			first = b
		}
		dst = append(dst, b...)
		n++
	}
	return append(dst, ']'), first, nil
}

// spliceMergeRequest appends v's entity to dst: t with the holes filled.
// The bytes are those of json.Marshal(r.MergeRequest(v)) (detail:
// r.MergeRequestDetail(v, viewer)).
func (r *Renderer) spliceMergeRequest(dst []byte, t *Template, v *mergerequests.View, viewer auth.Actor, detail bool, people encodedPeople) ([]byte, error) {
	var err error
	merger := append(make([]byte, 0, 512), `,"merged_by":`...)
	if merger, err = people.appendPerson(merger, r, v, v.MergedByID); err != nil {
		return nil, err
	}
	merger = append(merger, `,"merge_user":`...)
	if merger, err = people.appendPerson(merger, r, v, v.MergedByID); err != nil {
		return nil, err
	}
	closer := append(make([]byte, 0, 256), `,"closed_by":`...)
	if closer, err = people.appendPerson(closer, r, v, v.ClosedByID); err != nil {
		return nil, err
	}
	ppl := append(make([]byte, 0, 1024), `,"author":`...)
	if ppl, err = people.appendPerson(ppl, r, v, v.AuthorID); err != nil {
		return nil, err
	}
	ppl = append(ppl, `,"assignees":`...)
	var first []byte
	if ppl, first, err = people.appendPeople(ppl, r, v, v.AssigneeIDs); err != nil {
		return nil, err
	}
	ppl = append(ppl, `,"assignee":`...)
	if first == nil {
		ppl = append(ppl, "null"...)
	} else {
		ppl = append(ppl, first...)
	}
	ppl = append(ppl, `,"reviewers":`...)
	if ppl, _, err = people.appendPeople(ppl, r, v, v.ReviewerIDs); err != nil {
		return nil, err
	}
	detailed := strconv.AppendQuote([]byte(`,"detailed_merge_status":`), detailedMergeStatus(*v))
	if !detail {
		return t.Splice(dst, merger, closer, ppl, detailed), nil
	}
	subscribed := []byte(`,"subscribed":false`)
	if viewer.SignedIn() && viewer.Is(v.AuthorID) {
		subscribed = []byte(`,"subscribed":true`)
	}
	pipelines := []byte(`,"pipeline":null,"head_pipeline":null`)
	if pl := r.mrPipeline(*v); pl != nil {
		b, err := json.Marshal(pl)
		if err != nil {
			return nil, err
		}
		pipelines = append(append(append([]byte(`,"pipeline":`), b...), `,"head_pipeline":`...), b...)
	}
	user := []byte(`,"user":{"can_merge":false}`)
	if v.CanMerge {
		user = []byte(`,"user":{"can_merge":true}`)
	}
	return t.Splice(dst, merger, closer, ppl, detailed, subscribed, pipelines, user), nil
}

// cachedMergeRequest appends v's entity through the cache: its template
// kept under its versions (built and kept on a miss), spliced.
func (r *Renderer) cachedMergeRequest(dst []byte, v *mergerequests.View, viewer auth.Actor, detail bool, people encodedPeople) ([]byte, error) {
	kind := KindMergeRequest
	if detail {
		kind = KindMergeRequestDetail
	}
	k, ok := mergeRequestKey(kind, v)
	var t *Template
	if ok {
		t, ok = r.Cache.Get(k)
	}
	if !ok {
		var err error
		if t, err = r.mergeRequestTemplate(*v, detail); err != nil {
			return nil, err
		}
		if k.Kind != 0 {
			r.Cache.Put(k, t)
		}
	}
	return r.spliceMergeRequest(dst, t, v, viewer, detail, people)
}

// MergeRequestsJSON encodes a list of merge requests as
// json.Marshal(r.MergeRequests(list)) would, through the entity cache
// when it is on.
func (r *Renderer) MergeRequestsJSON(list []mergerequests.View) ([]byte, error) {
	if r.Cache == nil {
		return json.Marshal(r.MergeRequests(list))
	}
	out := make([]byte, 0, 2048*len(list)+2)
	out = append(out, '[')
	people := encodedPeople{}
	for i := range list {
		if i > 0 {
			out = append(out, ',')
		}
		var err error
		if out, err = r.cachedMergeRequest(out, &list[i], auth.Actor{}, false, people); err != nil {
			return nil, err
		}
	}
	return append(out, ']'), nil
}

// MergeRequestDetailJSON encodes a merge request as
// json.Marshal(r.MergeRequestDetail(v, viewer)) would, through the entity
// cache when it is on.
func (r *Renderer) MergeRequestDetailJSON(v mergerequests.View, viewer auth.Actor) ([]byte, error) {
	if r.Cache == nil {
		return json.Marshal(r.MergeRequestDetail(v, viewer))
	}
	return r.cachedMergeRequest(make([]byte, 0, 4096), &v, viewer, true, encodedPeople{})
}
