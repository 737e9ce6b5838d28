package otelschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// Limits bound what one record may carry. A record over a limit is rejected
// with a message that names the limit and the sizes. A zero or negative
// limit disables its check.
type Limits struct {
	// MaxAttributes is the most attributes one record may carry (resource,
	// scope and record attributes together).
	MaxAttributes int
	// MaxValueBytes is the longest string attribute value, except arguments;
	// it also bounds the keys of attributes outside the conventions.
	MaxValueBytes int
	// MaxArgsBytes is the longest dev.mcpdrift.args.raw / .normalized value.
	MaxArgsBytes int
	// MaxDefinitionBytes is the longest dev.mcpdrift.tool.definition value.
	MaxDefinitionBytes int
	// MaxPast rejects events older than now minus this; 0 disables the check.
	MaxPast time.Duration
	// MaxFuture rejects events later than now plus this; 0 disables the check.
	MaxFuture time.Duration
}

// DefaultLimits returns the limits the ingester applies unless configured.
func DefaultLimits() Limits {
	return Limits{
		MaxAttributes: 256,
		MaxValueBytes: 16 << 10,
		MaxArgsBytes:  256 << 10,
		// A tool definition is its schemas: 64 KiB holds several hundred
		// properties with their descriptions.
		MaxDefinitionBytes: 64 << 10,
		MaxPast:            30 * 24 * time.Hour,
		MaxFuture:          time.Hour,
	}
}

// Decoder turns OTLP records into validated events. Its zero value applies
// no limits; use DefaultLimits for the ingester's. A Decoder is not modified
// by decoding and may be used by several goroutines at once.
type Decoder struct {
	Limits Limits
	// Now returns the current time; nil means time.Now. It is called once
	// per DecodeLogs.
	Now func() time.Time
}

// Signal is the OTLP signal whose records a Result counts: it names them
// in messages.
type Signal uint8

// Signals.
const (
	SignalLogs   Signal = iota // log records (DecodeLogs); the zero value
	SignalTraces               // spans (DecodeTraces)
)

// records names the signal's records, plural, as messages count them.
func (s Signal) records() string {
	if s == SignalTraces {
		return "spans"
	}
	return "log records"
}

// record names one of the signal's records, as messages locate it.
func (s Signal) record() string {
	if s == SignalTraces {
		return "span"
	}
	return "record"
}

// Result tells what became of the records of one request.
type Result struct {
	// Signal is what the records are: log records, or spans.
	Signal   Signal
	Accepted int // records decoded into events
	Rejected int // drift records that failed validation
	Ignored  int // records that are not drift events
	// Errors holds the first few rejections (see MaxErrors), in order.
	Errors []*RecordError
	// ByReason counts every rejection by reason: ByReason[i] those that
	// wrap Reasons[i], the last slot any other error.
	ByReason [len(Reasons) + 1]int
	// Legacy counts the uses of the names of earlier releases, indexed as
	// LegacyNames; nil when the request used none.
	Legacy []int
}

// Reasons are the rejection reasons Result.ByReason counts, in its order.
var Reasons = [...]error{
	ErrUnknownEvent, ErrMissingAttribute, ErrWrongType, ErrUnknownValue,
	ErrTooManyAttributes, ErrTooLong, ErrInvalidUTF8, ErrTimeRange, ErrNegative,
}

// reject counts one rejected record and keeps it among the first
// MaxErrors.
func (r *Result) reject(re *RecordError) {
	r.Rejected++
	i := len(Reasons)
	for j, reason := range Reasons {
		if errors.Is(re.Err, reason) {
			i = j
			break
		}
	}
	r.ByReason[i]++
	if len(r.Errors) < MaxErrors {
		r.Errors = append(r.Errors, re)
	}
}

// MaxErrors is how many rejections a Result keeps.
const MaxErrors = 5

