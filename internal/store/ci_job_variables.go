package store

import (
	"context"
	"database/sql"

	"quarry/internal/model"
)

// Job variables: what a job leaves for the jobs after it (GitLab's
// Ci::JobVariable), today the variables of its dotenv report. Values are
// sealed; a job's variables go with it (ON DELETE CASCADE).

// JobVariableDotenv is the source of the variables of a dotenv report.
const JobVariableDotenv = "dotenv"

// JobVariable is one variable a job left.
type JobVariable struct {
	JobID  int64
	Key    string
	Value  string
	Source string
}

// CreateJobVariables stores the variables job jobID left from source, in
// their order; keys are unique per job (a second of one key is a
// conflict).
func (tx *Tx) CreateJobVariables(ctx context.Context, jobID int64, source string, vars []model.Variable) error {
	for i, v := range vars {
		sealed, err := tx.sealValue(v.Value, sealJobVariable)
		if err != nil {
			return err
		}
		if _, err := tx.exec(ctx, "INSERT INTO ci_job_variables (job_id, key, value, source, position) VALUES (?, ?, ?, ?, ?)",
			jobID, v.Key, sealed, source, i); err != nil {
			return err
		}
	}
	return nil
}

// JobVariablesOf lists the variables of source that jobs left, by job id
// and then in the order each job gave them.
func (tx *Tx) JobVariablesOf(ctx context.Context, source string, jobIDs ...int64) ([]JobVariable, error) {
	if len(jobIDs) == 0 {
		return nil, nil
	}
	var out []JobVariable
	err := tx.each(ctx, "SELECT job_id, key, value, source FROM ci_job_variables WHERE source = ? AND job_id IN ("+
		placeholders(len(jobIDs))+") ORDER BY job_id, position", append([]any{source}, anys(jobIDs)...), func(r *sql.Rows) error {
		var v JobVariable
		err := r.Scan(&v.JobID, &v.Key, sealedText{tx, &v.Value, sealJobVariable}, &v.Source)
		out = append(out, v)
		return err
	})
	return out, err
}
