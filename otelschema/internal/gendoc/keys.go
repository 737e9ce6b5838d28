package main

import "github.com/mcpdrift/mcpdrift/otelschema"

// attributeKeys gives every attribute of the Registry a key that does not
// change when its wire name does: instrumentations in other languages
// refer to an attribute by its key (conventions.json's "key") and read its
// name from the file, so that renaming an attribute (mcp.drift.* to
// another namespace, say) is a regeneration for them, not an edit. Keys
// are the snake_case of the Go constants' names; TestAttributeKeys checks
// that every attribute has one and that no two share one. A key, once
// published, is never changed.
var attributeKeys = map[string]string{
	otelschema.AttrServiceName:       "service_name",
	otelschema.AttrServiceVersion:    "service_version",
	otelschema.AttrServiceInstanceID: "service_instance_id",
	otelschema.AttrServiceNamespace:  "service_namespace",
	otelschema.AttrEnvironment:       "environment",

	otelschema.AttrEventName:     "event_name",
	otelschema.AttrOtelEventName: "otel_event_name",

	otelschema.AttrToolName:        "tool_name",
	otelschema.AttrMethodName:      "method_name",
	otelschema.AttrRequestID:       "request_id",
	otelschema.AttrSessionID:       "session_id",
	otelschema.AttrProtocolVersion: "protocol_version",
	otelschema.AttrClientName:      "client_name",
	otelschema.AttrClientVersion:   "client_version",

	otelschema.AttrRevisionClient:       "revision_client",
	otelschema.AttrRevisionClientSource: "revision_client_source",
	otelschema.AttrRevisionServer:       "revision_server",
	otelschema.AttrRevisionValidated:    "revision_validated",
	otelschema.AttrRevisionBefore:       "revision_before",
	otelschema.AttrRevisionAfter:        "revision_after",

	otelschema.AttrOutcome:           "outcome",
	otelschema.AttrAdapterID:         "adapter_id",
	otelschema.AttrChangeClass:       "change_class",
	otelschema.AttrSideEffectStarted: "side_effect_started",
	otelschema.AttrExternalRequests:  "external_requests",
	otelschema.AttrExternalTarget:    "external_target",
	otelschema.AttrErrorCode:         "error_code",
	otelschema.AttrRequiredAction:    "required_action",

	otelschema.AttrRetryOf:          "retry_of",
	otelschema.AttrRetryAttempt:     "retry_attempt",
	otelschema.AttrRetryAfter:       "retry_after",
	otelschema.AttrIdempotencyKey:   "idempotency_key",
	otelschema.AttrRepairAction:     "repair_action",
	otelschema.AttrRepairAutomatic:  "repair_automatic",
	otelschema.AttrRepairResult:     "repair_result",
	otelschema.AttrRepairDurationMs: "repair_duration_ms",

	otelschema.AttrApproval:    "approval",
	otelschema.AttrPrivilege:   "privilege",
	otelschema.AttrRunID:       "run_id",
	otelschema.AttrSessionAgeS: "session_age_s",

	otelschema.AttrRefreshResult:     "refresh_result",
	otelschema.AttrNotificationLagMs: "notification_lag_ms",

	otelschema.AttrAdapterRevisionFrom: "adapter_revision_from",
	otelschema.AttrAdapterRevisionTo:   "adapter_revision_to",
	otelschema.AttrAdapterWindowEnd:    "adapter_window_end",

	otelschema.AttrContractField: "contract_field",

	otelschema.AttrToolDefinition: "tool_definition",
	otelschema.AttrListTTLMs:      "list_ttl_ms",
	otelschema.AttrListCacheScope: "list_cache_scope",

	otelschema.AttrArgsRaw:        "args_raw",
	otelschema.AttrArgsNormalized: "args_normalized",
}