// Message describes the rejections for the error_message of an OTLP partial
// success, such as "2 of 10 log records rejected: resource 0, scope 0,
// record 3: dev.mcpdrift.outcome: unknown value ...; ...", or "2 of 10 spans
// rejected: resource 0, scope 0, span 3: ..." for traces. It is empty when
// nothing was rejected.
func (r Result) Message() string {
	if r.Rejected == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d %s rejected", r.Rejected, r.Accepted+r.Rejected+r.Ignored, r.Signal.records())
	for i, e := range r.Errors {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(e.Error())
	}
	if more := r.Rejected - len(r.Errors); more > 0 && len(r.Errors) > 0 {
		fmt.Fprintf(&b, "; and %d more", more)
	}
	return b.String()
}

// RecordError is the rejection of one record, located in its request by
// the indexes of its resource, scope and record (log record or span).
type RecordError struct {
	Resource, Scope, Record int
	// Signal is what the record is; it names it in Error.
	Signal Signal
	Err    error
}

// Error returns the location and the reason, such as "resource 0, scope 1,
// record 3: dev.mcpdrift.outcome: unknown value ..." ("span 3" for a span).
func (e *RecordError) Error() string {
	return fmt.Sprintf("resource %d, scope %d, %s %d: %v", e.Resource, e.Scope, e.Signal.record(), e.Record, e.Err)
}

// Unwrap returns the reason, which wraps one of the Err* sentinels.
func (e *RecordError) Unwrap() error { return e.Err }

// Reasons a record is rejected. Every RecordError wraps one of them, so
// errors.Is can count rejections by reason.
var (
	// ErrUnknownEvent: a name under EventNamePrefix that is not an event.
	ErrUnknownEvent = errors.New("unknown event name")
	// ErrMissingAttribute: an attribute the event requires is absent or empty.
	ErrMissingAttribute = errors.New("missing required attribute")
	// ErrWrongType: a value of a type the attribute does not accept.
	ErrWrongType = errors.New("wrong attribute type")
	// ErrUnknownValue: an enum value outside the allowed ones.
	ErrUnknownValue = errors.New("unknown enum value")
	// ErrTooManyAttributes: over Limits.MaxAttributes.
	ErrTooManyAttributes = errors.New("too many attributes")
	// ErrTooLong: a key or value over Limits.MaxValueBytes or MaxArgsBytes.
	ErrTooLong = errors.New("value too long")
	// ErrInvalidUTF8: a key, value or event name that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrTimeRange: an event time outside Limits.MaxPast and MaxFuture.
	ErrTimeRange = errors.New("timestamp out of range")
	// ErrNegative: a negative count or duration.
	ErrNegative = errors.New("negative value")
	// ErrMalformedDefinition: a tool definition that is not a JSON object
	// of the tool it is advertised for.
	ErrMalformedDefinition = errors.New("malformed tool definition")
)

// ruleError is a rejection: a precise message and the sentinel it wraps.
type ruleError struct {
	kind error
	msg  string
}

func (e *ruleError) Error() string { return e.msg }
func (e *ruleError) Unwrap() error { return e.kind }

