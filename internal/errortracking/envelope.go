package errortracking

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Item is one item of a Sentry envelope: its type and payload.
type Item struct {
	Type    string
	Payload []byte
}

// errParse is any envelope or event the collector cannot read: GitLab's
// "400 Bad request - Failed to parse sentry request".
var errParse = errors.New("failed to parse sentry request")

// maxItems bounds the items of one envelope (an SDK sends one event, a
// few attachments or sessions at most).
const maxItems = 100

// ParseEnvelope splits a Sentry envelope
// (https://develop.sentry.dev/sdk/envelopes/): a header line of JSON,
// then items, each a header line of JSON ({"type":…, "length":…}) and a
// payload of length bytes, or up to the next newline when the header
// gives no length. Payloads alias body.
func ParseEnvelope(body []byte) ([]Item, error) {
	line, rest, _ := bytes.Cut(body, []byte("\n"))
	if !json.Valid(line) || bytes.TrimSpace(line)[0] != '{' {
		return nil, errParse
	}
	var items []Item
	for len(bytes.TrimSpace(rest)) > 0 {
		if len(items) == maxItems {
			return nil, errParse
		}
		var head []byte
		head, rest, _ = bytes.Cut(rest, []byte("\n"))
		var h struct {
			Type   string          `json:"type"`
			Length json.RawMessage `json:"length"`
		}
		if err := json.Unmarshal(head, &h); err != nil || h.Type == "" {
			return nil, errParse
		}
		var payload []byte
		if len(h.Length) > 0 && string(h.Length) != "null" {
			n, err := strconv.ParseUint(string(h.Length), 10, 31)
			if err != nil || n > uint64(len(rest)) {
				return nil, errParse
			}
			payload, rest = rest[:n], rest[n:]
			// The newline after a payload of known length is optional.
			rest = bytes.TrimPrefix(rest, []byte("\n"))
		} else {
			payload, rest, _ = bytes.Cut(rest, []byte("\n"))
		}
		items = append(items, Item{Type: h.Type, Payload: payload})
	}
	return items, nil
}
