package otelschema

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// allAttrs sets every record attribute of the conventions (the resource
// attributes are in testResource).
var allAttrs = []kv{
	{AttrToolName, "create_invoice"},
	{AttrMethodName, "tools/call"},
	{AttrRequestID, int64(4711)},
	{AttrSessionID, "sess-1"},
	{AttrProtocolVersion, "2025-06-18"},
	{AttrClientName, "claude-code"},
	{AttrClientVersion, "2.1.0"},
	{AttrRevisionClient, "r7"},
	{AttrRevisionClientSource, "listed"},
	{AttrRevisionServer, "r9"},
	{AttrRevisionValidated, "r8"},
	{AttrRevisionBefore, "r6"},
	{AttrRevisionAfter, "r9"},
	{AttrOutcome, "normalized"},
	{AttrAdapterID, "invoice-v7-to-v9"},
	{AttrChangeClass, "bounded_migration"},
	{AttrSideEffectStarted, true},
	{AttrExternalRequests, int64(2)},
	{AttrExternalTarget, "stripe"},
	{AttrErrorCode, "STALE_TOOL_SCHEMA"},
	{AttrRequiredAction, "refresh_tools"},
	{AttrRetryOf, "4710"},
	{AttrRetryAttempt, "1"},
	{AttrRetryAfter, "rejected_stale"},
	{AttrIdempotencyKey, "idem-9"},
	{AttrRepairAction, "refresh_retry"},
	{AttrRepairAutomatic, "true"},
	{AttrRepairResult, "success"},
	{AttrRepairDurationMs, 1250.0},
	{AttrApproval, "per_call"},
	{AttrPrivilege, "credentialed"},
	{AttrRunID, "run-3"},
	{AttrSessionAgeS, int64(86400)},
	{AttrRefreshResult, "ok"},
	{AttrNotificationLagMs, int64(40)},
	{AttrAdapterRevisionFrom, "r7"},
	{AttrAdapterRevisionTo, "r9"},
	{AttrAdapterWindowEnd, "2026-07-01T00:00:00Z"},
	{AttrContractField, "invoice.total"},
	{AttrToolDefinition, `{"name":"create_invoice"}`},
	{AttrListTTLMs, int64(86400000)},
	{AttrListCacheScope, "shared"},
	{AttrArgsRaw, `{"amount":12}`},
	{AttrArgsNormalized, `{"amount":{"value":12,"currency":"EUR"}}`},
	{AttrEventName, "ignored.because.EventName.is.set"},
	{AttrOtelEventName, "ignored.too"},
	{"http.route", "/mcp"},
	{"custom.count", int64(3)},
}

func TestDecodeFullEvent(t *testing.T) {
	ld := logsWith(t, testResource, "dev.mcpdrift.call", allAttrs)
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	traceID := pcommon.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	spanID := pcommon.SpanID{8, 7, 6, 5, 4, 3, 2, 1}
	lr.SetTraceID(traceID)
	lr.SetSpanID(spanID)
	lr.Body().SetStr("create_invoice normalized")

	got, err, _ := decodeOne(t, testDecoder(), ld)
	if err != nil {
		t.Fatal(err)
	}
	want := Event{
		Name:                 EventCall,
		Time:                 testTime.UnixNano(),
		TraceID:              traceID,
		SpanID:               spanID,
		Service:              "billing-mcp",
		ServiceVersion:       "1.4.2",
		ServiceInstance:      "pod-7",
		ServiceNamespace:     "payments",
		Environment:          "production",
		Tool:                 "create_invoice",
		Method:               "tools/call",
		RequestID:            "4711",
		SessionID:            "sess-1",
		ProtocolVersion:      "2025-06-18",
		ClientName:           "claude-code",
		ClientVersion:        "2.1.0",
		RevisionClient:       "r7",
		RevisionClientSource: RevisionSourceListed,
		RevisionServer:       "r9",
		RevisionValidated:    "r8",
		RevisionBefore:       "r6",
		RevisionAfter:        "r9",
		Outcome:              OutcomeNormalized,
		AdapterID:            "invoice-v7-to-v9",
		ChangeClass:          ChangeClassBoundedMigration,
		SideEffectStarted:    true,
		ExternalRequests:     2,
		ExternalTarget:       "stripe",
		ErrorCode:            "STALE_TOOL_SCHEMA",
		RequiredAction:       "refresh_tools",
		RetryOf:              "4710",
		RetryAttempt:         1,
		RetryAfter:           OutcomeRejectedStale,
		IdempotencyKey:       "idem-9",
		RepairAction:         RepairActionRefreshRetry,
		RepairAutomatic:      true,
		RepairResult:         RepairResultSuccess,
		RepairDurationMs:     1250,
		Approval:             ApprovalPerCall,
		Privilege:            PrivilegeCredentialed,
		RunID:                "run-3",
		SessionAgeS:          86400,
		RefreshResult:        RefreshResultOK,
		NotificationLagMs:    40,
		AdapterRevisionFrom:  "r7",
		AdapterRevisionTo:    "r9",
		AdapterWindowEnd:     time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC).Unix(),
		ContractField:        "invoice.total",
		Definition:           `{"name":"create_invoice"}`,
		ListTTLMs:            86400000,
		ListCacheScope:       "shared",
		ArgsRaw:              `{"amount":12}`,
		ArgsNormalized:       `{"amount":{"value":12,"currency":"EUR"}}`,
		Attributes:           map[string]string{"http.route": "/mcp", "custom.count": "3"},
	}
	want.ID = eventID(&want, "create_invoice normalized")
	if got.ID == 0 {
		t.Error("ID is 0")
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decoded event differs:\n got %+v\nwant %+v", got, want)
	}
	// The record sets every field, so no mapping is left untested.
	v := reflect.ValueOf(got)
	for i := 0; i < v.NumField(); i++ {
		if v.Field(i).IsZero() {
			if v.Type().Field(i).Name == "ClientView" {
				continue // only a CLIENT span sets it (TestDecodeTraces)
			}
			t.Errorf("field %s is not set by the full record", v.Type().Field(i).Name)
		}
	}
}