func fail(kind error, format string, args ...any) error {
	return &ruleError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// newState starts the state of one request's decoding, timed now.
func (d *Decoder) newState() decodeState {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	return decodeState{lim: d.Limits, now: now().UnixNano()}
}

// DecodeLogs appends the drift events found in ld to dst and returns it with
// what became of every record. dst's existing elements are left as they
// are; rejected records leave nothing in it.
//
// A record is a drift event when its EventName (or, when that is empty, its
// event.name attribute, then otel.event.name) is one of the EventName
// values. A name under EventNamePrefix that is not one of them is rejected;
// any other record is ignored. Attributes are decoded as the Registry says:
// resource attributes from the resource only, the others from the resource,
// the scope or the record, the record winning. Record attributes outside the
// conventions are kept in Event.Attributes; resource and scope attributes
// outside them are dropped unchecked.
//
// DecodeLogsProto does the same from the request's protobuf bytes.
func (d *Decoder) DecodeLogs(ld plog.Logs, dst []Event) ([]Event, Result) {
	w := walk{st: d.newState(), dst: dst}
	rls := ld.ResourceLogs()
	for ri := 0; ri < rls.Len(); ri++ {
		rl := rls.At(ri)
		resAttrs := rl.Resource().Attributes()
		w.resource(resAttrs.Len())
		sls := rl.ScopeLogs()
		for si := 0; si < sls.Len(); si++ {
			sl := sls.At(si)
			scopeAttrs := sl.Scope().Attributes()
			w.scope(scopeAttrs.Len())
			lrs := sl.LogRecords()
			for li := 0; li < lrs.Len(); li++ {
				lr := lrs.At(li)
				attrs := lr.Attributes()
				name, legacy, err := recordEvent(lr.EventName(), func(k string) (value, bool) {
					if v, ok := attrs.Get(k); ok {
						return pdataValue(v), true
					}
					return value{}, false
				})
				if name == EventUnspecified && err == nil {
					w.res.Ignored++
					continue
				}
				w.st.countLegacy(legacy)
				var e *Event
				if err == nil {
					e, err = w.event(
						func(e *Event) error { return w.st.decodeShared(e, resAttrs, true) },
						func(e *Event) error { return w.st.decodeShared(e, scopeAttrs, false) })
				}
				if err == nil {
					err = w.st.decodeRecord(e, name, lr)
				}
				w.done(ri, si, li, err)
			}
		}
	}
	return w.dst, w.result()
}

// walk is the bookkeeping that every decoder of a request shares: the
// events appended so far, the Result, and the resource and scope
// attributes, decoded once, at their first drift record, into the base of
// its events. For each resource, resource; for each scope, scope; for each
// record, Ignored++ or event, then done.
type walk struct {
	st  decodeState
	dst []Event
	res Result

	resN, scopeN       int // attributes of the resource and of the scope
	resDone, scopeDone bool
	resBase, scopeBase Event
	resErr, scopeErr   error
	appended           bool // event appended the current record's event
}

// result returns what became of the request's records.
func (w *walk) result() Result {
	w.res.Legacy = w.st.legacy
	return w.res
}

// resource starts a resource of n attributes.
func (w *walk) resource(n int) { w.resN, w.resDone = n, false }

// scope starts a scope of n attributes.
func (w *walk) scope(n int) { w.scopeN, w.scopeDone = n, false }

// event appends the event of a drift record to w.dst and returns it,
// holding the resource and scope attributes, which decodeRes and
// decodeScope decode the first time; or the error of either.
func (w *walk) event(decodeRes, decodeScope func(*Event) error) (*Event, error) {
	if !w.resDone {
		w.resBase = Event{}
		if w.resErr = decodeRes(&w.resBase); w.resErr != nil {
			w.resErr = fmt.Errorf("resource attributes: %w", w.resErr)
		}
		w.resDone = true
	}
	if !w.scopeDone {
		w.scopeBase = w.resBase
		if w.scopeErr = decodeScope(&w.scopeBase); w.scopeErr != nil {
			w.scopeErr = fmt.Errorf("scope attributes: %w", w.scopeErr)
		}
		w.scopeDone = true
	}
	switch {
	case w.resErr != nil:
		return nil, w.resErr
	case w.scopeErr != nil:
		return nil, w.scopeErr
	}
	w.dst = append(w.dst, w.scopeBase)
	w.appended = true
	w.st.shared = w.resN + w.scopeN
	return &w.dst[len(w.dst)-1], nil
}

// done ends a drift record located by its indexes: accepted when err is
// nil, otherwise rejected, its event dropped.
func (w *walk) done(ri, si, li int, err error) {
	appended := w.appended
	w.appended = false
	if err == nil {
		w.res.Accepted++
		return
	}
	if appended {
		w.dst[len(w.dst)-1] = Event{}
		w.dst = w.dst[:len(w.dst)-1]
	}
	w.res.reject(&RecordError{Resource: ri, Scope: si, Record: li, Signal: w.res.Signal, Err: err})
}

// recordEvent returns the drift event a record named name carries:
// EventUnspecified and nil for a record that is not a drift event, an error
// for an unknown name under EventNamePrefix or LegacyPrefix. An empty name
// is taken from the record's event.name attribute, then otel.event.name,
// when it is a string; attr returns the first attribute of a key. legacy is
// the index in legacyNames plus one of a name of an earlier release, 0
// otherwise.
func recordEvent(name string, attr func(k string) (value, bool)) (_ EventName, legacy int, _ error) {
	if name == "" {
		if v, ok := attr(AttrEventName); ok && v.typ == pcommon.ValueTypeStr {
			name = v.str
		}
		if name == "" {
			if v, ok := attr(AttrOtelEventName); ok && v.typ == pcommon.ValueTypeStr {
				name = v.str
			}
		}
	}
	if e, ok := ParseEventName(name); ok {
		return e, 0, nil
	}
	if i, ok := legacyEvent[name]; ok {
		return legacyNames[i].event, i + 1, nil
	}
	if !strings.HasPrefix(name, EventNamePrefix) && !strings.HasPrefix(name, LegacyPrefix) {
		return EventUnspecified, 0, nil
	}
	if !utf8.ValidString(name) {
		return EventUnspecified, 0, fail(ErrInvalidUTF8, "event name %q: invalid UTF-8", name)
	}
	return EventUnspecified, 0, fail(ErrUnknownEvent, "unknown event name %q", name)
}

// value is one OTLP AnyValue as the decoding rules read it, whichever front
// end decoded the request: pdata (DecodeLogs, DecodeTraces) or the wire
// (DecodeLogsProto). Strings are Go strings by the time the rules see them.
type value struct {
	typ pcommon.ValueType
	str string // ValueTypeStr
	num uint64 // ValueTypeInt (two's complement), ValueTypeDouble (IEEE 754 bits), ValueTypeBool (0 or 1)
	// pv is the value itself for ValueTypeBytes, ValueTypeMap and
	// ValueTypeSlice: pdata flattens it and counts its elements.
	pv pcommon.Value
}

// pdataValue returns the value of v.
func pdataValue(v pcommon.Value) value {
	switch t := v.Type(); t {
	case pcommon.ValueTypeStr:
		return value{typ: t, str: v.Str()}
	case pcommon.ValueTypeInt:
		return value{typ: t, num: uint64(v.Int())}
	case pcommon.ValueTypeDouble:
		return value{typ: t, num: math.Float64bits(v.Double())}
	case pcommon.ValueTypeBool:
		if v.Bool() {
			return value{typ: t, num: 1}
		}
		return value{typ: t}
	case pcommon.ValueTypeEmpty:
		return value{}
	default:
		return value{typ: t, pv: v}
	}
}

func (v *value) int() int64      { return int64(v.num) }
func (v *value) double() float64 { return math.Float64frombits(v.num) }
func (v *value) bool() bool      { return v.num != 0 }

// asString flattens v to a string as pcommon.Value.AsString does: maps and
// slices as JSON, bytes in base64.
func (v *value) asString() string {
	switch v.typ {
	case pcommon.ValueTypeEmpty:
		return ""
	case pcommon.ValueTypeStr:
		return v.str
	case pcommon.ValueTypeInt:
		return strconv.FormatInt(v.int(), 10)
	case pcommon.ValueTypeBool:
		return strconv.FormatBool(v.bool())
	case pcommon.ValueTypeDouble:
		return pcommon.NewValueDouble(v.double()).AsString()
	}
	return v.pv.AsString()
}

// decodeState is what one decoding call shares between records.
type decodeState struct {
	lim    Limits
	now    int64 // Unix nanoseconds
	shared int   // resource + scope attributes of the current record
	// untimed: the current record has neither a time nor an observed
	// time, and takes the time it was received.
	untimed bool
	// legacy counts the names of earlier releases read, as Result.Legacy;
	// nil until one is.
	legacy []int
}

// sharedAttr reports whether a resource or scope attribute of the
// conventions a, nil for any other key, is decoded into the event: only
// those with an Event field, and scopes skip resource attributes. The
// others are dropped unchecked.
func sharedAttr(a *Attribute, resource bool) bool {
	return a != nil && a.set != nil && (!a.Resource || resource)
}

// decodeShared decodes the convention attributes of a resource or a scope
// into e.
func (st *decodeState) decodeShared(e *Event, attrs pcommon.Map, resource bool) error {
	var err error
	attrs.Range(func(k string, v pcommon.Value) bool {
		if a, legacy := lookupAttr(k); sharedAttr(a, resource) {
			st.countLegacy(legacy)
			pv := pdataValue(v)
			err = st.setAttr(e, a, &pv)
		}
		return err == nil
	})
	return err
}

// setAttr converts v to the type of a and sets its Event field, if it has
// one.
func (st *decodeState) setAttr(e *Event, a *Attribute, v *value) error {
	dv, err := st.value(a, v)
	if err != nil {
		return err
	}
	if a.set != nil {
		a.set(e, dv)
	}
	return nil
}

// recordAttr decodes the record attribute k = v into e: an attribute of the
// conventions a into its field, any other (a nil, or a resource attribute)
// into Event.Attributes.
func (st *decodeState) recordAttr(e *Event, k string, a *Attribute, v *value) error {
	if a == nil || a.Resource {
		return st.extra(e, k, v)
	}
	return st.setAttr(e, a, v)
}

// startRecord starts the decoding of a drift record of n attributes into
// e, which holds the resource and scope attributes already: its name, its
// time (ts, else observed, else now) and its ids.
func (st *decodeState) startRecord(e *Event, name EventName, n int, ts, observed uint64, traceID [16]byte, spanID [8]byte) error {
	e.Name = name
	if total := st.shared + n; st.lim.MaxAttributes > 0 && total > st.lim.MaxAttributes {
		return fail(ErrTooManyAttributes, "too many attributes: %d (resource and scope %d, record %d) exceed MaxAttributes %d",
			total, st.shared, n, st.lim.MaxAttributes)
	}
	if ts == 0 {
		ts = observed
	}
	st.untimed = ts == 0
	if err := st.setTimeAt(e, ts); err != nil {
		return err
	}
	e.TraceID = traceID
	e.SpanID = spanID
	return nil
}

// endRecord ends the decoding of a drift record once its attributes are
// in e: it checks the required attributes and sets the ID, bodyHash being
// the xxhash64 of the record's string body ("" for any other body). A
// record without a time is identified as if its time were zero: the time
// it was received must not make each retry of it another event.
func (st *decodeState) endRecord(e *Event, bodyHash uint64) error {
	for _, a := range requiredBy[e.Name] {
		if !a.present(e) {
			return fail(ErrMissingAttribute, "%s: missing required attribute %s", e.Name, a.Name)
		}
	}
	if e.Name == EventAdvertised {
		if err := checkDefinition(e); err != nil {
			return err
		}
	}
	t := e.Time
	if st.untimed {
		e.Time = 0
	}
	e.ID = eventIDHash(e, bodyHash)
	e.Time = t
	return nil
}

// decodeRecord decodes a drift record into e, which holds the resource and
// scope attributes already.
func (st *decodeState) decodeRecord(e *Event, name EventName, lr plog.LogRecord) error {
	attrs := lr.Attributes()
	if err := st.startRecord(e, name, attrs.Len(), uint64(lr.Timestamp()), uint64(lr.ObservedTimestamp()), lr.TraceID(), lr.SpanID()); err != nil {
		return err
	}
	var err error
	attrs.Range(func(k string, v pcommon.Value) bool {
		pv := pdataValue(v)
		a, legacy := lookupAttr(k)
		st.countLegacy(legacy)
		err = st.recordAttr(e, k, a, &pv)
		return err == nil
	})
	if err != nil {
		return err
	}
	var body string
	if b := lr.Body(); b.Type() == pcommon.ValueTypeStr {
		body = b.Str()
	}
	return st.endRecord(e, xxhash.Sum64String(body))
}

// setTimeAt sets e.Time to ts, in Unix nanoseconds, or to now when ts is 0,
// and checks it against the limits.
func (st *decodeState) setTimeAt(e *Event, ts uint64) error {
	if ts == 0 {
		e.Time = st.now
		return nil
	}
	if ts > math.MaxInt64 {
		return fail(ErrTimeRange, "timestamp %d ns is past the year 2262", ts)
	}
	t := int64(ts)
	if st.lim.MaxPast > 0 && t < st.now-int64(st.lim.MaxPast) {
		return fail(ErrTimeRange, "timestamp %s is older than MaxPast %s before now (%s)",
			rfc3339(t), st.lim.MaxPast, rfc3339(st.now))
	}
	if st.lim.MaxFuture > 0 && t > st.now+int64(st.lim.MaxFuture) {
		return fail(ErrTimeRange, "timestamp %s is more than MaxFuture %s after now (%s)",
			rfc3339(t), st.lim.MaxFuture, rfc3339(st.now))
	}
	e.Time = t
	return nil
}

func rfc3339(ns int64) string { return time.Unix(0, ns).UTC().Format(time.RFC3339Nano) }

// extra keeps a record attribute outside the conventions, flattened to a
// string, in e.Attributes, which it creates on first use.
func (st *decodeState) extra(e *Event, k string, v *value) error {
	return st.extraString(e, k, v.asString())
}

// extraString keeps the attribute k = s as extra does.
func (st *decodeState) extraString(e *Event, k, s string) error {
	if !utf8.ValidString(k) {
		return fail(ErrInvalidUTF8, "attribute key %q: invalid UTF-8", k)
	}
	if max := st.lim.MaxValueBytes; max > 0 && len(k) > max {
		return fail(ErrTooLong, "attribute key of %d bytes exceeds MaxValueBytes %d", len(k), max)
	}
	if max := st.lim.MaxValueBytes; max > 0 && len(s) > max {
		return fail(ErrTooLong, "%s: value of %d bytes exceeds MaxValueBytes %d", k, len(s), max)
	}
	if !utf8.ValidString(s) {
		return fail(ErrInvalidUTF8, "%s: invalid UTF-8 in value", k)
	}
	if e.Attributes == nil {
		e.Attributes = make(map[string]string)
	}
	e.Attributes[k] = s
	return nil
}

// value converts v to the type of a, or says precisely why it cannot.
// intValue reads an integer: an int, a decimal string or a whole double.
func intValue(v *value) (int64, bool) {
	switch v.typ {
	case pcommon.ValueTypeInt:
		return v.int(), true
	case pcommon.ValueTypeStr:
		return parseDecimal(v.str)
	case pcommon.ValueTypeDouble:
		if f := v.double(); f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
			return int64(f), true
		}
	}
	return 0, false
}

