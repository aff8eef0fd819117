package model

import (
	"encoding/json"
	"time"
)

// AlertIntegration is a project's HTTP endpoint for alerts: monitoring
// tools post to its URL with its key. Kind is "http" or "prometheus";
// TokenDigest is the key's digest (the key is shown once).
type AlertIntegration struct {
	ID                 int64
	ProjectID          int64
	Name               string
	Kind               string
	Active             bool
	EndpointIdentifier string
	TokenDigest        string
	// Mappings are the custom payload mapping: alert field → path in the
	// payload. Empty for the default mapping.
	Mappings  []AlertMapping
	CreatedAt time.Time
	UpdatedAt time.Time
}

// The kinds of alert integration.
const (
	AlertIntegrationHTTP       = "http"
	AlertIntegrationPrometheus = "prometheus"
)

// AlertMapping maps one alert field (AlertMappingFields) to a path in the
// payload: object keys as strings, array indexes as numbers.
type AlertMapping struct {
	FieldName string `json:"field_name"`
	Path      []any  `json:"path"`
	Type      string `json:"type"`
	Label     string `json:"label,omitempty"`
}

// AlertMappingFields are the alert fields a custom mapping may set
// (GitLab's AlertManagementPayloadAlertFieldName, lower-cased).
var AlertMappingFields = []string{"title", "description", "start_time", "end_time", "service", "monitoring_tool",
	"hosts", "severity", "fingerprint", "gitlab_environment_name"}

// AlertMappingTypes are the types a mapped field is declared with.
var AlertMappingTypes = []string{"string", "array", "datetime"}

// AlertStatus is an alert's state, stored as GitLab's enum number.
type AlertStatus int

// The alert states.
const (
	AlertTriggered    AlertStatus = 0
	AlertAcknowledged AlertStatus = 1
	AlertResolved     AlertStatus = 2
	AlertIgnored      AlertStatus = 3
)

var alertStatusNames = [...]string{"triggered", "acknowledged", "resolved", "ignored"}

func (s AlertStatus) String() string {
	if s >= 0 && int(s) < len(alertStatusNames) {
		return alertStatusNames[s]
	}
	return "unknown"
}

// ParseAlertStatus reads a status name (lower case).
func ParseAlertStatus(name string) (AlertStatus, bool) {
	for i, n := range alertStatusNames {
		if n == name {
			return AlertStatus(i), true
		}
	}
	return 0, false
}

// AlertTransitions is the alert state machine: from each state, the
// states a person may set (GitLab lets any state go to any other through
// its UI; the intake only opens alerts triggered and resolves them). A
// move to the same state is no transition.
var AlertTransitions = map[AlertStatus][]AlertStatus{
	AlertTriggered:    {AlertAcknowledged, AlertResolved, AlertIgnored},
	AlertAcknowledged: {AlertTriggered, AlertResolved, AlertIgnored},
	AlertResolved:     {AlertTriggered, AlertAcknowledged, AlertIgnored},
	AlertIgnored:      {AlertTriggered, AlertAcknowledged, AlertResolved},
}

// CanMoveAlert reports whether the transition table allows from → to.
func CanMoveAlert(from, to AlertStatus) bool {
	for _, s := range AlertTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// AlertSeverity is an alert's severity, stored as GitLab's enum number.
type AlertSeverity int

// The severities, most severe first.
const (
	SeverityCritical AlertSeverity = 0
	SeverityHigh     AlertSeverity = 1
	SeverityMedium   AlertSeverity = 2
	SeverityLow      AlertSeverity = 3
	SeverityInfo     AlertSeverity = 4
	SeverityUnknown  AlertSeverity = 5
)

var severityNames = [...]string{"critical", "high", "medium", "low", "info", "unknown"}

func (s AlertSeverity) String() string {
	if s >= 0 && int(s) < len(severityNames) {
		return severityNames[s]
	}
	return "unknown"
}

// ParseAlertSeverity reads a severity name (lower case).
func ParseAlertSeverity(name string) (AlertSeverity, bool) {
	for i, n := range severityNames {
		if n == name {
			return AlertSeverity(i), true
		}
	}
	return 0, false
}

// Alert is one alert of a project: the occurrences of one fingerprint
// until it is resolved.
type Alert struct {
	ID             int64
	ProjectID      int64
	IID            int64
	IntegrationID  int64
	Fingerprint    string
	Status         AlertStatus
	Severity       AlertSeverity
	Title          string
	Description    string
	Service        string
	MonitoringTool string
	Hosts          []string
	Environment    string
	Runbook        string
	StartedAt      time.Time
	EndedAt        *time.Time
	Events         int64
	Payload        json.RawMessage
	CreatedAt      time.Time
	UpdatedAt      time.Time
	Version        int64
	AssigneeIDs    []int64
}

// AlertMetricImage is an image attached to an alert.
type AlertMetricImage struct {
	ID        int64
	AlertID   int64
	Filename  string
	FilePath  string
	URL       string
	URLText   string
	CreatedAt time.Time
}
