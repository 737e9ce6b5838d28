package embedded

import (
	"encoding/binary"
	"math"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// insertEvents is the statement the RowBinary rows below are streamed into.
// The column order is the order appendEvent writes them in.
const insertEventsColumns = `(tenant, event_id, event_name, time, trace_id, span_id,
 service, service_version, service_instance, service_namespace, environment,
 tool, method, request_id, session_id, protocol_version, client_name, client_version,
 revision_client, revision_server, revision_validated, revision_before, revision_after,
 outcome, adapter_id, change_class, side_effect_started, external_requests, external_target,
 error_code, required_action, retry_of, retry_attempt, idempotency_key,
 repair_action, repair_automatic, repair_result, repair_duration_ms,
 approval, privilege, run_id, session_age_s, refresh_result, notification_lag_ms,
 adapter_revision_from, adapter_revision_to, adapter_window_end, contract_field,
 args_raw, args_normalized, attributes)`

// appendEvent encodes one event as a RowBinary row of events_in.
func appendEvent(b []byte, tenant string, e *otelschema.Event) []byte {
	b = appendString(b, tenant)
	b = binary.LittleEndian.AppendUint64(b, e.ID)
	b = append(b, byte(e.Name))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Time))
	b = append(b, e.TraceID[:]...)
	b = append(b, e.SpanID[:]...)
	b = appendString(b, e.Service)
	b = appendString(b, e.ServiceVersion)
	b = appendString(b, e.ServiceInstance)
	b = appendString(b, e.ServiceNamespace)
	b = appendString(b, e.Environment)
	b = appendString(b, e.Tool)
	b = appendString(b, e.Method)
	b = appendString(b, e.RequestID)
	b = appendString(b, e.SessionID)
	b = appendString(b, e.ProtocolVersion)
	b = appendString(b, e.ClientName)
	b = appendString(b, e.ClientVersion)
	b = appendString(b, e.RevisionClient)
	b = appendString(b, e.RevisionServer)
	b = appendString(b, e.RevisionValidated)
	b = appendString(b, e.RevisionBefore)
	b = appendString(b, e.RevisionAfter)
	b = append(b, byte(e.Outcome))
	b = appendString(b, e.AdapterID)
	b = append(b, byte(e.ChangeClass))
	b = appendBool(b, e.SideEffectStarted)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.ExternalRequests))
	b = appendString(b, e.ExternalTarget)
	b = appendString(b, e.ErrorCode)
	b = appendString(b, e.RequiredAction)
	b = appendString(b, e.RetryOf)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.RetryAttempt))
	b = appendString(b, e.IdempotencyKey)
	b = append(b, byte(e.RepairAction))
	b = appendBool(b, e.RepairAutomatic)
	b = append(b, byte(e.RepairResult))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.RepairDurationMs))
	b = append(b, byte(e.Approval))
	b = append(b, byte(e.Privilege))
	b = appendString(b, e.RunID)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.SessionAgeS))
	b = append(b, byte(e.RefreshResult))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.NotificationLagMs))
	b = appendString(b, e.AdapterRevisionFrom)
	b = appendString(b, e.AdapterRevisionTo)
	b = binary.LittleEndian.AppendUint32(b, clampUint32(e.AdapterWindowEnd))
	b = appendString(b, e.ContractField)
	b = appendString(b, e.ArgsRaw)
	b = appendString(b, e.ArgsNormalized)
	b = binary.AppendUvarint(b, uint64(len(e.Attributes)))
	for k, v := range e.Attributes {
		b = appendString(b, k)
		b = appendString(b, v)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, 1)
	}
	return append(b, 0)
}

// clampUint32 fits Unix seconds into a DateTime column.
func clampUint32(v int64) uint32 {
	switch {
	case v < 0:
		return 0
	case v > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(v)
}