func (st *decodeState) value(a *Attribute, v *value) (decoded, error) {
	vt := v.typ
	switch a.Type {
	case TypeString:
		switch vt {
		case pcommon.ValueTypeStr:
			if err := st.checkString(a, v.str); err != nil {
				return decoded{}, err
			}
			return decoded{s: v.str}, nil
		case pcommon.ValueTypeInt:
			return decoded{s: strconv.FormatInt(v.int(), 10)}, nil
		}
	case TypeInt:
		i, ok := intValue(v)
		if !ok {
			break
		}
		// Every integer of the conventions is a count or a duration.
		if i < 0 {
			return decoded{}, fail(ErrNegative, "%s: %d is negative: want a count or duration, 0 or more", a.Name, i)
		}
		return decoded{i: i}, nil
	case TypeBool:
		switch vt {
		case pcommon.ValueTypeBool:
			return decoded{b: v.bool()}, nil
		case pcommon.ValueTypeStr:
			switch v.str {
			case "true":
				return decoded{b: true}, nil
			case "false":
				return decoded{b: false}, nil
			}
		}
	case TypeEnum:
		if vt == pcommon.ValueTypeStr {
			for i, w := range a.Values {
				if w == v.str {
					return decoded{i: int64(i + 1)}, nil
				}
			}
			return decoded{}, fail(ErrUnknownValue, "%s: unknown value %s (want one of %s)", a.Name, quote(v.str), a.valuesList())
		}
	case TypeTimestamp:
		switch vt {
		case pcommon.ValueTypeInt:
			return decoded{i: v.int()}, nil
		case pcommon.ValueTypeStr:
			if t, err := time.Parse(time.RFC3339, v.str); err == nil {
				return decoded{i: t.Unix()}, nil
			}
			return decoded{}, fail(ErrWrongType, "%s: want RFC 3339 timestamp, got string %s", a.Name, quote(v.str))
		}
	}
	return decoded{}, fail(ErrWrongType, "%s: want %s, got %s", a.Name, wantOf(a.Type), describe(v))
}

