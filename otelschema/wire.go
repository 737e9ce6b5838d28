package otelschema

import (
	"hash/maphash"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/protobuf/encoding/protowire"
)

// DecodeLogsProto is DecodeLogs for the protobuf bytes of an OTLP
// ExportLogsServiceRequest: it appends the same events to dst and returns
// the same Result as decoding b with plogotlp.ExportRequest.UnmarshalProto
// then DecodeLogs would, without building pdata's tree of the request. It
// reads what DecodeLogs reads and checks the rest of b as pdata does, so
// that it refuses the bytes pdata refuses (see wireproto.go), with an error
// and dst as it was.
//
// The events' strings are copies: nothing in them refers to b, which the
// caller may reuse once DecodeLogsProto returns. Small values that repeat
// from record to record (names, tools, revisions, attribute keys) are
// shared between events rather than copied each time, and short values
// that do not repeat (request ids, arguments) are copied into blocks that
// several events share.
func (d *Decoder) DecodeLogsProto(b []byte, dst []Event) ([]Event, Result, error) {
	x := wireDecoders.Get().(*wireDecoder)
	defer x.release()
	n := len(dst)
	x.w = walk{st: d.newState(), dst: dst}
	x.call++
	if err := x.request(b); err != nil {
		clear(x.w.dst[n:])
		return dst[:n], Result{}, err
	}
	return x.w.dst, x.w.result(), nil
}

// wireDecoders holds the state of DecodeLogsProto calls between them, so
// that its buffers and its strtab serve the next call; a Decoder shared by
// concurrent requests thus shares nothing mutable.
var wireDecoders = sync.Pool{New: func() any { return &wireDecoder{strs: strtab{seed: maphash.MakeSeed()}} }}

// wireDecoder is the state of one DecodeLogsProto call.
type wireDecoder struct {
	w    walk
	strs strtab
	// The attributes of the current resource and scope, and the current
	// record, as read from the request: they refer to its bytes.
	resAttrs, scopeAttrs []wireAttr
	rec                  wireRecord
	// next holds, for each attribute of the conventions, by its index in
	// registry, the key read last after it in a record; next[firstKey] the
	// first key of a record, next[otherKey] the key after one outside the
	// conventions. The records of a request mostly carry the same keys in
	// the same order.
	next [otherKey + 1]wireKey
	// vals holds, for each attribute of the conventions, the string value
	// read last, and what it decoded into: many repeat from record to
	// record.
	vals [len(registry)]lastValue
	// block is where copied cuts its strings from.
	block []byte
	// call numbers the DecodeLogsProto calls that used x, from 1: what a
	// lastValue or a strSlot says a value decoded into holds for the call
	// that decoded it, whose Decoder's limits it passed.
	call uint64
}

// The wireKey ids past the conventions' attributes.
const (
	firstKey = len(registry) // before the first attribute of a record
	otherKey = firstKey + 1  // an attribute outside the conventions
)

// lastValue is a string value of an attribute of the conventions, read
// from the wire, and, when call is not 0, what it decoded into in that
// call: it passed the attribute's rules, and the attribute has an Event
// field.
type lastValue struct {
	val  string
	dec  decoded
	call uint64
}

// release drops every reference to the request and the events, and puts x
// back in the pool, without the buffers a hostile request made too large.
func (x *wireDecoder) release() {
	x.resAttrs = reuse(x.resAttrs)
	x.scopeAttrs = reuse(x.scopeAttrs)
	x.rec = wireRecord{attrs: reuse(x.rec.attrs)}
	x.w = walk{}
	wireDecoders.Put(x)
}

// maxPooledAttrs bounds the attributes buffers kept for the next call.
const maxPooledAttrs = 1 << 10

// reuse returns attrs emptied and cleared for the next call, or nil when it
// is too large to keep.
func reuse(attrs []wireAttr) []wireAttr {
	if cap(attrs) > maxPooledAttrs {
		return nil
	}
	clear(attrs[:cap(attrs)])
	return attrs[:0]
}

// wireAttr is an attribute (a KeyValue) as read from the wire.
type wireAttr struct {
	key []byte
	val wireValue
}

// wireValue is an AnyValue as read from the wire: raw holds a string's
// bytes, a bytes value, or the ArrayValue or KeyValueList message.
type wireValue struct {
	typ pcommon.ValueType
	raw []byte
	num uint64 // as value.num
}

