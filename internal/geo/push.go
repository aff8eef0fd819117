package geo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"quarry/internal/model"
	"quarry/internal/store"
)

// StatusPath is where a primary takes the statuses its secondaries push,
// under a node's URL.
const StatusPath = "api/v4/geo_nodes/status"

// ReceiveStatus stores the status a node pushed. authorization is the
// request's Authorization header, checked before the body is read; read
// gives the body (bounded by the caller). Unknown access keys, disabled
// nodes, bad signatures and bodies the token does not sign are 401;
// an unreadable status is 400. A push computed before the one stored is
// dropped. It returns the status stored.
func (s *Service) ReceiveStatus(ctx context.Context, authorization string, read func() ([]byte, error)) (model.GeoStatus, error) {
	key, token, ok := ParseAuthorization(authorization)
	if !ok {
		return model.GeoStatus{}, model.Unauthorized("")
	}
	n, secret, err := s.db.GeoNodeByAccessKey(ctx, key)
	if errors.Is(err, model.ErrNotFound) {
		return model.GeoStatus{}, model.Unauthorized("")
	}
	if err != nil {
		if ctx.Err() != nil {
			return model.GeoStatus{}, err
		}
		// A secret that does not open (a key file that lost its key)
		// authenticates nobody until repaired.
		s.log.Warn("geo: a node's credentials do not open; repair the node", "access_key", key, "err", err)
		return model.GeoStatus{}, model.Unauthorized("")
	}
	now := s.db.Now()
	if !n.Enabled || VerifyHeader(token, secret, now) != nil {
		return model.GeoStatus{}, model.Unauthorized("")
	}
	body, err := read()
	if err != nil {
		return model.GeoStatus{}, err
	}
	if Verify(token, secret, body, now) != nil {
		return model.GeoStatus{}, model.Unauthorized("")
	}
	st, err := ParseStatus(body)
	if err != nil {
		return st, err
	}
	// A node's clock ahead of ours must not pin its status: a later push
	// has to replace it.
	if st.LastSuccessfulStatusCheckAt.After(now) {
		st.LastSuccessfulStatusCheckAt = now.UTC().Truncate(time.Second)
	}
	doc := EncodeStatus(&st)
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		_, err := tx.SaveGeoNodeStatus(ctx, n.ID, string(doc), st.LastSuccessfulStatusCheckAt)
		return err
	})
	if errors.Is(err, model.ErrConflict) {
		return st, model.NotFound("GeoNode") // the node was removed meanwhile
	}
	if err != nil {
		return st, err
	}
	cur, err := s.currentID(ctx)
	if err != nil {
		return st, err
	}
	st, _, err = s.statusOf(ctx, n, cur)
	return st, err
}

// Sender delivers a status push to a primary: a POST of body to url with
// the Authorization header given, an error unless it was accepted.
type Sender interface {
	Send(ctx context.Context, url, authorization string, body []byte) error
}

// PushStatus computes this secondary's status and pushes it to the
// primary's internal URL, signed with this node's credentials.
func (s *Service) PushStatus(ctx context.Context, send Sender) error {
	n, ok, err := s.currentNode(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("geo node %q is not registered", s.cfg.NodeName)
	}
	if n.Primary {
		return nil
	}
	primary, err := s.db.PrimaryGeoNode(ctx)
	if errors.Is(err, model.ErrNotFound) {
		return errors.New("no primary geo node is registered")
	}
	if err != nil {
		return err
	}
	key, secret, err := s.db.GeoNodeCredentials(ctx, n.ID)
	if err != nil {
		return fmt.Errorf("credentials of geo node %q: %w", n.Name, err)
	}
	st, err := s.localStatus(ctx, n)
	if err != nil {
		return err
	}
	body := EncodeStatus(&st)
	return send.Send(ctx, primary.ContactURL()+StatusPath, Sign(key, secret, body, s.db.Now()), body)
}

// PushesStatus reports whether this process pushes its status: it is a
// secondary by name.
func (s *Service) PushesStatus() bool { return s.readOnly && s.cfg.NodeName != "" }

// RunPusher pushes this secondary's status at once and then every
// interval, until ctx ends; a failed push is logged and tried again at
// the next tick. It returns when ctx ends.
func (s *Service) RunPusher(ctx context.Context, send Sender, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	last := ""
	for {
		err := s.PushStatus(ctx, send)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil && err.Error() != last:
			s.log.Warn("geo: status push failed", "geo_node_name", s.cfg.NodeName, "err", err)
			last = err.Error()
		case err == nil && last != "":
			s.log.Info("geo: status push works again", "geo_node_name", s.cfg.NodeName)
			last = ""
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