func TestDecodeEventName(t *testing.T) {
	type want struct {
		name                        EventName
		accepted, rejected, ignored int
		err                         string
	}
	tests := []struct {
		desc      string
		eventName string
		attrs     []kv
		want      want
	}{
		{"EventName", "dev.mcpdrift.call", callAttrs(), want{name: EventCall, accepted: 1}},
		{"event.name fallback", "", callAttrs(kv{AttrEventName, "dev.mcpdrift.call"}), want{name: EventCall, accepted: 1}},
		{"otel.event.name fallback", "", callAttrs(kv{AttrOtelEventName, "dev.mcpdrift.call"}), want{name: EventCall, accepted: 1}},
		{"event.name before otel.event.name", "", []kv{{AttrOtelEventName, "dev.mcpdrift.call"}, {AttrEventName, "dev.mcpdrift.list_changed"}}, want{name: EventListChanged, accepted: 1}},
		{"EventName before event.name", "dev.mcpdrift.list_changed", []kv{{AttrEventName, "dev.mcpdrift.call"}}, want{name: EventListChanged, accepted: 1}},
		{"empty event.name falls through", "", []kv{{AttrEventName, ""}, {AttrOtelEventName, "dev.mcpdrift.refresh"}}, want{name: EventRefresh, accepted: 1}},
		{"no name", "", callAttrs(), want{ignored: 1}},
		{"foreign name", "browser.page_view", callAttrs(), want{ignored: 1}},
		{"foreign event.name", "", []kv{{AttrEventName, "app.started"}}, want{ignored: 1}},
		{"non-string event.name", "", []kv{{AttrEventName, int64(1)}}, want{ignored: 1}},
		{"prefix alone", "mcp.drift", nil, want{ignored: 1}},
		{"unknown drift name", "dev.mcpdrift.bogus", callAttrs(), want{rejected: 1, err: `unknown event name "dev.mcpdrift.bogus"`}},
		{"unknown drift name in event.name", "", []kv{{AttrEventName, "dev.mcpdrift.call2"}}, want{rejected: 1, err: `unknown event name "dev.mcpdrift.call2"`}},
		{"invalid UTF-8 drift name", "dev.mcpdrift.\xff", nil, want{rejected: 1, err: `event name "dev.mcpdrift.\xff": invalid UTF-8`}},
		{"each event", "dev.mcpdrift.contract_error", nil, want{name: EventContractError, accepted: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			ev, err, res := decodeOne(t, testDecoder(), logsWith(t, testResource, tt.eventName, tt.attrs))
			if res.Accepted != tt.want.accepted || res.Rejected != tt.want.rejected || res.Ignored != tt.want.ignored {
				t.Fatalf("got %d accepted, %d rejected, %d ignored; want %+v", res.Accepted, res.Rejected, res.Ignored, tt.want)
			}
			if ev.Name != tt.want.name {
				t.Errorf("name %q, want %q", ev.Name, tt.want.name)
			}
			checkErr(t, err, tt.want.err)
		})
	}
}

// checkErr checks that err is a RecordError at resource 0, scope 0, record 0
// with the message want, or nil when want is empty.
func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	if got := err.Error(); got != "resource 0, scope 0, record 0: "+want {
		t.Fatalf("error\n got %q\nwant %q", got, "resource 0, scope 0, record 0: "+want)
	}
}