// wireRecord is what DecodeLogs reads of a LogRecord.
type wireRecord struct {
	time, observed uint64
	traceID        [16]byte
	spanID         [8]byte
	name           []byte // EventName
	body           wireValue
	attrs          []wireAttr
}

// request decodes an ExportLogsServiceRequest.
func (x *wireDecoder) request(b []byte) error {
	ri := 0
	f := fields{b: b}
	for f.next() {
		if f.num != 1 {
			f.skip()
			continue
		}
		if m, ok := f.bytes("ResourceLogs"); ok {
			f.check(x.resourceLogs(m, ri))
			ri++
		}
	}
	return f.err
}

// resourceLogs decodes the ResourceLogs ri. Its resource may follow its
// scopes, and may come in several parts, which pdata merges: a first pass
// reads the resource and checks the fields, a second decodes the scopes.
// As pdata, it decodes the deprecated instrumentation_library_logs (field
// 1000) in place of scope_logs when there are none, and checks them
// otherwise.
func (x *wireDecoder) resourceLogs(b []byte, ri int) error {
	x.resAttrs = x.resAttrs[:0]
	scopes := 0
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			if m, ok := f.bytes("Resource"); ok {
				f.check(x.resource(m))
			}
		case 2:
			if _, ok := f.bytes("ScopeLogs"); ok {
				scopes++
			}
		case 3:
			f.bytes("SchemaUrl")
		case 1000:
			f.bytes("DeprecatedScopeLogs")
		default:
			f.skip()
		}
	}
	if f.err != nil {
		return f.err
	}
	x.w.resource(len(x.resAttrs))
	si := 0
	f = fields{b: b}
	for f.next() {
		switch f.num {
		case 2, 1000:
			m, _ := f.bytes("ScopeLogs")
			if f.num == 1000 && scopes > 0 {
				f.check(x.scopeLogs(m, ri, -1))
				continue
			}
			f.check(x.scopeLogs(m, ri, si))
			si++
		default:
			f.skip()
		}
	}
	return f.err
}

// resource reads a Resource's attributes into x.resAttrs, after those of
// its earlier parts.
func (x *wireDecoder) resource(b []byte) error {
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			if m, ok := f.bytes("Attributes"); ok {
				x.resAttrs = append(x.resAttrs, wireAttr{})
				f.check(readKeyValue(m, 0, &x.resAttrs[len(x.resAttrs)-1]))
			}
		case 2:
			f.varint("DroppedAttributesCount")
		case 3:
			if m, ok := f.bytes("EntityRefs"); ok {
				f.check(checkEntityRef(m))
			}
		default:
			f.skip()
		}
	}
	return f.err
}

// scopeLogs decodes the ScopeLogs si of the resource ri; with si -1 it
// only checks them. Its scope may follow its records, hence two passes as
// in resourceLogs.
func (x *wireDecoder) scopeLogs(b []byte, ri, si int) error {
	x.scopeAttrs = x.scopeAttrs[:0]
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			if m, ok := f.bytes("Scope"); ok {
				f.check(x.scope(m))
			}
		case 2:
			f.bytes("LogRecords")
		case 3:
			f.bytes("SchemaUrl")
		default:
			f.skip()
		}
	}
	if f.err != nil {
		return f.err
	}
	if si >= 0 {
		x.w.scope(len(x.scopeAttrs))
	}
	li := 0
	f = fields{b: b}
	for f.next() {
		if f.num != 2 {
			f.skip()
			continue
		}
		m, _ := f.bytes("LogRecords")
		f.check(x.rec.read(m))
		if f.err == nil && si >= 0 {
			x.record(ri, si, li)
		}
		li++
	}
	return f.err
}

// scope reads an InstrumentationScope's attributes into x.scopeAttrs,
// after those of its earlier parts.
func (x *wireDecoder) scope(b []byte) error {
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			f.bytes("Name")
		case 2:
			f.bytes("Version")
		case 3:
			if m, ok := f.bytes("Attributes"); ok {
				x.scopeAttrs = append(x.scopeAttrs, wireAttr{})
				f.check(readKeyValue(m, 0, &x.scopeAttrs[len(x.scopeAttrs)-1]))
			}
		case 4:
			f.varint("DroppedAttributesCount")
		default:
			f.skip()
		}
	}
	return f.err
}

