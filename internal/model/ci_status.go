package model

// CIStatus is the status of a CI job, a stage or a pipeline, as GitLab
// names them.
type CIStatus string

// The statuses. Jobs, stages and pipelines share them; waiting_for_callback
// never occurs in Quarry.
const (
	StatusCreated            CIStatus = "created"
	StatusWaitingForResource CIStatus = "waiting_for_resource"
	StatusPreparing          CIStatus = "preparing"
	StatusPending            CIStatus = "pending"
	StatusRunning            CIStatus = "running"
	StatusSuccess            CIStatus = "success"
	StatusFailed             CIStatus = "failed"
	StatusCanceling          CIStatus = "canceling"
	StatusCanceled           CIStatus = "canceled"
	StatusSkipped            CIStatus = "skipped"
	StatusManual             CIStatus = "manual"
	StatusScheduled          CIStatus = "scheduled"
)

// JobStatuses are the values of a jobs scope filter, in GitLab's order.
var JobStatuses = []CIStatus{StatusCreated, StatusPending, StatusRunning, StatusFailed, StatusSuccess, StatusCanceled,
	StatusSkipped, StatusManual, StatusWaitingForResource, StatusPreparing, StatusScheduled, StatusCanceling}

// PipelineStatuses are the statuses a pipeline may have.
var PipelineStatuses = []CIStatus{StatusCreated, StatusWaitingForResource, StatusPreparing, StatusPending, StatusRunning,
	StatusSuccess, StatusFailed, StatusCanceling, StatusCanceled, StatusSkipped, StatusManual, StatusScheduled}

// Valid reports whether s is a known status.
func (s CIStatus) Valid() bool {
	for _, v := range PipelineStatuses {
		if v == s {
			return true
		}
	}
	return false
}

// Completed: nothing more happens to a job in it (success, failed,
// canceled, skipped).
func (s CIStatus) Completed() bool {
	return s == StatusSuccess || s == StatusFailed || s == StatusCanceled || s == StatusSkipped
}

// Active: the job is on its way (waiting for a resource, preparing,
// pending, running).
func (s CIStatus) Active() bool {
	return s == StatusWaitingForResource || s == StatusPreparing || s == StatusPending || s == StatusRunning
}

// Blocked: the job waits for a person or a time (manual, scheduled).
func (s CIStatus) Blocked() bool { return s == StatusManual || s == StatusScheduled }

// Cancelable: cancel moves the job (created, waiting, preparing, pending,
// running, scheduled; manual jobs only when a pipeline or job cancel names
// them).
func (s CIStatus) Cancelable() bool {
	switch s {
	case StatusCreated, StatusWaitingForResource, StatusPreparing, StatusPending, StatusRunning, StatusScheduled:
		return true
	}
	return false
}

// Executing: a runner works on the job (running, canceling); its job
// token is accepted.
func (s CIStatus) Executing() bool { return s == StatusRunning || s == StatusCanceling }

// Finished: the job has an end time (success, failed, canceled).
func (s CIStatus) Finished() bool {
	return s == StatusSuccess || s == StatusFailed || s == StatusCanceled
}

// jobMoves is the job state machine (reference §3.2): every allowed move
// and the event that makes it. Anything not listed is refused. Completed
// jobs never move again: a retry makes a new job.
var jobMoves = map[CIStatus]map[CIStatus]string{
	StatusCreated: {
		StatusPending:            "enqueue",
		StatusWaitingForResource: "enqueue (the job has a resource group)",
		StatusPreparing:          "enqueue (prerequisites unmet)",
		StatusManual:             "actionize (when: manual)",
		StatusScheduled:          "schedule (when: delayed)",
		StatusSkipped:            "skip (the jobs before it decide it will not run)",
		StatusSuccess:            "success (a bridge whose pipeline was created)",
		StatusFailed:             "drop",
		StatusCanceled:           "cancel",
	},
	StatusWaitingForResource: {
		StatusPending:  "the resource group gave the job its slot",
		StatusSkipped:  "skip",
		StatusSuccess:  "success",
		StatusFailed:   "drop",
		StatusCanceled: "cancel",
	},
	StatusPreparing: {
		StatusPending:  "prerequisites met",
		StatusSkipped:  "skip",
		StatusSuccess:  "success",
		StatusFailed:   "drop",
		StatusCanceled: "cancel",
	},
	StatusPending: {
		StatusRunning:  "run (a runner took the job)",
		StatusSkipped:  "skip",
		StatusSuccess:  "success",
		StatusFailed:   "drop",
		StatusCanceled: "cancel",
	},
	StatusRunning: {
		StatusSuccess:   "success",
		StatusFailed:    "drop",
		StatusCanceling: "cancel (the runner stops gracefully)",
		StatusCanceled:  "cancel",
	},
	StatusCanceling: {
		StatusCanceled: "the runner's final update, or force cancel",
	},
	StatusManual: {
		StatusPending:            "play",
		StatusWaitingForResource: "play (the job has a resource group)",
		StatusCreated:            "process (a retried job before it is reprocessed)",
		StatusFailed:             "drop",
		StatusCanceled:           "cancel",
	},
	StatusScheduled: {
		StatusPending:            "enqueue (the delay ran out, or play)",
		StatusWaitingForResource: "enqueue (the job has a resource group)",
		StatusManual:             "unschedule",
		StatusFailed:             "drop",
		StatusCanceled:           "cancel",
	},
	StatusSkipped: {
		StatusCreated: "process (a job after a retried one is reprocessed)",
		StatusPending: "enqueue",
	},
}

