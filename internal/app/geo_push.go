package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// statusSender delivers a secondary's status pushes to the primary over
// HTTP, with a transport of its own so that its idle connections end
// with it.
type statusSender struct {
	transport *http.Transport
	client    *http.Client
}

func newStatusSender() *statusSender {
	t := http.DefaultTransport.(*http.Transport).Clone()
	return &statusSender{transport: t, client: &http.Client{Transport: t, Timeout: 30 * time.Second}}
}

// Send POSTs body to url; anything but a 2xx answer is an error naming
// the status and the start of the answer.
func (s *statusSender) Send(ctx context.Context, url, authorization string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", authorization)
	resp, err := s.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, bytes.TrimSpace(answer))
	}
	return nil
}

func (s *statusSender) close() { s.transport.CloseIdleConnections() }