func TestDecodeCoercions(t *testing.T) {
	windowEnd := time.Date(2026, 7, 1, 10, 30, 0, 0, time.UTC).Unix()
	tests := []struct {
		attr  string
		value any
		check func(e *Event) any // returns the decoded value
		want  any
	}{
		// Strings.
		{AttrRequestID, "abc", func(e *Event) any { return e.RequestID }, "abc"},
		{AttrRequestID, int64(42), func(e *Event) any { return e.RequestID }, "42"},
		{AttrRequestID, int64(-7), func(e *Event) any { return e.RequestID }, "-7"},
		{AttrRevisionClient, int64(12345678901), func(e *Event) any { return e.RevisionClient }, "12345678901"},
		{AttrRevisionServer, "", func(e *Event) any { return e.RevisionServer }, ""},
		// Ints.
		{AttrRetryAttempt, int64(3), func(e *Event) any { return e.RetryAttempt }, int64(3)},
		{AttrRetryAttempt, "3", func(e *Event) any { return e.RetryAttempt }, int64(3)},
		{AttrRetryAttempt, 4.0, func(e *Event) any { return e.RetryAttempt }, int64(4)},
		{AttrSessionAgeS, "9223372036854775807", func(e *Event) any { return e.SessionAgeS }, int64(9223372036854775807)},
		{AttrExternalRequests, 1e18, func(e *Event) any { return e.ExternalRequests }, int64(1e18)},
		// Bools.
		{AttrSideEffectStarted, true, func(e *Event) any { return e.SideEffectStarted }, true},
		{AttrSideEffectStarted, "true", func(e *Event) any { return e.SideEffectStarted }, true},
		{AttrSideEffectStarted, "false", func(e *Event) any { return e.SideEffectStarted }, false},
		{AttrRepairAutomatic, false, func(e *Event) any { return e.RepairAutomatic }, false},
		// Enums: every value of every enum.
		{AttrChangeClass, "additive", func(e *Event) any { return e.ChangeClass }, ChangeClassAdditive},
		{AttrChangeClass, "removal", func(e *Event) any { return e.ChangeClass }, ChangeClassRemoval},
		{AttrApproval, "denied", func(e *Event) any { return e.Approval }, ApprovalDenied},
		{AttrPrivilege, "read", func(e *Event) any { return e.Privilege }, PrivilegeRead},
		{AttrRefreshResult, "failed", func(e *Event) any { return e.RefreshResult }, RefreshResultFailed},
		{AttrRepairResult, "failure", func(e *Event) any { return e.RepairResult }, RepairResultFailure},
		// Timestamps.
		{AttrAdapterWindowEnd, "2026-07-01T10:30:00Z", func(e *Event) any { return e.AdapterWindowEnd }, windowEnd},
		{AttrAdapterWindowEnd, "2026-07-01T12:30:00.5+02:00", func(e *Event) any { return e.AdapterWindowEnd }, windowEnd},
		{AttrAdapterWindowEnd, windowEnd, func(e *Event) any { return e.AdapterWindowEnd }, windowEnd},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s=%v", tt.attr, tt.value), func(t *testing.T) {
			ev, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call", callAttrs(kv{tt.attr, tt.value})))
			if err != nil {
				t.Fatal(err)
			}
			if got := tt.check(&ev); got != tt.want {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
	// Every value of every enum decodes to the constant of its position.
	for _, a := range Registry() {
		for i, v := range a.Values {
			ev, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call", callAttrs(kv{a.Name, v})))
			if err != nil {
				t.Fatal(err)
			}
			got := reflect.ValueOf(a.get(&ev)).Uint()
			if got != uint64(i+1) {
				t.Errorf("%s=%s decoded to %d, want %d", a.Name, v, got, i+1)
			}
		}
	}
}

func TestDecodeRejections(t *testing.T) {
	big := strings.Repeat("x", 16<<10+1)
	tests := []struct {
		desc  string
		name  string
		attrs []kv
		kind  error
		want  string
	}{
		{"enum unknown value", "dev.mcpdrift.call", callAttrs(kv{AttrOutcome, "maybe"}), ErrUnknownValue,
			`dev.mcpdrift.outcome: unknown value "maybe" (want one of current, normalized, rejected_stale, rejected_incompatible, rejected_invalid, removed, failed)`},
		{"enum case matters", "dev.mcpdrift.call", callAttrs(kv{AttrPrivilege, "Read"}), ErrUnknownValue,
			`dev.mcpdrift.privilege: unknown value "Read" (want one of read, write, destructive, credentialed)`},
		{"enum wrong type", "dev.mcpdrift.call", callAttrs(kv{AttrApproval, int64(2)}), ErrWrongType,
			`dev.mcpdrift.approval: want string, got int 2`},
		{"enum long value is shortened", "dev.mcpdrift.call", callAttrs(kv{AttrChangeClass, strings.Repeat("é", 40)}), ErrUnknownValue,
			`dev.mcpdrift.change.class: unknown value "` + strings.Repeat("é", 32) + `"… (80 bytes) (want one of additive, bounded_migration, semantic, authority, removal)`},
		{"long value is cut on a rune boundary", "dev.mcpdrift.call", callAttrs(kv{AttrApproval, "a" + strings.Repeat("é", 40)}), ErrUnknownValue,
			`dev.mcpdrift.approval: unknown value "a` + strings.Repeat("é", 31) + `"… (81 bytes) (want one of none, session, per_call, denied)`},
		{"bool from other string", "dev.mcpdrift.call", callAttrs(kv{AttrSideEffectStarted, "maybe"}), ErrWrongType,
			`dev.mcpdrift.side_effect.started: want bool, got string "maybe"`},
		{"bool from int", "dev.mcpdrift.call", callAttrs(kv{AttrRepairAutomatic, int64(1)}), ErrWrongType,
			`dev.mcpdrift.repair.automatic: want bool, got int 1`},
		{"bool from TRUE", "dev.mcpdrift.call", callAttrs(kv{AttrRepairAutomatic, "TRUE"}), ErrWrongType,
			`dev.mcpdrift.repair.automatic: want bool, got string "TRUE"`},
		{"int from non-digits", "dev.mcpdrift.call", callAttrs(kv{AttrRetryAttempt, "two"}), ErrWrongType,
			`dev.mcpdrift.retry.attempt: want int, got string "two"`},
		{"int from empty string", "dev.mcpdrift.call", callAttrs(kv{AttrRetryAttempt, ""}), ErrWrongType,
			`dev.mcpdrift.retry.attempt: want int, got string ""`},
		{"int from hex", "dev.mcpdrift.call", callAttrs(kv{AttrRetryAttempt, "0x10"}), ErrWrongType,
			`dev.mcpdrift.retry.attempt: want int, got string "0x10"`},
		{"int overflow", "dev.mcpdrift.call", callAttrs(kv{AttrSessionAgeS, "9223372036854775808"}), ErrWrongType,
			`dev.mcpdrift.session.age_s: want int, got string "9223372036854775808"`},
		{"int from fraction", "dev.mcpdrift.call", callAttrs(kv{AttrExternalRequests, 1.5}), ErrWrongType,
			`dev.mcpdrift.external.requests: want int, got double 1.5`},
		{"int from huge double", "dev.mcpdrift.call", callAttrs(kv{AttrExternalRequests, 1e19}), ErrWrongType,
			`dev.mcpdrift.external.requests: want int, got double 1e+19`},
		{"int from bool", "dev.mcpdrift.call", callAttrs(kv{AttrNotificationLagMs, true}), ErrWrongType,
			`dev.mcpdrift.notification.lag_ms: want int, got bool true`},
		{"string from double", "dev.mcpdrift.call", callAttrs(kv{AttrRequestID, 1.5}), ErrWrongType,
			`jsonrpc.request.id: want string, got double 1.5`},
		{"string from bool", "dev.mcpdrift.call", callAttrs(kv{AttrSessionID, false}), ErrWrongType,
			`mcp.session.id: want string, got bool false`},
		{"string from bytes", "dev.mcpdrift.call", callAttrs(kv{AttrRunID, []byte{1, 2, 3}}), ErrWrongType,
			`dev.mcpdrift.run.id: want string, got bytes (3 bytes)`},
		{"string from map", "dev.mcpdrift.call", callAttrs(kv{AttrClientName, map[string]any{"a": 1, "b": 2}}), ErrWrongType,
			`dev.mcpdrift.client.name: want string, got map (2 entries)`},
		{"string from slice", "dev.mcpdrift.call", callAttrs(kv{AttrClientVersion, []any{"1"}}), ErrWrongType,
			`dev.mcpdrift.client.version: want string, got slice (1 elements)`},
		{"string from empty", "dev.mcpdrift.call", callAttrs(kv{AttrErrorCode, nil}), ErrWrongType,
			`dev.mcpdrift.error.code: want string, got empty value`},
		{"timestamp not RFC 3339", "dev.mcpdrift.adapter", []kv{{AttrToolName, "t"}, {AttrAdapterID, "a"}, {AttrAdapterWindowEnd, "2026-07-01"}}, ErrWrongType,
			`dev.mcpdrift.adapter.window_end: want RFC 3339 timestamp, got string "2026-07-01"`},
		{"timestamp from double", "dev.mcpdrift.adapter", []kv{{AttrToolName, "t"}, {AttrAdapterID, "a"}, {AttrAdapterWindowEnd, 1.5}}, ErrWrongType,
			`dev.mcpdrift.adapter.window_end: want RFC 3339 string or int Unix seconds, got double 1.5`},
		{"event-name attribute wrong type", "dev.mcpdrift.call", callAttrs(kv{AttrEventName, 1.0}), ErrWrongType,
			`event.name: want string, got double 1`},
		{"missing tool on call", "dev.mcpdrift.call", []kv{{AttrOutcome, "current"}}, ErrMissingAttribute,
			`dev.mcpdrift.call: missing required attribute gen_ai.tool.name`},
		{"empty tool on call", "dev.mcpdrift.call", []kv{{AttrToolName, ""}, {AttrOutcome, "current"}}, ErrMissingAttribute,
			`dev.mcpdrift.call: missing required attribute gen_ai.tool.name`},
		{"missing outcome on call", "dev.mcpdrift.call", []kv{{AttrToolName, "t"}}, ErrMissingAttribute,
			`dev.mcpdrift.call: missing required attribute dev.mcpdrift.outcome`},
		{"missing adapter id", "dev.mcpdrift.adapter", []kv{{AttrToolName, "t"}}, ErrMissingAttribute,
			`dev.mcpdrift.adapter: missing required attribute dev.mcpdrift.adapter.id`},
		{"missing tool on adapter", "dev.mcpdrift.adapter", []kv{{AttrAdapterID, "a"}}, ErrMissingAttribute,
			`dev.mcpdrift.adapter: missing required attribute gen_ai.tool.name`},
		{"missing repair action", "dev.mcpdrift.repair", []kv{{AttrToolName, "t"}, {AttrRepairResult, "success"}}, ErrMissingAttribute,
			`dev.mcpdrift.repair: missing required attribute dev.mcpdrift.repair.action`},
		{"string over MaxValueBytes", "dev.mcpdrift.call", callAttrs(kv{AttrExternalTarget, big}), ErrTooLong,
			`dev.mcpdrift.external.target: value of 16385 bytes exceeds MaxValueBytes 16384`},
		{"args over MaxArgsBytes", "dev.mcpdrift.call", callAttrs(kv{AttrArgsNormalized, strings.Repeat("x", 256<<10+1)}), ErrTooLong,
			`dev.mcpdrift.args.normalized: value of 262145 bytes exceeds MaxArgsBytes 262144`},
		{"extra value over MaxValueBytes", "dev.mcpdrift.call", callAttrs(kv{"custom", big}), ErrTooLong,
			`custom: value of 16385 bytes exceeds MaxValueBytes 16384`},
		{"extra key over MaxValueBytes", "dev.mcpdrift.call", callAttrs(kv{big, "v"}), ErrTooLong,
			`attribute key of 16385 bytes exceeds MaxValueBytes 16384`},
		{"invalid UTF-8 value", "dev.mcpdrift.call", callAttrs(kv{AttrToolName, "bad\xc3"}), ErrInvalidUTF8,
			`gen_ai.tool.name: invalid UTF-8 in value`},
		{"invalid UTF-8 args", "dev.mcpdrift.call", callAttrs(kv{AttrArgsRaw, "{\"a\":\"\xff\"}"}), ErrInvalidUTF8,
			`dev.mcpdrift.args.raw: invalid UTF-8 in value`},
		{"invalid UTF-8 extra value", "dev.mcpdrift.call", callAttrs(kv{"custom", "\xff"}), ErrInvalidUTF8,
			`custom: invalid UTF-8 in value`},
		{"invalid UTF-8 key", "dev.mcpdrift.call", callAttrs(kv{"cus\xfftom", "v"}), ErrInvalidUTF8,
			`attribute key "cus\xfftom": invalid UTF-8`},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			_, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, tt.name, tt.attrs))
			checkErr(t, err, tt.want)
			if !errors.Is(err, tt.kind) {
				t.Errorf("error does not wrap %v", tt.kind)
			}
		})
	}
}