// CanMoveTo reports whether the job state machine allows a job in s to
// move to next.
func (s CIStatus) CanMoveTo(next CIStatus) bool {
	_, ok := jobMoves[s][next]
	return ok
}

// FailureReason is why a job (or pipeline) failed, as GitLab names it.
type FailureReason string

// Job failure reasons (reference §3.6).
const (
	FailureUnknown                    FailureReason = "unknown_failure"
	FailureScript                     FailureReason = "script_failure"
	FailureAPI                        FailureReason = "api_failure"
	FailureStuckOrTimeout             FailureReason = "stuck_or_timeout_failure"
	FailureRunnerSystem               FailureReason = "runner_system_failure"
	FailureMissingDependency          FailureReason = "missing_dependency_failure"
	FailureRunnerUnsupported          FailureReason = "runner_unsupported"
	FailureStaleSchedule              FailureReason = "stale_schedule"
	FailureJobExecutionTimeout        FailureReason = "job_execution_timeout"
	FailureArchived                   FailureReason = "archived_failure"
	FailureUnmetPrerequisites         FailureReason = "unmet_prerequisites"
	FailureScheduler                  FailureReason = "scheduler_failure"
	FailureDataIntegrity              FailureReason = "data_integrity_failure"
	FailureForwardDeployment          FailureReason = "forward_deployment_failure"
	FailureUserBlocked                FailureReason = "user_blocked"
	FailureProjectDeleted             FailureReason = "project_deleted"
	FailureCIQuotaExceeded            FailureReason = "ci_quota_exceeded"
	FailurePipelineLoop               FailureReason = "pipeline_loop_detected"
	FailureNoMatchingRunner           FailureReason = "no_matching_runner"
	FailureTraceSizeExceeded          FailureReason = "trace_size_exceeded"
	FailureBuildsDisabled             FailureReason = "builds_disabled"
	FailureDownstreamNotFound         FailureReason = "downstream_bridge_project_not_found"
	FailureInsufficientBridgePerms    FailureReason = "insufficient_bridge_permissions"
	FailureInvalidBridgeTrigger       FailureReason = "invalid_bridge_trigger"
	FailureBridgeIsChild              FailureReason = "bridge_pipeline_is_child_pipeline"
	FailureDownstreamCreation         FailureReason = "downstream_pipeline_creation_failed"
	FailureMaxDescendantDepth         FailureReason = "reached_max_descendant_pipelines_depth"
	PipelineFailureConfig             FailureReason = "config_error"
	PipelineFailureFilteredByRules    FailureReason = "filtered_by_rules"
	PipelineFailureFilteredByWorkflow FailureReason = "filtered_by_workflow_rules"
)

// RunnerFailureReasons are the reasons a runner may report; any other
// name it sends is unknown_failure. They are also the reasons retry:when
// may name (with "always").
var RunnerFailureReasons = []FailureReason{FailureUnknown, FailureScript, FailureAPI, FailureStuckOrTimeout,
	FailureRunnerSystem, FailureRunnerUnsupported, FailureStaleSchedule, FailureJobExecutionTimeout, FailureArchived,
	FailureUnmetPrerequisites, FailureScheduler, FailureDataIntegrity}
