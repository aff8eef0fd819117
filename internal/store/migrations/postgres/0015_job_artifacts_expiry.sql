-- +goose Up
-- When the archive a job stored expires (GitLab's artifacts_expire_at of
-- a build). It outlives the archive's record, which the expiry sweep
-- removes: a later job depending on this one is failed with
-- missing_dependency_failure rather than run without the archive.
ALTER TABLE ci_jobs ADD COLUMN artifacts_expire_at BIGINT;
UPDATE ci_jobs SET artifacts_expire_at = (SELECT a.expire_at FROM ci_artifacts a WHERE a.job_id = ci_jobs.id AND a.file_type = 'archive')
    WHERE EXISTS (SELECT 1 FROM ci_artifacts a WHERE a.job_id = ci_jobs.id AND a.file_type = 'archive');
