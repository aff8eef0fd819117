package store

import (
	"fmt"
	"time"
)

// Timestamps are stored as microseconds since the Unix epoch (UTC) in a
// BIGINT column on both engines: portable, compact and ordered.

func micros(t time.Time) int64 { return t.UTC().UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

// nullMicros is the stored form of an optional time.
func nullMicros(t *time.Time) any {
	if t == nil {
		return nil
	}
	return micros(*t)
}

// tsScan scans a stored timestamp into a time.Time.
type tsScan struct{ t *time.Time }

func (s tsScan) Scan(v any) error {
	n, err := asInt64(v)
	if err != nil {
		return err
	}
	*s.t = fromMicros(n)
	return nil
}

// nullTSScan scans an optional stored timestamp into a *time.Time.
type nullTSScan struct{ t **time.Time }

func (s nullTSScan) Scan(v any) error {
	if v == nil {
		*s.t = nil
		return nil
	}
	n, err := asInt64(v)
	if err != nil {
		return err
	}
	t := fromMicros(n)
	*s.t = &t
	return nil
}

func asInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int:
		return int64(x), nil
	}
	return 0, fmt.Errorf("timestamp column holds %T", v)
}

// nullString scans a nullable text column into a string ("" for NULL).
type nullString struct{ s *string }

func (n nullString) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.s = ""
	case string:
		*n.s = x
	case []byte:
		*n.s = string(x)
	default:
		return fmt.Errorf("text column holds %T", v)
	}
	return nil
}

// emptyNull stores "" as NULL.
func emptyNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullInt scans a nullable integer into an *int.
type nullInt struct{ p **int }

func (n nullInt) Scan(v any) error {
	if v == nil {
		*n.p = nil
		return nil
	}
	x, err := asInt64(v)
	if err != nil {
		return err
	}
	i := int(x)
	*n.p = &i
	return nil
}

// nullInt64 scans a nullable integer into an int64 (0 for NULL).
type nullInt64 struct{ p *int64 }

func (n nullInt64) Scan(v any) error {
	if v == nil {
		*n.p = 0
		return nil
	}
	x, err := asInt64(v)
	*n.p = x
	return err
}

// nullInt64Ptr scans a nullable integer into an *int64.
type nullInt64Ptr struct{ p **int64 }

func (n nullInt64Ptr) Scan(v any) error {
	if v == nil {
		*n.p = nil
		return nil
	}
	x, err := asInt64(v)
	if err != nil {
		return err
	}
	*n.p = &x
	return nil
}

// zeroNull stores 0 as NULL.
func zeroNull(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
