// Package oidc makes the OpenID Connect ID tokens of CI jobs (GitLab's
// id_tokens:): the claims of a job's token, the RSA keys that sign them
// (kept in the database, sealed, with the previous key still published
// after a rotation), the JWKS and the discovery document.
package oidc

import (
	"crypto/rand"
	"fmt"
	"strconv"
	"time"

	"quarry/internal/model"
)

// notBefore is how long before its issue a token is valid (GitLab's
// NOT_BEFORE_TIME), for verifiers whose clocks run behind.
const notBefore = 5 * time.Second

// Job is what a job's ID token says about the job, as GitLab's
// Gitlab::Ci::JwtV2 says it.
type Job struct {
	// Issuer is the instance's external URL (iss).
	Issuer string
	// Aud is the audience as written: a string or a list of strings.
	Aud      any
	Project  model.Project
	Pipeline model.Pipeline
	// User is the user the job runs as (nil: none).
	User     *model.User
	JobID    int64
	RunnerID int64
	// ConfigPath is the project's CI configuration file; ConfigFromRepo
	// tells that the pipeline read it from the repository (GitLab writes
	// ci_config_ref_uri and ci_config_sha only then).
	ConfigPath     string
	ConfigFromRepo bool
	// Environment is the job's environment ("": none), Protected whether
	// it is a protected environment, Tier its deployment tier; GitLab
	// writes environment, environment_protected and deployment_tier only
	// for jobs with an environment.
	Environment          string
	EnvironmentProtected bool
	DeploymentTier       string
	// Now is when the token is issued; TTL how long it lives (the job's
	// timeout).
	Now time.Time
	TTL time.Duration
}

// Claims are the claims of j's token, typed as GitLab types them: ids
// are strings but runner_id, flags are "true"/"false", times are
// seconds. A fresh jti each call.
func Claims(j Job) (map[string]any, error) {
	jti, err := uuid4()
	if err != nil {
		return nil, err
	}
	p, pl := j.Project, j.Pipeline
	refType, refPath := "branch", "refs/heads/"+pl.Ref
	if pl.Tag {
		refType, refPath = "tag", "refs/tags/"+pl.Ref
	}
	now := j.Now.Unix()
	c := map[string]any{
		"jti": jti,
		"iss": j.Issuer,
		"iat": now,
		"nbf": now - int64(notBefore/time.Second),
		"exp": now + int64(j.TTL/time.Second),
		"sub": "project_path:" + p.FullPath() + ":ref_type:" + refType + ":ref:" + pl.Ref,
		"aud": j.Aud,

		"namespace_id":   strconv.FormatInt(p.Namespace.ID, 10),
		"namespace_path": p.Namespace.FullPath,
		"project_id":     strconv.FormatInt(p.ID, 10),
		"project_path":   p.FullPath(),
		"user_id":        "",

		"pipeline_id":     strconv.FormatInt(pl.ID, 10),
		"pipeline_source": pl.Source,
		"job_id":          strconv.FormatInt(j.JobID, 10),
		"ref":             pl.Ref,
		"ref_type":        refType,
		"ref_path":        refPath,
		"ref_protected":   strconv.FormatBool(pl.Protected),

		"runner_id":          j.RunnerID,
		"runner_environment": "self-hosted",
		"sha":                pl.SHA,
		"project_visibility": string(p.Visibility),
	}
	if u := j.User; u != nil {
		c["user_id"] = strconv.FormatInt(u.ID, 10)
		c["user_login"] = u.Username
		c["user_email"] = u.Email
	}
	if j.Environment != "" {
		c["environment"] = j.Environment
		c["environment_protected"] = strconv.FormatBool(j.EnvironmentProtected)
		c["deployment_tier"] = j.DeploymentTier
	}
	if j.ConfigFromRepo && j.ConfigPath != "" {
		c["ci_config_ref_uri"] = hostPath(j.Issuer) + "/" + p.FullPath() + "//" + j.ConfigPath + "@" + refPath
		c["ci_config_sha"] = pl.SHA
	}
	return c, nil
}

// uuid4 is a random UUID (version 4), GitLab's jti.
func uuid4() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