// read reads a LogRecord into r. Repeated fields merge as pdata merges
// them: the last scalar wins, attributes add up, the body is the last
// value set.
func (r *wireRecord) read(b []byte) error {
	*r = wireRecord{attrs: r.attrs[:0]}
	f := fields{b: b}
	for {
		// Attributes first, the most frequent fields, read as the case 6
		// below reads them.
		if p := f.pos; p < len(b) && b[p] == tagAttributes && f.err == nil {
			if start, end, err := consumeLen(b, p+1); err == nil {
				f.pos = end
				r.attrs = append(r.attrs, wireAttr{})
				kv, m := &r.attrs[len(r.attrs)-1], b[start:end:end]
				if !readKeyValueFast(m, kv) {
					f.check(readKeyValue(m, 0, kv))
				}
				continue
			}
		}
		if !f.next() {
			break
		}
		switch f.num {
		case 1:
			r.time, _ = f.fixed64("TimeUnixNano")
		case 11:
			r.observed, _ = f.fixed64("ObservedTimeUnixNano")
		case 2:
			f.varint("SeverityNumber")
		case 3:
			f.bytes("SeverityText")
		case 5:
			if m, ok := f.bytes("Body"); ok {
				f.check(readAnyValue(m, 0, &r.body))
			}
		case 6:
			if m, ok := f.bytes("Attributes"); ok {
				r.attrs = append(r.attrs, wireAttr{})
				f.check(readKeyValue(m, 0, &r.attrs[len(r.attrs)-1]))
			}
		case 7:
			f.varint("DroppedAttributesCount")
		case 8:
			f.fixed32("Flags")
		case 9:
			if m, ok := f.bytes("TraceId"); ok {
				f.check(readID(r.traceID[:], m, errTraceID))
			}
		case 10:
			if m, ok := f.bytes("SpanId"); ok {
				f.check(readID(r.spanID[:], m, errSpanID))
			}
		case 12:
			if m, ok := f.bytes("EventName"); ok {
				r.name = m
			}
		default:
			f.skip()
		}
	}
	return f.err
}

// tagAttributes is the tag of LogRecord.attributes.
const tagAttributes = 6<<3 | byte(protowire.BytesType)

// record decodes the record x.rec, the record li of the scope si of the
// resource ri, as DecodeLogs does.
func (x *wireDecoder) record(ri, si, li int) {
	name, legacy, err := recordEvent(x.strs.get(x.rec.name), x.recordAttr)
	if name == EventUnspecified && err == nil {
		x.w.res.Ignored++
		return
	}
	x.w.st.countLegacy(legacy)
	var e *Event
	if err == nil {
		e, err = x.w.event(x.decodeResource, x.decodeScope)
	}
	if err == nil {
		err = x.decodeRecord(e, name)
	}
	x.w.done(ri, si, li, err)
}

// recordAttr returns the first attribute of the current record called k.
func (x *wireDecoder) recordAttr(k string) (value, bool) {
	for i := range x.rec.attrs {
		if a := &x.rec.attrs[i]; string(a.key) == k {
			return x.value(&a.val, true), true
		}
	}
	return value{}, false
}

func (x *wireDecoder) decodeResource(e *Event) error { return x.decodeShared(e, x.resAttrs, true) }
func (x *wireDecoder) decodeScope(e *Event) error    { return x.decodeShared(e, x.scopeAttrs, false) }

// decodeShared is decodeState.decodeShared for attributes read from the
// wire.
func (x *wireDecoder) decodeShared(e *Event, attrs []wireAttr, resource bool) error {
	for i := range attrs {
		k, _ := conventionKey(attrs[i].key)
		if !sharedAttr(k.attr, resource) {
			continue
		}
		x.w.st.countLegacy(k.legacy)
		v := x.value(&attrs[i].val, k.intern)
		if err := x.w.st.setAttr(e, k.attr, &v); err != nil {
			return err
		}
	}
	return nil
}

// decodeRecord is decodeState.decodeRecord for the record x.rec.
func (x *wireDecoder) decodeRecord(e *Event, name EventName) error {
	r, st := &x.rec, &x.w.st
	if err := st.startRecord(e, name, len(r.attrs), r.time, r.observed, r.traceID, r.spanID); err != nil {
		return err
	}
	prev := firstKey
	for i := range r.attrs {
		if err := x.decodeAttr(e, &prev, &r.attrs[i]); err != nil {
			return err
		}
	}
	bodyHash := emptyBodyHash
	if r.body.typ == pcommon.ValueTypeStr {
		bodyHash = xxhash.Sum64(r.body.raw)
	}
	return st.endRecord(e, bodyHash)
}