func TestDecodeLimits(t *testing.T) {
	many := func(n int) []kv {
		attrs := callAttrs()
		for i := len(attrs); i < n; i++ {
			attrs = append(attrs, kv{fmt.Sprintf("x.%d", i), "v"})
		}
		return attrs
	}
	t.Run("attributes at the limit", func(t *testing.T) {
		d := testDecoder()
		d.Limits.MaxAttributes = 10 // 5 on the resource, 5 on the record
		_, err, _ := decodeOne(t, d, logsWith(t, testResource, "dev.mcpdrift.call", many(5)))
		checkErr(t, err, "")
	})
	t.Run("attributes over the limit", func(t *testing.T) {
		d := testDecoder()
		d.Limits.MaxAttributes = 10
		_, err, _ := decodeOne(t, d, logsWith(t, testResource, "dev.mcpdrift.call", many(6)))
		checkErr(t, err, "too many attributes: 11 (resource and scope 5, record 6) exceed MaxAttributes 10")
		if !errors.Is(err, ErrTooManyAttributes) {
			t.Error("error does not wrap ErrTooManyAttributes")
		}
	})
	t.Run("scope attributes count", func(t *testing.T) {
		d := testDecoder()
		d.Limits.MaxAttributes = 10
		ld := logsWith(t, testResource, "dev.mcpdrift.call", many(5))
		ld.ResourceLogs().At(0).ScopeLogs().At(0).Scope().Attributes().PutStr("scope.x", "1")
		_, err, _ := decodeOne(t, d, ld)
		checkErr(t, err, "too many attributes: 11 (resource and scope 6, record 5) exceed MaxAttributes 10")
	})
	t.Run("default limit", func(t *testing.T) {
		_, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call", many(252)))
		checkErr(t, err, "too many attributes: 257 (resource and scope 5, record 252) exceed MaxAttributes 256")
	})
	t.Run("args between MaxValueBytes and MaxArgsBytes", func(t *testing.T) {
		ev, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call",
			callAttrs(kv{AttrArgsRaw, strings.Repeat("x", 100<<10)})))
		checkErr(t, err, "")
		if len(ev.ArgsRaw) != 100<<10 {
			t.Errorf("args of %d bytes", len(ev.ArgsRaw))
		}
	})
	t.Run("value at MaxValueBytes", func(t *testing.T) {
		_, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call",
			callAttrs(kv{AttrExternalTarget, strings.Repeat("x", 16<<10)})))
		checkErr(t, err, "")
	})
	t.Run("zero limits disable the checks", func(t *testing.T) {
		d := &Decoder{Now: func() time.Time { return testNow }}
		attrs := append(many(300), kv{AttrExternalTarget, strings.Repeat("x", 1<<20)})
		ld := logsWith(t, testResource, "dev.mcpdrift.call", attrs)
		ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).SetTimestamp(1)
		_, err, _ := decodeOne(t, d, ld)
		checkErr(t, err, "")
	})
}

