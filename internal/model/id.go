package model

// ParseID reads a resource id as the API's :id takes it: decimal digits
// only (no sign, no spaces), at most what an int64 holds. Anything else
// — a path, a username, a number past 64 bits — is not an id.
func ParseID(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (1<<63-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}