// decodeAttr is decodeState.recordAttr for a, a record attribute read
// after the key whose id is *prev, which it then sets to a's. Its key is
// resolved with the help of x.next, its value with that of x.vals, then
// x.strs: a string value of the conventions that an attribute decoded
// last, or that the strtab slot of the value last saw decoded for it, in
// this call, decodes as it did then.
func (x *wireDecoder) decodeAttr(e *Event, prev *int, a *wireAttr) error {
	k := &x.next[*prev]
	if k.name != string(a.key) || k.name == "" {
		w, ok := conventionKey(a.key)
		if !ok {
			w = wireKey{name: x.strs.get(a.key), intern: true, id: otherKey}
		}
		*k = w
	}
	*prev = k.id
	st := &x.w.st
	st.countLegacy(k.legacy)
	if a.val.typ != pcommon.ValueTypeStr || !k.intern || k.attr == nil {
		v := x.value(&a.val, k.intern)
		return st.recordAttr(e, k.name, k.attr, &v)
	}
	last := &x.vals[k.id]
	var slot *strSlot
	if raw := a.val.raw; last.val != string(raw) {
		*last = lastValue{}
		switch {
		case len(raw) > internMax:
			last.val = string(raw)
		case len(raw) > 0:
			slot = x.strs.slot(raw)
			last.val = slot.s
			if slot.call == x.call && slot.id == k.id {
				last.dec, last.call = slot.dec, x.call
			}
		}
	}
	if last.call == x.call {
		k.attr.set(e, last.dec)
		return nil
	}
	v := value{typ: pcommon.ValueTypeStr, str: last.val}
	if k.attr.Resource {
		return st.extra(e, k.name, &v)
	}
	dv, err := st.value(k.attr, &v)
	if err != nil {
		return err
	}
	if k.attr.set != nil {
		k.attr.set(e, dv)
		last.dec, last.call = dv, x.call
		if slot != nil {
			slot.id, slot.dec, slot.call = k.id, dv, x.call
		}
	}
	return nil
}

// copied returns a copy of b. Copies of up to copyMax bytes are cut from
// blocks of copyBlock bytes, each allocated once the last is full: the
// values that are not interned then cost a fraction of an allocation each,
// and a block stays in memory as long as one of its strings does. The
// bytes of a block up to its length are never written again, so strings
// cut from it stay valid when x serves later calls.
func (x *wireDecoder) copied(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > copyMax {
		return string(b)
	}
	if len(x.block)+len(b) > cap(x.block) {
		x.block = make([]byte, 0, copyBlock)
	}
	start := len(x.block)
	x.block = append(x.block, b...)
	return unsafe.String(&x.block[start], len(b))
}

const (
	// copyBlock is the size of the blocks copied cuts strings from.
	copyBlock = 4 << 10
	// copyMax is the longest string copied cuts from a block: a longer
	// one has its own allocation, so that it does not keep a block alive,
	// nor a block it.
	copyMax = 256
)

// emptyBodyHash is the xxhash64 of an empty body.
var emptyBodyHash = xxhash.Sum64(nil)

// value returns v for the decoding rules, its string interned or copied.
func (x *wireDecoder) value(v *wireValue, intern bool) value {
	switch v.typ {
	case pcommon.ValueTypeStr:
		if intern {
			return value{typ: v.typ, str: x.strs.get(v.raw)}
		}
		return value{typ: v.typ, str: x.copied(v.raw)}
	case pcommon.ValueTypeBytes, pcommon.ValueTypeMap, pcommon.ValueTypeSlice:
		return value{typ: v.typ, pv: pdataOf(v)}
	}
	return value{typ: v.typ, num: v.num}
}