func TestDecodeTime(t *testing.T) {
	ts := func(tm time.Time) pcommon.Timestamp { return pcommon.NewTimestampFromTime(tm) }
	tests := []struct {
		desc              string
		timestamp, observ pcommon.Timestamp
		limits            func(*Limits)
		want              int64
		err               string
	}{
		{desc: "timestamp", timestamp: ts(testTime), observ: ts(testNow), want: testTime.UnixNano()},
		{desc: "observed when no timestamp", observ: ts(testTime.Add(time.Second)), want: testTime.Add(time.Second).UnixNano()},
		{desc: "now when neither", want: testNow.UnixNano()},
		{desc: "at MaxPast", timestamp: ts(testNow.Add(-30 * 24 * time.Hour)), want: testNow.Add(-30 * 24 * time.Hour).UnixNano()},
		{desc: "older than MaxPast", timestamp: ts(testNow.Add(-30*24*time.Hour - time.Nanosecond)),
			err: "timestamp 2026-04-01T11:59:59.999999999Z is older than MaxPast 720h0m0s before now (2026-05-01T12:00:00Z)"},
		{desc: "observed older than MaxPast", observ: ts(time.Unix(1, 0)),
			err: "timestamp 1970-01-01T00:00:01Z is older than MaxPast 720h0m0s before now (2026-05-01T12:00:00Z)"},
		{desc: "at MaxFuture", timestamp: ts(testNow.Add(time.Hour)), want: testNow.Add(time.Hour).UnixNano()},
		{desc: "later than MaxFuture", timestamp: ts(testNow.Add(2 * time.Hour)),
			err: "timestamp 2026-05-01T14:00:00Z is more than MaxFuture 1h0m0s after now (2026-05-01T12:00:00Z)"},
		{desc: "MaxPast 0 disables", timestamp: 1, limits: func(l *Limits) { l.MaxPast = 0 }, want: 1},
		{desc: "MaxFuture 0 disables", timestamp: ts(testNow.Add(1000 * time.Hour)), limits: func(l *Limits) { l.MaxFuture = 0 }, want: testNow.Add(1000 * time.Hour).UnixNano()},
		{desc: "beyond int64", timestamp: 1 << 63, limits: func(l *Limits) { l.MaxFuture = 0 },
			err: "timestamp 9223372036854775808 ns is past the year 2262"},
	}
	for _, tt := range tests {
		t.Run(tt.desc, func(t *testing.T) {
			d := testDecoder()
			if tt.limits != nil {
				tt.limits(&d.Limits)
			}
			ld := logsWith(t, testResource, "dev.mcpdrift.call", callAttrs())
			lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
			lr.SetTimestamp(tt.timestamp)
			lr.SetObservedTimestamp(tt.observ)
			ev, err, _ := decodeOne(t, d, ld)
			checkErr(t, err, tt.err)
			if tt.err != "" {
				if !errors.Is(err, ErrTimeRange) {
					t.Error("error does not wrap ErrTimeRange")
				}
				return
			}
			if ev.Time != tt.want {
				t.Errorf("time %d, want %d", ev.Time, tt.want)
			}
		})
	}
	t.Run("nil Now is the wall clock", func(t *testing.T) {
		d := &Decoder{Limits: DefaultLimits()}
		ld := logsWith(t, testResource, "dev.mcpdrift.call", callAttrs())
		ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).SetTimestamp(0)
		before := time.Now().UnixNano()
		ev, err, _ := decodeOne(t, d, ld)
		checkErr(t, err, "")
		if ev.Time < before || ev.Time > time.Now().UnixNano() {
			t.Errorf("time %d is not now", ev.Time)
		}
	})
}

