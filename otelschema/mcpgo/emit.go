package mcpgo

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/log"
	"go.opentelemetry.io/otel/trace"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// ScopeName is the instrumentation scope of the emitted events.
const ScopeName = "github.com/mcpdrift/mcpdrift/otelschema/mcpgo"

// attrPool holds the attribute buffers of emit: the logger and the span
// copy what they are given, so a buffer is reused once emit returns.
var attrPool = sync.Pool{New: func() any { b := make([]attribute.KeyValue, 0, 40); return &b }}

// emitter writes drift events to an OpenTelemetry logger.
type emitter struct {
	logger log.Logger
	now    func() time.Time
}

func newEmitter(lp log.LoggerProvider, now func() time.Time) emitter {
	if lp == nil {
		lp = otel.GetLoggerProvider()
	}
	if now == nil {
		now = time.Now
	}
	return emitter{logger: lp.Logger(ScopeName), now: now}
}

// event holds the facts of one drift event; empty fields are left out.
type event struct {
	name otelschema.EventName
	time time.Time

	tool, method, requestID, sessionID, protocol string
	clientName, clientVersion, runID             string
	sessionAge                                   time.Duration

	revClient, revServer, revBefore, revAfter string
	revSource                                 otelschema.RevisionSource

	outcome          otelschema.Outcome
	adapterID        string
	change           otelschema.ChangeClass
	sideEffect       bool
	externalRequests int64
	externalTarget   string
	errorCode        string
	requiredAction   string

	retryOf        string
	retryAttempt   int64
	retryAfter     otelschema.Outcome // on a call that retries another: what it followed
	idempotencyKey string

	repairAction    otelschema.RepairAction
	repairAutomatic bool
	hasAutomatic    bool // on a call: the retry said whether it is automatic
	repairResult    otelschema.RepairResult
	repairDuration  time.Duration

	approval  otelschema.Approval
	privilege otelschema.Privilege

	refreshResult otelschema.RefreshResult
	lag           time.Duration
	hasLag        bool

	adapterFrom, adapterTo string
	windowEnd              time.Time

	argsRaw, argsNormalized string

	contractField string // on a contract error: the needed result field

	definition string // on an advertised event: the tool definition

	// On an advertised event: the list's cache hint (0 and "" without).
	listTTLMs int64
	listScope string
}