// checkString applies the length and UTF-8 rules to a string value of a.
func (st *decodeState) checkString(a *Attribute, s string) error {
	max, limit := st.lim.MaxValueBytes, "MaxValueBytes"
	if a.args {
		max, limit = st.lim.MaxArgsBytes, "MaxArgsBytes"
	} else if a.def {
		max, limit = st.lim.MaxDefinitionBytes, "MaxDefinitionBytes"
	}
	if max > 0 && len(s) > max {
		return fail(ErrTooLong, "%s: value of %d bytes exceeds %s %d", a.Name, len(s), limit, max)
	}
	if !utf8.ValidString(s) {
		return fail(ErrInvalidUTF8, "%s: invalid UTF-8 in value", a.Name)
	}
	return nil
}

// parseDecimal parses an optionally signed string of base-10 digits.
func parseDecimal(s string) (int64, bool) {
	if s == "" || len(s) > 20 {
		return 0, false
	}
	i, err := strconv.ParseInt(s, 10, 64)
	return i, err == nil
}

// wantOf names what a type accepts, for messages.
func wantOf(t Type) string {
	switch t {
	case TypeEnum:
		return "string"
	case TypeTimestamp:
		return "RFC 3339 string or int Unix seconds"
	}
	return t.String()
}

// describe names the type and value of v for messages, keeping them short.
func describe(v *value) string {
	switch v.typ {
	case pcommon.ValueTypeStr:
		return "string " + quote(v.str)
	case pcommon.ValueTypeInt:
		return "int " + strconv.FormatInt(v.int(), 10)
	case pcommon.ValueTypeDouble:
		return "double " + strconv.FormatFloat(v.double(), 'g', -1, 64)
	case pcommon.ValueTypeBool:
		return "bool " + strconv.FormatBool(v.bool())
	case pcommon.ValueTypeBytes:
		return fmt.Sprintf("bytes (%d bytes)", v.pv.Bytes().Len())
	case pcommon.ValueTypeMap:
		return fmt.Sprintf("map (%d entries)", v.pv.Map().Len())
	case pcommon.ValueTypeSlice:
		return fmt.Sprintf("slice (%d elements)", v.pv.Slice().Len())
	}
	return "empty value"
}