func TestDecodeResourceAndScope(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putAll(t, rl.Resource().Attributes(), append(testResource[:1:1],
		kv{AttrClientName, "from-resource"},
		kv{AttrRunID, "run-resource"},
		kv{AttrSessionID, "sess-resource"},
		kv{"host.name", "dropped"},
	))
	sl := rl.ScopeLogs().AppendEmpty()
	putAll(t, sl.Scope().Attributes(), []kv{
		{AttrRunID, "run-scope"},
		{AttrSessionID, "sess-scope"},
		{AttrServiceName, "ignored-on-scope"},
		{"scope.only", "dropped"},
	})
	lr := sl.LogRecords().AppendEmpty()
	lr.SetEventName("dev.mcpdrift.call")
	putAll(t, lr.Attributes(), callAttrs(
		kv{AttrServiceName, "from-record"},
		kv{AttrSessionID, "sess-record"},
	))

	ev, err, _ := decodeOne(t, testDecoder(), ld)
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct{ field, got, want string }{
		{"Service", ev.Service, "billing-mcp"},
		{"ClientName", ev.ClientName, "from-resource"},
		{"RunID", ev.RunID, "run-scope"},
		{"SessionID", ev.SessionID, "sess-record"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.field, c.got, c.want)
		}
	}
	if want := map[string]string{AttrServiceName: "from-record"}; !reflect.DeepEqual(ev.Attributes, want) {
		t.Errorf("Attributes = %v, want %v", ev.Attributes, want)
	}
}

func TestDecodeSharedErrors(t *testing.T) {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	putAll(t, rl.Resource().Attributes(), []kv{{AttrServiceName, map[string]any{"a": "b"}}})
	sl := rl.ScopeLogs().AppendEmpty()
	for _, name := range []string{"dev.mcpdrift.call", "app.log", "dev.mcpdrift.call"} {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetEventName(name)
		putAll(t, lr.Attributes(), callAttrs())
	}
	// A second resource is unaffected; its scope is bad.
	rl2 := ld.ResourceLogs().AppendEmpty()
	sl2 := rl2.ScopeLogs().AppendEmpty()
	putAll(t, sl2.Scope().Attributes(), []kv{{AttrPrivilege, "root"}})
	lr := sl2.LogRecords().AppendEmpty()
	lr.SetEventName("dev.mcpdrift.call")
	putAll(t, lr.Attributes(), callAttrs())
	sl3 := rl2.ScopeLogs().AppendEmpty()
	lr = sl3.LogRecords().AppendEmpty()
	lr.SetEventName("dev.mcpdrift.call")
	putAll(t, lr.Attributes(), callAttrs())

	events, res := testDecoder().DecodeLogs(ld, nil)
	if res.Accepted != 1 || res.Rejected != 3 || res.Ignored != 1 || len(events) != 1 {
		t.Fatalf("got %+v with %d events", res, len(events))
	}
	want := []string{
		"resource 0, scope 0, record 0: resource attributes: service.name: want string, got map (1 entries)",
		"resource 0, scope 0, record 2: resource attributes: service.name: want string, got map (1 entries)",
		`resource 1, scope 0, record 0: scope attributes: dev.mcpdrift.privilege: unknown value "root" (want one of read, write, destructive, credentialed)`,
	}
	for i, e := range res.Errors {
		if e.Error() != want[i] {
			t.Errorf("error %d\n got %q\nwant %q", i, e.Error(), want[i])
		}
	}
	if !errors.Is(res.Errors[2], ErrUnknownValue) {
		t.Error("scope error does not wrap ErrUnknownValue")
	}
}

func TestDecodeExtraAttributes(t *testing.T) {
	ev, err, _ := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call", callAttrs()))
	if err != nil {
		t.Fatal(err)
	}
	if ev.Attributes != nil {
		t.Errorf("Attributes = %#v, want nil when there are none", ev.Attributes)
	}
	ev, err, _ = decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call", callAttrs(
		kv{"s", "str"},
		kv{"i", int64(-12)},
		kv{"d", 2.5},
		kv{"b", true},
		kv{"bytes", []byte("hi")},
		kv{"m", map[string]any{"k": "<v>"}},
		kv{"l", []any{int64(1), "two"}},
		kv{"e", nil},
	)))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"s": "str", "i": "-12", "d": "2.5", "b": "true", "bytes": "aGk=",
		"m": `{"k":"<v>"}`, "l": `[1,"two"]`, "e": "",
	}
	if !reflect.DeepEqual(ev.Attributes, want) {
		t.Errorf("Attributes\n got %v\nwant %v", ev.Attributes, want)
	}
}

func TestDecodeAppendsToDst(t *testing.T) {
	ld := logsWith(t, testResource, "dev.mcpdrift.call",
		callAttrs(kv{AttrRequestID, "1"}),
		callAttrs(kv{AttrOutcome, "bad"}),
		callAttrs(kv{AttrRequestID, "3"}),
	)
	dst := make([]Event, 1, 10)
	dst[0] = Event{Tool: "kept"}
	events, res := testDecoder().DecodeLogs(ld, dst)
	if res.Accepted != 2 || res.Rejected != 1 {
		t.Fatalf("result %+v", res)
	}
	if len(events) != 3 || events[0].Tool != "kept" || events[1].RequestID != "1" || events[2].RequestID != "3" {
		t.Fatalf("events %+v", events)
	}
	if &events[0] != &dst[0] {
		t.Error("dst's storage was not reused")
	}
	if spare := events[:4][3]; !reflect.DeepEqual(spare, Event{}) {
		t.Errorf("the rejected record left %+v behind in dst's spare capacity", spare)
	}
}

