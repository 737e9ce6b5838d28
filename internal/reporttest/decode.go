package reporttest

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Batch is the events of one tenant.
type Batch struct {
	Tenant string
	Events []otelschema.Event
}

// record is an event as fixtures.json spells it (see
// queries/internal/fixture, which writes it): enums by name, times in
// RFC 3339, empty fields left out.
type record struct {
	ID                  uint64 `json:"id"`
	Name                string `json:"name"`
	Time                string `json:"time"`
	Service             string `json:"service,omitempty"`
	ServiceVersion      string `json:"service_version,omitempty"`
	ServiceInstance     string `json:"service_instance,omitempty"`
	Environment         string `json:"environment,omitempty"`
	Tool                string `json:"tool,omitempty"`
	Method              string `json:"method,omitempty"`
	RequestID           string `json:"request_id,omitempty"`
	SessionID           string `json:"session_id,omitempty"`
	ProtocolVersion     string `json:"protocol_version,omitempty"`
	ClientName          string `json:"client_name,omitempty"`
	ClientVersion       string `json:"client_version,omitempty"`
	RevisionClient      string `json:"revision_client,omitempty"`
	RevisionServer      string `json:"revision_server,omitempty"`
	RevisionValidated   string `json:"revision_validated,omitempty"`
	RevisionBefore      string `json:"revision_before,omitempty"`
	RevisionAfter       string `json:"revision_after,omitempty"`
	Outcome             string `json:"outcome,omitempty"`
	AdapterID           string `json:"adapter_id,omitempty"`
	ChangeClass         string `json:"change_class,omitempty"`
	SideEffectStarted   bool   `json:"side_effect_started,omitempty"`
	ExternalRequests    int64  `json:"external_requests,omitempty"`
	ExternalTarget      string `json:"external_target,omitempty"`
	ErrorCode           string `json:"error_code,omitempty"`
	RequiredAction      string `json:"required_action,omitempty"`
	RetryOf             string `json:"retry_of,omitempty"`
	RetryAttempt        int64  `json:"retry_attempt,omitempty"`
	RepairAction        string `json:"repair_action,omitempty"`
	RepairAutomatic     bool   `json:"repair_automatic,omitempty"`
	RepairResult        string `json:"repair_result,omitempty"`
	RepairDurationMs    int64  `json:"repair_duration_ms,omitempty"`
	Approval            string `json:"approval,omitempty"`
	Privilege           string `json:"privilege,omitempty"`
	RunID               string `json:"run_id,omitempty"`
	SessionAgeS         int64  `json:"session_age_s,omitempty"`
	RefreshResult       string `json:"refresh_result,omitempty"`
	NotificationLagMs   int64  `json:"notification_lag_ms,omitempty"`
	AdapterRevisionFrom string `json:"adapter_revision_from,omitempty"`
	AdapterRevisionTo   string `json:"adapter_revision_to,omitempty"`
	AdapterWindowEnd    string `json:"adapter_window_end,omitempty"`
	ContractField       string `json:"contract_field,omitempty"`
	ArgsRaw             string `json:"args_raw,omitempty"`
	ArgsNormalized      string `json:"args_normalized,omitempty"`
}

type file struct {
	Now     time.Time `json:"now"`
	Tenants []struct {
		Tenant string   `json:"tenant"`
		Events []record `json:"events"`
	} `json:"tenants"`
}

// Decode parses fixtures.json into its Now and its batches, one per
// tenant.
func Decode(data []byte) (time.Time, []Batch, error) {
	var f file
	if err := json.Unmarshal(data, &f); err != nil {
		return time.Time{}, nil, fmt.Errorf("cannot decode the fixture of %d bytes: %w", len(data), err)
	}
	var out []Batch
	for _, te := range f.Tenants {
		b := Batch{Tenant: te.Tenant}
		for i, r := range te.Events {
			e, err := r.event()
			if err != nil {
				return time.Time{}, nil, fmt.Errorf("tenant %s, event %d (id %d): %w", te.Tenant, i, r.ID, err)
			}
			b.Events = append(b.Events, e)
		}
		out = append(out, b)
	}
	return f.Now, out, nil
}
func (r record) event() (otelschema.Event, error) {
	e := otelschema.Event{
		ID: r.ID, Service: r.Service, ServiceVersion: r.ServiceVersion, ServiceInstance: r.ServiceInstance,
		Environment: r.Environment, Tool: r.Tool, Method: r.Method, RequestID: r.RequestID,
		SessionID: r.SessionID, ProtocolVersion: r.ProtocolVersion, ClientName: r.ClientName,
		ClientVersion: r.ClientVersion, RevisionClient: r.RevisionClient, RevisionServer: r.RevisionServer,
		RevisionValidated: r.RevisionValidated, RevisionBefore: r.RevisionBefore, RevisionAfter: r.RevisionAfter,
		AdapterID: r.AdapterID, SideEffectStarted: r.SideEffectStarted, ExternalRequests: r.ExternalRequests,
		ExternalTarget: r.ExternalTarget, ErrorCode: r.ErrorCode, RequiredAction: r.RequiredAction,
		RetryOf: r.RetryOf, RetryAttempt: r.RetryAttempt, RepairAutomatic: r.RepairAutomatic,
		RepairDurationMs: r.RepairDurationMs, RunID: r.RunID, SessionAgeS: r.SessionAgeS,
		NotificationLagMs: r.NotificationLagMs, AdapterRevisionFrom: r.AdapterRevisionFrom,
		AdapterRevisionTo: r.AdapterRevisionTo, ContractField: r.ContractField,
		ArgsRaw: r.ArgsRaw, ArgsNormalized: r.ArgsNormalized,
	}
	var ok bool
	if e.Name, ok = otelschema.ParseEventName(r.Name); !ok {
		return e, fmt.Errorf("unknown event name %q", r.Name)
	}
	t, err := time.Parse(time.RFC3339Nano, r.Time)
	if err != nil {
		return e, fmt.Errorf("cannot parse time: %w", err)
	}
	e.Time = t.UnixNano()
	if r.AdapterWindowEnd != "" {
		w, err := time.Parse(time.RFC3339, r.AdapterWindowEnd)
		if err != nil {
			return e, fmt.Errorf("cannot parse adapter window end: %w", err)
		}
		e.AdapterWindowEnd = w.Unix()
	}
	enum := func(name, v string, parse func(string) bool) error {
		if v != "" && !parse(v) {
			return fmt.Errorf("unknown %s %q", name, v)
		}
		return nil
	}
	return e, firstErr(
		enum("outcome", r.Outcome, func(s string) bool { e.Outcome, ok = otelschema.ParseOutcome(s); return ok }),
		enum("change class", r.ChangeClass, func(s string) bool { e.ChangeClass, ok = otelschema.ParseChangeClass(s); return ok }),
		enum("repair action", r.RepairAction, func(s string) bool { e.RepairAction, ok = otelschema.ParseRepairAction(s); return ok }),
		enum("repair result", r.RepairResult, func(s string) bool { e.RepairResult, ok = otelschema.ParseRepairResult(s); return ok }),
		enum("approval", r.Approval, func(s string) bool { e.Approval, ok = otelschema.ParseApproval(s); return ok }),
		enum("privilege", r.Privilege, func(s string) bool { e.Privilege, ok = otelschema.ParsePrivilege(s); return ok }),
		enum("refresh result", r.RefreshResult, func(s string) bool { e.RefreshResult, ok = otelschema.ParseRefreshResult(s); return ok }),
	)
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