// quoteMax is the longest value a message quotes whole.
const quoteMax = 64

// quote quotes s for a message, shortened to quoteMax bytes.
func quote(s string) string {
	if len(s) <= quoteMax {
		return strconv.Quote(s)
	}
	cut := quoteMax
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// eventID hashes the identifying content of e with xxhash64. It hashes
// these fields in this order, integers as 8 little-endian bytes and strings
// as their length then their bytes: name, time, trace id, span id, service,
// service instance, session id, run id, request id, tool, retry attempt,
// outcome, repair action, adapter id, then the xxhash64 of the body. The
// same record therefore gets the same ID whenever it is sent; changing this
// function changes the ID of every event, so TestEventIDStable pins it.
func eventID(e *Event, body string) uint64 { return eventIDHash(e, xxhash.Sum64String(body)) }

// eventIDHash is eventID given the xxhash64 of the body.
func eventIDHash(e *Event, bodyHash uint64) uint64 {
	var buf [256]byte
	b := buf[:0]
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Name))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Time))
	b = append(b, e.TraceID[:]...)
	b = append(b, e.SpanID[:]...)
	b = appendString(b, e.Service)
	b = appendString(b, e.ServiceInstance)
	b = appendString(b, e.SessionID)
	b = appendString(b, e.RunID)
	b = appendString(b, e.RequestID)
	b = appendString(b, e.Tool)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.RetryAttempt))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Outcome))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.RepairAction))
	b = appendString(b, e.AdapterID)
	b = binary.LittleEndian.AppendUint64(b, bodyHash)
	return xxhash.Sum64(b)
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}