func TestEventID(t *testing.T) {
	decode := func(attrs []kv, body string) Event {
		t.Helper()
		ld := logsWith(t, testResource, "dev.mcpdrift.call", attrs)
		if body != "" {
			ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0).Body().SetStr(body)
		}
		ev, err, _ := decodeOne(t, testDecoder(), ld)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	base := decode(callAttrs(kv{AttrRequestID, "1"}), "")
	if again := decode(callAttrs(kv{AttrRequestID, "1"}), ""); again.ID != base.ID {
		t.Errorf("same record, IDs %x and %x", base.ID, again.ID)
	}
	if other := decode(callAttrs(kv{AttrRequestID, "1"}, kv{AttrRevisionClient, "r1"}), ""); other.ID != base.ID {
		t.Errorf("a revision is not identifying, yet changed the ID")
	}
	for _, tt := range []struct {
		desc  string
		attrs []kv
		body  string
	}{
		{"request id", callAttrs(kv{AttrRequestID, "2"}), ""},
		{"int and string request id agree", nil, ""},
		{"tool", []kv{{AttrToolName, "other"}, {AttrOutcome, "normalized"}, {AttrRequestID, "1"}}, ""},
		{"outcome", callAttrs(kv{AttrRequestID, "1"}, kv{AttrOutcome, "current"}), ""},
		{"retry attempt", callAttrs(kv{AttrRequestID, "1"}, kv{AttrRetryAttempt, int64(1)}), ""},
		{"session", callAttrs(kv{AttrRequestID, "1"}, kv{AttrSessionID, "s"}), ""},
		{"run", callAttrs(kv{AttrRequestID, "1"}, kv{AttrRunID, "r"}), ""},
		{"adapter", callAttrs(kv{AttrRequestID, "1"}, kv{AttrAdapterID, "a"}), ""},
		{"repair action", callAttrs(kv{AttrRequestID, "1"}, kv{AttrRepairAction, "abandon"}), ""},
		{"body", callAttrs(kv{AttrRequestID, "1"}), "hello"},
	} {
		if tt.attrs == nil {
			a := decode(callAttrs(kv{AttrRequestID, int64(77)}), "")
			b := decode(callAttrs(kv{AttrRequestID, "77"}), "")
			if a.ID != b.ID {
				t.Errorf("%s: IDs %x and %x", tt.desc, a.ID, b.ID)
			}
			continue
		}
		if ev := decode(tt.attrs, tt.body); ev.ID == base.ID {
			t.Errorf("changing the %s did not change the ID", tt.desc)
		}
	}
	// Fields are length-prefixed: moving bytes between two strings changes
	// the ID.
	a := Event{Name: EventCall, SessionID: "ab", RunID: "c"}
	b := Event{Name: EventCall, SessionID: "a", RunID: "bc"}
	if eventID(&a, "") == eventID(&b, "") {
		t.Error("IDs collide when bytes move between fields")
	}
}

// TestEventIDStable pins the ID of one event: stored events are deduplicated
// by ID, so a change here double counts every event sent again after an
// upgrade. Change the expected value only with a migration plan.
func TestEventIDStable(t *testing.T) {
	e := Event{
		Name: EventCall, Time: 1777636800000000000,
		TraceID: [16]byte{1}, SpanID: [8]byte{2},
		Service: "billing-mcp", ServiceInstance: "pod-7", SessionID: "s", RunID: "r",
		RequestID: "42", Tool: "create_invoice", RetryAttempt: 1,
		Outcome: OutcomeRejectedStale, RepairAction: RepairActionRefreshRetry, AdapterID: "a",
	}
	const want = 0x84acde004b1506cc
	if got := eventID(&e, "body"); got != want {
		t.Errorf("eventID = %#x, want %#x", got, uint64(want))
	}
}

func TestResultMessage(t *testing.T) {
	var records [][]kv
	for i := 0; i < 8; i++ {
		records = append(records, callAttrs(kv{AttrOutcome, fmt.Sprintf("bad%d", i)}))
	}
	records = append(records, callAttrs(), callAttrs())
	events, res := testDecoder().DecodeLogs(logsWith(t, testResource, "dev.mcpdrift.call", records...), nil)
	if len(events) != 2 || res.Accepted != 2 || res.Rejected != 8 || len(res.Errors) != MaxErrors {
		t.Fatalf("got %d events, %+v", len(events), res)
	}
	for i, e := range res.Errors {
		if e.Record != i || e.Resource != 0 || e.Scope != 0 {
			t.Errorf("error %d located at %d/%d/%d", i, e.Resource, e.Scope, e.Record)
		}
	}
	msg := res.Message()
	wantPrefix := `8 of 10 log records rejected: resource 0, scope 0, record 0: dev.mcpdrift.outcome: unknown value "bad0" (want one of current, normalized, rejected_stale, rejected_incompatible, rejected_invalid, removed, failed); resource 0, scope 0, record 1: `
	if !strings.HasPrefix(msg, wantPrefix) {
		t.Errorf("message\n got %q\nwant prefix %q", msg, wantPrefix)
	}
	if !strings.HasSuffix(msg, `"bad4" (want one of current, normalized, rejected_stale, rejected_incompatible, rejected_invalid, removed, failed); and 3 more`) {
		t.Errorf("message %q does not end with the fifth error and the rest", msg)
	}
	if got := strings.Count(msg, "resource 0, scope 0"); got != MaxErrors {
		t.Errorf("message names %d errors, want %d", got, MaxErrors)
	}

	_, res = testDecoder().DecodeLogs(logsWith(t, testResource, "dev.mcpdrift.call", callAttrs(kv{AttrOutcome, "x"}), callAttrs()), nil)
	if got, want := res.Message(), `1 of 2 log records rejected: resource 0, scope 0, record 0: dev.mcpdrift.outcome: unknown value "x" (want one of current, normalized, rejected_stale, rejected_incompatible, rejected_invalid, removed, failed)`; got != want {
		t.Errorf("message\n got %q\nwant %q", got, want)
	}
	_, res = testDecoder().DecodeLogs(logsWith(t, testResource, "dev.mcpdrift.call", callAttrs()), nil)
	if got := res.Message(); got != "" {
		t.Errorf("message %q with nothing rejected", got)
	}
	if got := (Result{Rejected: 3, Ignored: 1}).Message(); got != "3 of 4 log records rejected" {
		t.Errorf("message without kept errors: %q", got)
	}
}

