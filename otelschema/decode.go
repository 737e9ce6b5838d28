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
	// MaxArgsBytes is the longest mcp.drift.args.raw / .normalized value.
	MaxArgsBytes int
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
		MaxPast:       30 * 24 * time.Hour,
		MaxFuture:     time.Hour,
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
}

// Reasons are the rejection reasons Result.ByReason counts, in its order.
var Reasons = [...]error{
	ErrUnknownEvent, ErrMissingAttribute, ErrWrongType, ErrUnknownValue,
	ErrTooManyAttributes, ErrTooLong, ErrInvalidUTF8, ErrTimeRange,
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
// record 3: mcp.drift.outcome: unknown value ...; ...", or "2 of 10 spans
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
// record 3: mcp.drift.outcome: unknown value ..." ("span 3" for a span).
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
func (d *Decoder) DecodeLogs(ld plog.Logs, dst []Event) ([]Event, Result) {
	var res Result
	st := d.newState()
	var resBase, scopeBase Event
	rls := ld.ResourceLogs()
	for ri := 0; ri < rls.Len(); ri++ {
		rl := rls.At(ri)
		resAttrs := rl.Resource().Attributes()
		resDone := false
		var resErr error
		sls := rl.ScopeLogs()
		for si := 0; si < sls.Len(); si++ {
			sl := sls.At(si)
			scopeAttrs := sl.Scope().Attributes()
			scopeDone := false
			var scopeErr error
			lrs := sl.LogRecords()
			for li := 0; li < lrs.Len(); li++ {
				lr := lrs.At(li)
				name, err := recordEvent(lr)
				if name == EventUnspecified && err == nil {
					res.Ignored++
					continue
				}
				if err == nil {
					// Resource and scope are decoded once, at their first
					// drift record.
					if !resDone {
						resBase = Event{}
						resErr = st.decodeShared(&resBase, resAttrs, true)
						if resErr != nil {
							resErr = fmt.Errorf("resource attributes: %w", resErr)
						}
						resDone = true
					}
					if !scopeDone {
						scopeBase = resBase
						scopeErr = st.decodeShared(&scopeBase, scopeAttrs, false)
						if scopeErr != nil {
							scopeErr = fmt.Errorf("scope attributes: %w", scopeErr)
						}
						scopeDone = true
					}
					switch {
					case resErr != nil:
						err = resErr
					case scopeErr != nil:
						err = scopeErr
					default:
						dst = append(dst, scopeBase)
						e := &dst[len(dst)-1]
						st.shared = resAttrs.Len() + scopeAttrs.Len()
						if err = st.decodeRecord(e, name, lr); err != nil {
							*e = Event{}
							dst = dst[:len(dst)-1]
						}
					}
				}
				if err != nil {
					res.reject(&RecordError{Resource: ri, Scope: si, Record: li, Err: err})
					continue
				}
				res.Accepted++
			}
		}
	}
	return dst, res
}

// recordEvent returns the drift event a record carries: EventUnspecified and
// nil for a record that is not a drift event, an error for an unknown name
// under EventNamePrefix.
func recordEvent(lr plog.LogRecord) (EventName, error) {
	name := lr.EventName()
	if name == "" {
		attrs := lr.Attributes()
		if v, ok := attrs.Get(AttrEventName); ok && v.Type() == pcommon.ValueTypeStr {
			name = v.Str()
		}
		if name == "" {
			if v, ok := attrs.Get(AttrOtelEventName); ok && v.Type() == pcommon.ValueTypeStr {
				name = v.Str()
			}
		}
	}
	if e, ok := ParseEventName(name); ok {
		return e, nil
	}
	if !strings.HasPrefix(name, EventNamePrefix) {
		return EventUnspecified, nil
	}
	if !utf8.ValidString(name) {
		return EventUnspecified, fail(ErrInvalidUTF8, "event name %q: invalid UTF-8", name)
	}
	return EventUnspecified, fail(ErrUnknownEvent, "unknown event name %q", name)
}

// decodeState is what one DecodeLogs call shares between records.
type decodeState struct {
	lim    Limits
	now    int64 // Unix nanoseconds
	shared int   // resource + scope attributes of the current record
}

// decodeShared decodes the convention attributes of a resource or a scope
// into e. Scopes skip resource attributes.
func (st *decodeState) decodeShared(e *Event, attrs pcommon.Map, resource bool) error {
	var err error
	attrs.Range(func(k string, v pcommon.Value) bool {
		a := attrByName[k]
		if a == nil || a.set == nil || (a.Resource && !resource) {
			return true
		}
		var dv decoded
		if dv, err = st.value(a, v); err != nil {
			return false
		}
		a.set(e, dv)
		return true
	})
	return err
}

// decodeRecord decodes a drift record into e, which holds the resource and
// scope attributes already.
func (st *decodeState) decodeRecord(e *Event, name EventName, lr plog.LogRecord) error {
	e.Name = name
	attrs := lr.Attributes()
	if n := st.shared + attrs.Len(); st.lim.MaxAttributes > 0 && n > st.lim.MaxAttributes {
		return fail(ErrTooManyAttributes, "too many attributes: %d (resource and scope %d, record %d) exceed MaxAttributes %d",
			n, st.shared, attrs.Len(), st.lim.MaxAttributes)
	}
	if err := st.setTime(e, lr); err != nil {
		return err
	}
	e.TraceID = lr.TraceID()
	e.SpanID = lr.SpanID()

	var err error
	attrs.Range(func(k string, v pcommon.Value) bool {
		a := attrByName[k]
		if a == nil || a.Resource {
			err = st.extra(e, k, v)
			return err == nil
		}
		var dv decoded
		if dv, err = st.value(a, v); err != nil {
			return false
		}
		if a.set != nil {
			a.set(e, dv)
		}
		return true
	})
	if err != nil {
		return err
	}
	for _, a := range requiredBy[name] {
		if !a.present(e) {
			return fail(ErrMissingAttribute, "%s: missing required attribute %s", name, a.Name)
		}
	}
	var body string
	if b := lr.Body(); b.Type() == pcommon.ValueTypeStr {
		body = b.Str()
	}
	e.ID = eventID(e, body)
	return nil
}

// setTime sets e.Time from the record, or now, and checks it against the
// limits.
func (st *decodeState) setTime(e *Event, lr plog.LogRecord) error {
	ts := uint64(lr.Timestamp())
	if ts == 0 {
		ts = uint64(lr.ObservedTimestamp())
	}
	return st.setTimeAt(e, ts)
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
func (st *decodeState) extra(e *Event, k string, v pcommon.Value) error {
	return st.extraString(e, k, v.AsString())
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
func (st *decodeState) value(a *Attribute, v pcommon.Value) (decoded, error) {
	vt := v.Type()
	switch a.Type {
	case TypeString:
		switch vt {
		case pcommon.ValueTypeStr:
			s := v.Str()
			if err := st.checkString(a, s); err != nil {
				return decoded{}, err
			}
			return decoded{s: s}, nil
		case pcommon.ValueTypeInt:
			return decoded{s: strconv.FormatInt(v.Int(), 10)}, nil
		}
	case TypeInt:
		switch vt {
		case pcommon.ValueTypeInt:
			return decoded{i: v.Int()}, nil
		case pcommon.ValueTypeStr:
			if i, ok := parseDecimal(v.Str()); ok {
				return decoded{i: i}, nil
			}
		case pcommon.ValueTypeDouble:
			if f := v.Double(); f == math.Trunc(f) && f >= -(1<<63) && f < 1<<63 {
				return decoded{i: int64(f)}, nil
			}
		}
	case TypeBool:
		switch vt {
		case pcommon.ValueTypeBool:
			return decoded{b: v.Bool()}, nil
		case pcommon.ValueTypeStr:
			switch v.Str() {
			case "true":
				return decoded{b: true}, nil
			case "false":
				return decoded{b: false}, nil
			}
		}
	case TypeEnum:
		if vt == pcommon.ValueTypeStr {
			s := v.Str()
			for i, w := range a.Values {
				if w == s {
					return decoded{i: int64(i + 1)}, nil
				}
			}
			return decoded{}, fail(ErrUnknownValue, "%s: unknown value %s (want one of %s)", a.Name, quote(s), a.valuesList())
		}
	case TypeTimestamp:
		switch vt {
		case pcommon.ValueTypeInt:
			return decoded{i: v.Int()}, nil
		case pcommon.ValueTypeStr:
			if t, err := time.Parse(time.RFC3339, v.Str()); err == nil {
				return decoded{i: t.Unix()}, nil
			}
			return decoded{}, fail(ErrWrongType, "%s: want RFC 3339 timestamp, got string %s", a.Name, quote(v.Str()))
		}
	}
	return decoded{}, fail(ErrWrongType, "%s: want %s, got %s", a.Name, wantOf(a.Type), describe(v))
}

// checkString applies the length and UTF-8 rules to a string value of a.
func (st *decodeState) checkString(a *Attribute, s string) error {
	max, limit := st.lim.MaxValueBytes, "MaxValueBytes"
	if maxArgs[a.Name] {
		max, limit = st.lim.MaxArgsBytes, "MaxArgsBytes"
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
func describe(v pcommon.Value) string {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		return "string " + quote(v.Str())
	case pcommon.ValueTypeInt:
		return "int " + strconv.FormatInt(v.Int(), 10)
	case pcommon.ValueTypeDouble:
		return "double " + strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case pcommon.ValueTypeBool:
		return "bool " + strconv.FormatBool(v.Bool())
	case pcommon.ValueTypeBytes:
		return fmt.Sprintf("bytes (%d bytes)", v.Bytes().Len())
	case pcommon.ValueTypeMap:
		return fmt.Sprintf("map (%d entries)", v.Map().Len())
	case pcommon.ValueTypeSlice:
		return fmt.Sprintf("slice (%d elements)", v.Slice().Len())
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
func eventID(e *Event, body string) uint64 {
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
	b = binary.LittleEndian.AppendUint64(b, xxhash.Sum64String(body))
	return xxhash.Sum64(b)
}

func appendString(b []byte, s string) []byte {
	b = binary.LittleEndian.AppendUint64(b, uint64(len(s)))
	return append(b, s...)
}
