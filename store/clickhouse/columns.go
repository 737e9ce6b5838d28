package clickhouse

import (
	"math"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// column is one column of events_in and how to read it from an event. The
// values of a chunk are appended column by column, as slices.
type column struct {
	name string
	// values returns the column's values for every event of c, in order.
	values func(c *chunk) any
}

func strCol(name string, f func(e *otelschema.Event) string) column {
	return column{name, func(c *chunk) any {
		out := make([]string, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, f(&p.events[i]))
			}
		}
		return out
	}}
}

func int64Col(name string, f func(e *otelschema.Event) int64) column {
	return column{name, func(c *chunk) any {
		out := make([]int64, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, f(&p.events[i]))
			}
		}
		return out
	}}
}

// enumCol reads an Enum8 column as its numbers, which are the Go values.
func enumCol(name string, f func(e *otelschema.Event) uint8) column {
	return column{name, func(c *chunk) any {
		out := make([]int8, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, int8(f(&p.events[i])))
			}
		}
		return out
	}}
}

func boolCol(name string, f func(e *otelschema.Event) bool) column {
	return column{name, func(c *chunk) any {
		out := make([]bool, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, f(&p.events[i]))
			}
		}
		return out
	}}
}

// columns are the columns of events_in that Write fills, in INSERT order.
var columns = []column{
	{"tenant", func(c *chunk) any {
		out := make([]string, 0, c.rows)
		for _, p := range c.parts {
			for range p.events {
				out = append(out, p.tenant)
			}
		}
		return out
	}},
	{"event_id", func(c *chunk) any {
		out := make([]uint64, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, p.events[i].ID)
			}
		}
		return out
	}},
	enumCol("event_name", func(e *otelschema.Event) uint8 { return uint8(e.Name) }),
	{"time", func(c *chunk) any {
		out := make([]time.Time, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, time.Unix(0, p.events[i].Time).UTC())
			}
		}
		return out
	}},
	strCol("trace_id", func(e *otelschema.Event) string { return string(e.TraceID[:]) }),
	strCol("span_id", func(e *otelschema.Event) string { return string(e.SpanID[:]) }),
	strCol("service", func(e *otelschema.Event) string { return e.Service }),
	strCol("service_version", func(e *otelschema.Event) string { return e.ServiceVersion }),
	strCol("service_instance", func(e *otelschema.Event) string { return e.ServiceInstance }),
	strCol("service_namespace", func(e *otelschema.Event) string { return e.ServiceNamespace }),
	strCol("environment", func(e *otelschema.Event) string { return e.Environment }),
	strCol("tool", func(e *otelschema.Event) string { return e.Tool }),
	strCol("method", func(e *otelschema.Event) string { return e.Method }),
	strCol("request_id", func(e *otelschema.Event) string { return e.RequestID }),
	strCol("session_id", func(e *otelschema.Event) string { return e.SessionID }),
	strCol("protocol_version", func(e *otelschema.Event) string { return e.ProtocolVersion }),
	strCol("client_name", func(e *otelschema.Event) string { return e.ClientName }),
	strCol("client_version", func(e *otelschema.Event) string { return e.ClientVersion }),
	strCol("revision_client", func(e *otelschema.Event) string { return e.RevisionClient }),
	strCol("revision_server", func(e *otelschema.Event) string { return e.RevisionServer }),
	strCol("revision_validated", func(e *otelschema.Event) string { return e.RevisionValidated }),
	strCol("revision_before", func(e *otelschema.Event) string { return e.RevisionBefore }),
	strCol("revision_after", func(e *otelschema.Event) string { return e.RevisionAfter }),
	enumCol("outcome", func(e *otelschema.Event) uint8 { return uint8(e.Outcome) }),
	strCol("adapter_id", func(e *otelschema.Event) string { return e.AdapterID }),
	enumCol("change_class", func(e *otelschema.Event) uint8 { return uint8(e.ChangeClass) }),
	boolCol("side_effect_started", func(e *otelschema.Event) bool { return e.SideEffectStarted }),
	int64Col("external_requests", func(e *otelschema.Event) int64 { return e.ExternalRequests }),
	strCol("external_target", func(e *otelschema.Event) string { return e.ExternalTarget }),
	strCol("error_code", func(e *otelschema.Event) string { return e.ErrorCode }),
	strCol("required_action", func(e *otelschema.Event) string { return e.RequiredAction }),
	strCol("retry_of", func(e *otelschema.Event) string { return e.RetryOf }),
	int64Col("retry_attempt", func(e *otelschema.Event) int64 { return e.RetryAttempt }),
	strCol("idempotency_key", func(e *otelschema.Event) string { return e.IdempotencyKey }),
	enumCol("repair_action", func(e *otelschema.Event) uint8 { return uint8(e.RepairAction) }),
	boolCol("repair_automatic", func(e *otelschema.Event) bool { return e.RepairAutomatic }),
	enumCol("repair_result", func(e *otelschema.Event) uint8 { return uint8(e.RepairResult) }),
	int64Col("repair_duration_ms", func(e *otelschema.Event) int64 { return e.RepairDurationMs }),
	enumCol("approval", func(e *otelschema.Event) uint8 { return uint8(e.Approval) }),
	enumCol("privilege", func(e *otelschema.Event) uint8 { return uint8(e.Privilege) }),
	strCol("run_id", func(e *otelschema.Event) string { return e.RunID }),
	int64Col("session_age_s", func(e *otelschema.Event) int64 { return e.SessionAgeS }),
	enumCol("refresh_result", func(e *otelschema.Event) uint8 { return uint8(e.RefreshResult) }),
	int64Col("notification_lag_ms", func(e *otelschema.Event) int64 { return e.NotificationLagMs }),
	strCol("adapter_revision_from", func(e *otelschema.Event) string { return e.AdapterRevisionFrom }),
	strCol("adapter_revision_to", func(e *otelschema.Event) string { return e.AdapterRevisionTo }),
	{"adapter_window_end", func(c *chunk) any {
		out := make([]time.Time, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				out = append(out, time.Unix(clampUint32(p.events[i].AdapterWindowEnd), 0).UTC())
			}
		}
		return out
	}},
	strCol("contract_field", func(e *otelschema.Event) string { return e.ContractField }),
	strCol("args_raw", func(e *otelschema.Event) string { return e.ArgsRaw }),
	strCol("args_normalized", func(e *otelschema.Event) string { return e.ArgsNormalized }),
	{"attributes", func(c *chunk) any {
		out := make([]map[string]string, 0, c.rows)
		for _, p := range c.parts {
			for i := range p.events {
				m := p.events[i].Attributes
				if m == nil {
					m = map[string]string{}
				}
				out = append(out, m)
			}
		}
		return out
	}},
}

// insertColumns is the column list of the INSERT, in columns order.
var insertColumns = func() string {
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = c.name
	}
	return "(" + strings.Join(names, ", ") + ")"
}()

// clampUint32 fits Unix seconds into a DateTime column, as the embedded
// store does.
func clampUint32(v int64) int64 {
	switch {
	case v < 0:
		return 0
	case v > math.MaxUint32:
		return math.MaxUint32
	}
	return v
}
