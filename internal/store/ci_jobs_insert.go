package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"

	"quarry/internal/model"
)

// A pipeline's jobs on PostgreSQL go in one INSERT whose one parameter
// is the rows as a JSON array of objects keyed by column name, which the
// server turns into ci_jobs rows (json_populate_recordset). A multi-row
// INSERT of 50 jobs has about 1,750 parameters: pgx converts, encodes
// and copies each into buffers grown by doubling, and database/sql boxes
// each; the job rows were half of a pipeline's allocated bytes. The JSON
// is written straight from the jobs into a pooled buffer, and is copied
// once by pgx. Ids are handed out row by row in the array's order, as in
// a multi-row INSERT (insertRows), so the ids in ascending order are the
// rows' ids. SQLite keeps the multi-row INSERT (jobInsertRow).

// jobInsertJSON is the INSERT of jobInsertColumns from a JSON array of
// rows (appendJobJSON); a key left out is NULL.
const jobInsertJSON = `INSERT INTO ci_jobs (` + jobInsertColumns + `) SELECT ` + jobInsertColumns +
	` FROM json_populate_recordset(NULL::ci_jobs, ?::json) RETURNING id`

// jobBuffers are the buffers of jobs' JSON rows.
var jobBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// maxPooledJobBuffer: a larger buffer is left to the collector.
const maxPooledJobBuffer = 1 << 20

// createJobsJSON inserts jobs (sealed: their manual variables, sealed,
// or nil) stamped now, and sets their IDs.
func (tx *Tx) createJobsJSON(ctx context.Context, jobs []*model.Job, sealed []*string, now int64) error {
	bp := jobBuffers.Get().(*[]byte)
	b := append((*bp)[:0], '[')
	for i, j := range jobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJobJSON(b, j, sealed[i], now)
	}
	b = append(b, ']')
	ids := make([]int64, 0, len(jobs))
	err := tx.each(ctx, jobInsertJSON, []any{b}, func(r *sql.Rows) error {
		var id int64
		err := r.Scan(&id)
		ids = append(ids, id)
		return err
	})
	if cap(b) <= maxPooledJobBuffer {
		*bp = b[:0]
		jobBuffers.Put(bp)
	}
	if err == nil && len(ids) != len(jobs) {
		err = fmt.Errorf("insert into ci_jobs: %d ids for %d rows", len(ids), len(jobs))
	}
	if err != nil {
		return err
	}
	slices.Sort(ids)
	for i, id := range ids {
		jobs[i].ID = id
	}
	return nil
}

// jobInsertRow is a job's values of jobInsertColumns (the multi-row
// INSERT's row); appendJobJSON writes the same values.
func jobInsertRow(j *model.Job, sealed *string, now int64) []any {
	var manual any
	if sealed != nil {
		manual = *sealed
	}
	return []any{j.ProjectID, j.PipelineID, j.Kind, j.Name, j.Stage, j.StageIdx, j.Status, j.When, j.AllowFailure,
		emptyNull(string(j.FailureReason)), j.ExitCode, j.Retried, j.EnqueueImmediately, j.RetryCount, zeroNull(j.UserID), j.Ref, j.Tag, j.SHA,
		nullFloatValue(j.Coverage), j.DAG, jsonValue(j.Needs), jsonValue(j.TagList), j.Timeout, zeroNull(j.ResourceGroup),
		j.Options, manual, emptyNull(j.TargetURL), emptyNull(j.Description), now, now, nullMicros(j.QueuedAt),
		nullMicros(j.ScheduledAt), nullMicros(j.StartedAt), nullMicros(j.FinishedAt), emptyNull(j.Environment)}
}

