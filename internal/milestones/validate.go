package milestones

import (
	"strings"
	"unicode/utf8"

	"quarry/internal/model"
)

// Errors are a milestone's validation errors in the order GitLab finds
// them: per attribute, its messages.
type Errors []FieldError

// FieldError is one attribute's messages.
type FieldError struct {
	Field    string
	Messages []string
}

func (e Errors) Error() string { return "invalid milestone: " + e.Ruby() }

func (e Errors) add(field, msg string) Errors {
	for i := range e {
		if e[i].Field == field {
			e[i].Messages = append(e[i].Messages, msg)
			return e
		}
	}
	return append(e, FieldError{field, []string{msg}})
}

// Ruby renders the errors as GitLab's messages hash prints in its API
// errors: {:title=>["can't be blank"], :due_date=>["…"]}.
func (e Errors) Ruby() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, f := range e {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(":" + f.Field + "=>[")
		for j, m := range f.Messages {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(rubyString(m))
		}
		b.WriteByte(']')
	}
	b.WriteByte('}')
	return b.String()
}

// rubyString quotes s as Ruby's String#inspect does for printable text.
func rubyString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`, "\r", `\r`, "#{", `\#{`)
	return `"` + r.Replace(s) + `"`
}

// Validate applies GitLab's milestone validations to m: a title, lengths,
// and a due date after the start date. Dates are YYYY-MM-DD, so they
// compare as text.
func Validate(m *model.Milestone) Errors {
	var e Errors
	if m.Title == "" {
		e = e.add("title", "can't be blank")
	}
	if utf8.RuneCountInString(m.Title) > MaxTitle {
		e = e.add("title", "is too long (maximum is 255 characters)")
	}
	if m.Description != nil && utf8.RuneCountInString(*m.Description) > MaxDescription {
		e = e.add("description", "is too long (maximum is 1048576 characters)")
	}
	if m.StartDate != "" && m.DueDate != "" && m.DueDate <= m.StartDate {
		e = e.add("due_date", "must be greater than start date")
	}
	if m.StartDate > "9999-12-31" {
		e = e.add("start_date", "date must not be after 9999-12-31")
	}
	if m.DueDate > "9999-12-31" {
		e = e.add("due_date", "date must not be after 9999-12-31")
	}
	return e
}
