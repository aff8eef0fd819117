package endpoint

import "quarry/internal/model"

// The structural limits of a JSON body, GitLab's own (its JSON validation
// middleware's defaults): nesting, the entries of one array or object,
// and keys and values in all. They are checked on the raw text before
// anything is decoded, so a body within the byte limit still cannot make
// the decoder build millions of values.
const (
	MaxJSONDepth  = 32
	MaxJSONArray  = 50_000
	MaxJSONObject = 50_000
	MaxJSONTotal  = 100_000
)

// GitLab's messages for a body past a structural limit (400, {"error"}).
const (
	msgJSONDepth  = "Parameters nested too deeply"
	msgJSONArray  = "Array parameter too large"
	msgJSONObject = "Hash parameter too large"
	msgJSONTotal  = "Too many total parameters"
)

// checkJSON walks the structure of a JSON text without decoding it and
// refuses one past a structural limit. It counts as GitLab does: every
// key and every value is an element; an array's size is its values, an
// object's its keys. Malformed text is left to the decoder: the walk only
// has to be right about well-formed text and bounded on anything.
func checkJSON(b []byte) error {
	type level struct {
		object bool
		n      int
	}
	var stack [MaxJSONDepth]level
	depth, total := 0, 0
	// What the next token is: a value (after '[', ',' in an array, ':' or
	// at the top) or a key (after '{' or ',' in an object).
	wantValue, wantKey := true, false
	count := func(key bool) error {
		total++
		if total > MaxJSONTotal {
			return model.Param(msgJSONTotal)
		}
		if depth == 0 {
			return nil
		}
		top := &stack[depth-1]
		if top.object != key {
			return nil // a value in an object: its key counted the entry
		}
		top.n++
		switch {
		case top.object && top.n > MaxJSONObject:
			return model.Param(msgJSONObject)
		case !top.object && top.n > MaxJSONArray:
			return model.Param(msgJSONArray)
		}
		return nil
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '"':
			if wantKey || wantValue {
				if err := count(wantKey); err != nil {
					return err
				}
			}
			wantKey, wantValue = false, false
			// Skip the string: its bytes are no structure.
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '{', '[':
			if wantValue {
				if err := count(false); err != nil {
					return err
				}
			}
			if depth == MaxJSONDepth {
				return model.Param(msgJSONDepth)
			}
			stack[depth] = level{object: c == '{'}
			depth++
			wantKey, wantValue = c == '{', c == '['
		case '}', ']':
			if depth > 0 {
				depth--
			}
			wantKey, wantValue = false, false
		case ':':
			wantKey, wantValue = false, true
		case ',':
			inObject := depth > 0 && stack[depth-1].object
			wantKey, wantValue = inObject, !inObject
		default:
			// A number, true, false or null: counted at its first byte.
			if wantValue {
				if err := count(false); err != nil {
					return err
				}
			}
			wantKey, wantValue = false, false
		}
	}
	return nil
}
