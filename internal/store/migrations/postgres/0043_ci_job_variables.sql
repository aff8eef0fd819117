-- +goose Up
-- The variables a job left for the jobs after it (GitLab's
-- ci_job_variables): today those of its dotenv report, parsed when the
-- runner uploaded it. value is sealed (ci_job_variables.value); position
-- keeps the order of the file.
CREATE TABLE ci_job_variables (
    job_id BIGINT NOT NULL REFERENCES ci_jobs (id) ON DELETE CASCADE,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    source TEXT NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (job_id, key)
);