// appendJobJSON appends a job's row as a JSON object keyed by column:
// the values of jobInsertRow, a NULL one left out.
func appendJobJSON(b []byte, j *model.Job, sealed *string, now int64) []byte {
	b = appendJSONInt(b, `{"project_id":`, j.ProjectID)
	b = appendJSONInt(b, `,"pipeline_id":`, j.PipelineID)
	b = appendJSONText(append(b, `,"kind":`...), j.Kind)
	b = appendJSONText(append(b, `,"name":`...), j.Name)
	b = appendJSONText(append(b, `,"stage":`...), j.Stage)
	b = appendJSONInt(b, `,"stage_idx":`, int64(j.StageIdx))
	b = appendJSONText(append(b, `,"status":`...), string(j.Status))
	b = appendJSONText(append(b, `,"run_when":`...), j.When)
	b = appendJSONBool(b, `,"allow_failure":`, j.AllowFailure)
	if j.FailureReason != "" {
		b = appendJSONText(append(b, `,"failure_reason":`...), string(j.FailureReason))
	}
	if j.ExitCode != nil {
		b = appendJSONInt(b, `,"exit_code":`, int64(*j.ExitCode))
	}
	b = appendJSONBool(b, `,"retried":`, j.Retried)
	b = appendJSONBool(b, `,"enqueue_immediately":`, j.EnqueueImmediately)
	b = appendJSONInt(b, `,"retry_count":`, int64(j.RetryCount))
	if j.UserID != 0 {
		b = appendJSONInt(b, `,"user_id":`, j.UserID)
	}
	b = appendJSONText(append(b, `,"ref":`...), j.Ref)
	b = appendJSONBool(b, `,"tag":`, j.Tag)
	b = appendJSONText(append(b, `,"sha":`...), j.SHA)
	if j.Coverage != nil {
		b = appendJSONFloat(append(b, `,"coverage":`...), *j.Coverage)
	}
	b = appendJSONBool(b, `,"dag":`, j.DAG)
	b = appendJSONList(append(b, `,"needs":`...), j.Needs)
	b = appendJSONList(append(b, `,"tag_list":`...), j.TagList)
	b = appendJSONInt(b, `,"timeout":`, int64(j.Timeout))
	if j.ResourceGroup != 0 {
		b = appendJSONInt(b, `,"resource_group_id":`, j.ResourceGroup)
	}
	b = appendJSONText(append(b, `,"options":`...), j.Options)
	if sealed != nil {
		b = appendJSONText(append(b, `,"manual_variables":`...), *sealed)
	}
	if j.TargetURL != "" {
		b = appendJSONText(append(b, `,"target_url":`...), j.TargetURL)
	}
	if j.Description != "" {
		b = appendJSONText(append(b, `,"description":`...), j.Description)
	}
	b = appendJSONInt(b, `,"created_at":`, now)
	b = appendJSONInt(b, `,"updated_at":`, now)
	b = appendJSONTime(b, `,"queued_at":`, j.QueuedAt)
	b = appendJSONTime(b, `,"scheduled_at":`, j.ScheduledAt)
	b = appendJSONTime(b, `,"started_at":`, j.StartedAt)
	b = appendJSONTime(b, `,"finished_at":`, j.FinishedAt)
	if j.Environment != "" {
		b = appendJSONText(append(b, `,"environment":`...), j.Environment)
	}
	return append(b, '}')
}

func appendJSONInt(b []byte, key string, n int64) []byte {
	return strconv.AppendInt(append(b, key...), n, 10)
}

// appendJSONTime appends an optional time's key and stored form
// (nullMicros), nothing for none.
func appendJSONTime(b []byte, key string, t *time.Time) []byte {
	if t == nil {
		return b
	}
	return appendJSONInt(b, key, micros(*t))
}

func appendJSONBool(b []byte, key string, v bool) []byte {
	return strconv.AppendBool(append(b, key...), v)
}

// appendJSONFloat appends f as PostgreSQL reads a float8 back exactly:
// the shortest form that parses to f, or a string for NaN and the
// infinities (which JSON numbers cannot hold).
func appendJSONFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, 1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// appendJSONList appends, as a JSON string, the stored JSON text of a
// list (jsonValue's). A list of plain strings (printable ASCII without
// the characters encoding/json escapes) is written directly; any other
// goes through json.Marshal.
func appendJSONList(b []byte, v []string) []byte {
	if len(v) == 0 {
		return append(b, `"[]"`...)
	}
	for _, s := range v {
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				text, _ := json.Marshal(v)
				return appendJSONText(b, text)
			}
		}
	}
	b = append(b, `"[`...)
	for i, s := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `\"`...)
		b = append(b, s...)
		b = append(b, `\"`...)
	}
	return append(b, `]"`...)
}

// jsonEscaped marks the bytes appendJSONText escapes.
var jsonEscaped = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// appendJSONText appends s as a JSON string that decodes to s byte for
// byte: quotes, backslashes and control characters escaped, every other
// byte as it is (a byte sequence that is not UTF-8 is refused by the
// server, as it is in a text parameter).
func appendJSONText[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !jsonEscaped[c] {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\t':
			b = append(b, '\\', 't')
		case '\r':
			b = append(b, '\\', 'r')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