// attrs appends the event's attributes, but not its arguments, to dst.
func (e *event) attrs(dst []attribute.KeyValue) []attribute.KeyValue {
	str := func(k, v string) {
		if v != "" {
			dst = append(dst, attribute.String(k, v))
		}
	}
	str(otelschema.AttrToolName, e.tool)
	str(otelschema.AttrMethodName, e.method)
	str(otelschema.AttrRequestID, e.requestID)
	str(otelschema.AttrSessionID, e.sessionID)
	str(otelschema.AttrProtocolVersion, e.protocol)
	str(otelschema.AttrClientName, e.clientName)
	str(otelschema.AttrClientVersion, e.clientVersion)
	str(otelschema.AttrRunID, e.runID)
	if e.sessionAge > 0 {
		dst = append(dst, attribute.Int64(otelschema.AttrSessionAgeS, int64(e.sessionAge/time.Second)))
	}
	str(otelschema.AttrRevisionClient, e.revClient)
	str(otelschema.AttrRevisionClientSource, e.revSource.String())
	str(otelschema.AttrRevisionServer, e.revServer)
	str(otelschema.AttrRevisionBefore, e.revBefore)
	str(otelschema.AttrRevisionAfter, e.revAfter)
	str(otelschema.AttrOutcome, e.outcome.String())
	str(otelschema.AttrAdapterID, e.adapterID)
	str(otelschema.AttrChangeClass, e.change.String())
	if e.name == otelschema.EventCall {
		dst = append(dst,
			attribute.Bool(otelschema.AttrSideEffectStarted, e.sideEffect),
			attribute.Int64(otelschema.AttrExternalRequests, e.externalRequests))
	}
	str(otelschema.AttrExternalTarget, e.externalTarget)
	str(otelschema.AttrErrorCode, e.errorCode)
	str(otelschema.AttrRequiredAction, e.requiredAction)
	str(otelschema.AttrRetryOf, e.retryOf)
	if e.retryAttempt > 0 {
		dst = append(dst, attribute.Int64(otelschema.AttrRetryAttempt, e.retryAttempt))
	}
	if e.name == otelschema.EventCall && e.retryOf != "" {
		str(otelschema.AttrRetryAfter, e.retryAfter.String())
	}
	str(otelschema.AttrIdempotencyKey, e.idempotencyKey)
	if e.name == otelschema.EventCall && e.hasAutomatic {
		dst = append(dst, attribute.Bool(otelschema.AttrRepairAutomatic, e.repairAutomatic))
	}
	if e.name == otelschema.EventRepair {
		dst = append(dst,
			attribute.String(otelschema.AttrRepairAction, e.repairAction.String()),
			attribute.Bool(otelschema.AttrRepairAutomatic, e.repairAutomatic),
			attribute.Int64(otelschema.AttrRepairDurationMs, e.repairDuration.Milliseconds()))
		str(otelschema.AttrRepairResult, e.repairResult.String())
	}
	str(otelschema.AttrApproval, e.approval.String())
	str(otelschema.AttrPrivilege, e.privilege.String())
	str(otelschema.AttrRefreshResult, e.refreshResult.String())
	if e.hasLag {
		dst = append(dst, attribute.Int64(otelschema.AttrNotificationLagMs, e.lag.Milliseconds()))
	}
	str(otelschema.AttrAdapterRevisionFrom, e.adapterFrom)
	str(otelschema.AttrAdapterRevisionTo, e.adapterTo)
	if !e.windowEnd.IsZero() {
		dst = append(dst, attribute.String(otelschema.AttrAdapterWindowEnd, e.windowEnd.UTC().Format(time.RFC3339)))
	}
	str(otelschema.AttrContractField, e.contractField)
	if e.listTTLMs > 0 {
		dst = append(dst, attribute.Int64(otelschema.AttrListTTLMs, e.listTTLMs))
	}
	str(otelschema.AttrListCacheScope, e.listScope)
	return dst
}

// enabled reports whether events named name would be emitted.
func (em *emitter) enabled(ctx context.Context, name otelschema.EventName) bool {
	return em.logger.Enabled(ctx, log.EnabledParameters{Severity: log.SeverityInfo, EventName: name.String()})
}

// emit writes e as a log event, and adds its attributes to the span in ctx
// when that span is recording. Arguments go to the log event only, never
// to the span.
func (em *emitter) emit(ctx context.Context, e *event, audit bool) {
	bp := attrPool.Get().(*[]attribute.KeyValue)
	defer func() { *bp = (*bp)[:0]; attrPool.Put(bp) }()
	kvs := e.attrs(*bp)
	*bp = kvs
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.SetAttributes(kvs...)
	}
	if !em.enabled(ctx, e.name) {
		return
	}
	if e.definition != "" {
		// On the log event only: a span would carry the whole definition
		// on every call.
		kvs = append(kvs, attribute.String(otelschema.AttrToolDefinition, e.definition))
		*bp = kvs
	}
	if audit {
		if e.argsRaw != "" {
			kvs = append(kvs, attribute.String(otelschema.AttrArgsRaw, e.argsRaw))
		}
		if e.argsNormalized != "" {
			kvs = append(kvs, attribute.String(otelschema.AttrArgsNormalized, e.argsNormalized))
		}
		*bp = kvs
	}
	var r log.Record
	r.SetEventName(e.name.String())
	t := e.time
	if t.IsZero() {
		t = em.now()
	}
	r.SetTimestamp(t)
	r.SetSeverity(log.SeverityInfo)
	r.AddAttributes(kvs...)
	em.logger.Emit(ctx, r)
}
