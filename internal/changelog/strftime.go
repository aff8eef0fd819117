package changelog

import (
	"strconv"
	"strings"
	"time"
)

// Strftime formats t with strftime directives: %Y %C %y %m %B %b %h %d %e
// %j %H %I %M %S %L %p %P %A %a %u %w %Z %z %s %F %T %D %R %n %t %%, with
// Ruby's "-" (no padding) flag. Numbers are written as Ruby writes them:
// %Y has at least four digits (after a sign), %C and %y are the floor
// quotient and the non-negative remainder of the year by 100. Any other
// directive is written as it stands.
// Every directive writes at most 20 bytes, so the result is at most ten
// times as long as format.
func Strftime(t time.Time, format string) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		start := i
		i++
		pad := true
		if format[i] == '-' && i+1 < len(format) {
			pad = false
			i++
		}
		// num writes n zero-padded to width, its sign included (as C's
		// and Ruby's "%0*d" do).
		num := func(n, width int) {
			s := strconv.Itoa(n)
			if n < 0 {
				b.WriteByte('-')
				s, width = s[1:], width-1
			}
			for w := len(s); pad && w < width; w++ {
				b.WriteByte('0')
			}
			b.WriteString(s)
		}
		year := func() {
			if t.Year() < 0 {
				num(t.Year(), 5)
			} else {
				num(t.Year(), 4)
			}
		}
		switch format[i] {
		case 'Y':
			year()
		case 'C':
			num(floorDiv(t.Year(), 100), 2)
		case 'y':
			num(t.Year()-floorDiv(t.Year(), 100)*100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'B':
			b.WriteString(t.Month().String())
		case 'b', 'h':
			b.WriteString(t.Month().String()[:3])
		case 'd':
			num(t.Day(), 2)
		case 'e':
			if s := strconv.Itoa(t.Day()); pad && len(s) == 1 {
				b.WriteString(" " + s)
			} else {
				b.WriteString(s)
			}
		case 'j':
			num(t.YearDay(), 3)
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'L':
			num(t.Nanosecond()/1e6, 3)
		case 'p':
			b.WriteString(t.Format("PM"))
		case 'P':
			b.WriteString(strings.ToLower(t.Format("PM")))
		case 'A':
			b.WriteString(t.Weekday().String())
		case 'a':
			b.WriteString(t.Weekday().String()[:3])
		case 'u':
			wd := int(t.Weekday())
			if wd == 0 {
				wd = 7
			}
			b.WriteString(strconv.Itoa(wd))
		case 'w':
			b.WriteString(strconv.Itoa(int(t.Weekday())))
		case 'Z':
			b.WriteString(t.Format("MST"))
		case 'z':
			b.WriteString(t.Format("-0700"))
		case 's':
			b.WriteString(strconv.FormatInt(t.Unix(), 10))
		case 'F':
			year()
			b.WriteString(t.Format("-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'R':
			b.WriteString(t.Format("15:04"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteString(format[start : i+1])
		}
	}
	return b.String()
}

// floorDiv is a/b rounded down (b > 0), as Ruby divides.
func floorDiv(a, b int) int {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}