// pdataOf returns a bytes, map or slice value read from the wire as pdata
// decodes it: their flattening to a string and their sizes in messages are
// pdata's own. They are rare in drift records, so the simplest exact way
// pays: v's bytes wrapped into a request of one resource attribute, which
// pdata decodes.
func pdataOf(v *wireValue) pcommon.Value {
	field := protowire.Number(7) // AnyValue.bytes_value
	switch v.typ {
	case pcommon.ValueTypeSlice:
		field = 5 // array_value
	case pcommon.ValueTypeMap:
		field = 6 // kvlist_value
	}
	m := protowire.AppendBytes(protowire.AppendTag(nil, field, protowire.BytesType), v.raw)
	// KeyValue.value, Resource.attributes, ResourceLogs.resource,
	// ExportLogsServiceRequest.resource_logs.
	for _, n := range [...]protowire.Number{2, 1, 1, 1} {
		m = protowire.AppendBytes(protowire.AppendTag(nil, n, protowire.BytesType), m)
	}
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(m); err != nil {
		// v was read as pdata reads it, at the same depth: this cannot be.
		panic("otelschema: pdata refuses a value it accepted: " + err.Error())
	}
	pv, _ := req.Logs().ResourceLogs().At(0).Resource().Attributes().Get("")
	return pv
}

// wireKey is what an attribute key read from the wire is: an attribute of
// the conventions, its index in registry as id, or not (attr nil, id
// otherKey), and whether its string values are interned.
type wireKey struct {
	name   string
	attr   *Attribute
	id     int
	intern bool
	// legacy is, for a name of an earlier release, its index in
	// legacyNames plus one; 0 for a current name.
	legacy int
}

// uninterned lists the attributes whose values are unique to a call, or
// nearly: interning them would only evict the values that repeat.
var uninterned = map[string]bool{
	AttrRequestID: true, AttrRetryOf: true, AttrIdempotencyKey: true,
	AttrArgsRaw: true, AttrArgsNormalized: true,
}

// conventionKey returns the wireKey of the conventions' attribute named k,
// if there is one.
func conventionKey(k []byte) (wireKey, bool) {
	for _, w := range wireKeys[keySlot(k)] {
		if w.name == string(k) {
			return w, true
		}
	}
	return wireKey{}, false
}

// wireKeys holds the wireKey of every attribute of the conventions, in the
// slot keySlot gives its name: a lookup costs a few bytes' arithmetic and
// about one comparison, less than a map's hash of the whole key.
var wireKeys = func() (t [keySlots][]wireKey) {
	for i := range registry {
		a := &registry[i]
		s := keySlot([]byte(a.Name))
		t[s] = append(t[s], wireKey{name: a.Name, attr: a, id: i, intern: !uninterned[a.Name]})
	}
	for li, l := range legacyNames {
		if l.event != EventUnspecified {
			continue
		}
		for i := range registry {
			if a := &registry[i]; a.Name == l.now {
				s := keySlot([]byte(l.old))
				t[s] = append(t[s], wireKey{name: l.old, attr: a, id: i, intern: !uninterned[a.Name], legacy: li + 1})
			}
		}
	}
	return t
}()

// keySlots is the number of slots of wireKeys.
const keySlots = 256

// keySlot mixes the length and three bytes of k into a slot of wireKeys:
// the names of the conventions share prefixes, not these.
func keySlot(k []byte) int {
	n := len(k)
	if n < 2 {
		return n
	}
	h := uint32(n)*0x9E3779B1 ^ uint32(k[n-1])*0x85EBCA77 ^ uint32(k[n/2])*0xC2B2AE3D ^ uint32(k[n-2])*0x27D4EB2F
	return int(h >> 24)
}

// strtab interns strings read from the wire: a fixed number of slots, each
// holding the last string whose hash falls there. A value that repeats
// from record to record is copied once, then shared by the events that
// carry it; a value that does not costs its copy, as it would anyway, and
// a hash. A slot also keeps what its string decoded into last, as the
// value of an attribute of the conventions.
type strtab struct {
	seed  maphash.Seed
	slots [strtabSlots]strSlot
}

// strSlot is a slot of a strtab: s, and, when call is not 0, what s
// decoded into in that call as the value of registry[id], as lastValue.
type strSlot struct {
	s    string
	id   int
	dec  decoded
	call uint64
}

const (
	strtabSlots = 1 << 10
	// internMax is the longest string interned: longer ones are rarely
	// repeated, and cost more to compare.
	internMax = 128
)

// get returns b as a string, from the table when it is there.
func (t *strtab) get(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > internMax {
		return string(b)
	}
	return t.slot(b).s
}

// slot returns the slot of b, 1 to internMax bytes, holding b: as it was
// when b was there already, emptied of any other string.
func (t *strtab) slot(b []byte) *strSlot {
	slot := &t.slots[maphash.Bytes(t.seed, b)&(strtabSlots-1)]
	if slot.s != string(b) {
		*slot = strSlot{s: string(b)}
	}
	return slot
}