func TestRecordErrorUnwrap(t *testing.T) {
	err := error(&RecordError{Resource: 1, Scope: 2, Record: 3, Err: fail(ErrMissingAttribute, "x")})
	if err.Error() != "resource 1, scope 2, record 3: x" {
		t.Errorf("Error() = %q", err.Error())
	}
	if !errors.Is(err, ErrMissingAttribute) || errors.Is(err, ErrWrongType) {
		t.Error("errors.Is does not see the reason")
	}
}

func TestDecodeEmpty(t *testing.T) {
	events, res := testDecoder().DecodeLogs(plog.NewLogs(), nil)
	if events != nil || res.Accepted+res.Rejected+res.Ignored != 0 || res.Message() != "" {
		t.Errorf("got %v, %+v", events, res)
	}
}

// TestResultByReasonCountsEveryRejection checks that rejections past the
// first MaxErrors are still counted by reason.
func TestResultByReasonCountsEveryRejection(t *testing.T) {
	ld := plog.NewLogs()
	lrs := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords()
	for i := 0; i < 3*MaxErrors; i++ {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		if i%3 == 0 {
			lr.SetEventName("dev.mcpdrift.no_such_event")
			continue
		}
		lr.SetEventName("dev.mcpdrift.call")
		lr.Attributes().PutStr(AttrToolName, "deploy_preview")
		if i%3 == 1 {
			lr.Attributes().PutStr(AttrOutcome, "maybe")
		}
	}
	_, res := (&Decoder{}).DecodeLogs(ld, nil)
	want := [len(Reasons) + 1]int{}
	want[0] = MaxErrors // unknown event
	want[1] = MaxErrors // missing outcome
	want[3] = MaxErrors // unknown enum value
	if res.Rejected != 3*MaxErrors || res.ByReason != want || len(res.Errors) != MaxErrors {
		t.Fatalf("rejected %d, by reason %v, %d errors kept; want %d, %v, %d", res.Rejected, res.ByReason, len(res.Errors), 3*MaxErrors, want, MaxErrors)
	}
}

// TestUntimedRecordKeepsItsID: a record without a time (nor an observed
// time) takes the time it is received, but not into its ID: the same
// record sent twice, seconds apart, is one event, over both decoders. A
// timed record keeps the ID its time gives it.
func TestUntimedRecordKeepsItsID(t *testing.T) {
	ld := logsWith(t, testResource, "dev.mcpdrift.call", callAttrs())
	lr := ld.ResourceLogs().At(0).ScopeLogs().At(0).LogRecords().At(0)
	lr.SetTimestamp(0)
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint64]int{}
	for _, at := range []time.Time{testNow, testNow.Add(7 * time.Second)} {
		d := &Decoder{Limits: DefaultLimits(), Now: func() time.Time { return at }}
		events, res := d.DecodeLogs(ld, nil)
		wire, wres, err := d.DecodeLogsProto(body, nil)
		if err != nil || res.Accepted != 1 || wres.Accepted != 1 {
			t.Fatalf("decode: %+v %+v %v", res, wres, err)
		}
		if events[0].Time != at.UnixNano() || wire[0].Time != at.UnixNano() {
			t.Errorf("untimed record timed %d and %d, want the receive time %d", events[0].Time, wire[0].Time, at.UnixNano())
		}
		ids[events[0].ID]++
		ids[wire[0].ID]++
	}
	if len(ids) != 1 {
		t.Errorf("the same untimed record got %d ids over two receptions and two decoders: %v", len(ids), ids)
	}
	lr.SetTimestamp(pcommon.NewTimestampFromTime(testNow))
	timed, _ := testDecoder().DecodeLogs(ld, nil)
	if _, same := ids[timed[0].ID]; same {
		t.Error("a timed record has the ID of the untimed one")
	}
}

// TestNegativeCountsRejected: every integer of the conventions is a count
// or a duration; a negative one rejects its record, naming the attribute,
// whatever the value's type.
func TestNegativeCountsRejected(t *testing.T) {
	for _, tc := range []struct {
		attr  string
		value any
	}{
		{AttrRetryAttempt, int64(-1)},
		{AttrRetryAttempt, "-2"},
		{AttrExternalRequests, -1e18},
		{AttrSessionAgeS, int64(math.MinInt64)},
	} {
		_, err, res := decodeOne(t, testDecoder(), logsWith(t, testResource, "dev.mcpdrift.call", callAttrs(kv{tc.attr, tc.value})))
		if !errors.Is(err, ErrNegative) || !strings.Contains(err.Error(), tc.attr+": ") || res.Rejected != 1 {
			t.Errorf("%s = %v: %v, want a rejection for a negative value naming the attribute", tc.attr, tc.value, err)
		}
	}
}
