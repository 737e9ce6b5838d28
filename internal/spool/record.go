package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Record is one batch held in the spool: what store.Batch carries.
type Record struct {
	// Tenant owns the events.
	Tenant string
	// Token identifies the batch's content; replaying the record writes the
	// batch under the same token, so that a store that deduplicates on it
	// stores the batch once however often it is replayed.
	Token string
	// Events are the batch's events.
	Events []otelschema.Event
}

// On disk a record is a 12-byte header followed by its payload:
//
//	magic   [4]byte  "MDS1"
//	length  uint32   payload length, little endian
//	crc     uint32   CRC-32C (Castagnoli) of the length field and the payload
//	payload          version byte 1, tenant, token, event count, events
//
// Strings are a uvarint length and the bytes; integers are little-endian
// fixed width (IDs, times) or zig-zag varints; attributes are written in key
// order. The magic lets replay find the next record after a corrupt one.
const (
	headerSize     = 12
	payloadVersion = 1
	// minEventSize is the fewest bytes one encoded event takes, used to
	// bound allocations when decoding an untrusted count.
	minEventSize = 8 + 1 + 8 + 16 + 8 + 1
)

var magic = [4]byte{'M', 'D', 'S', '1'}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Errors of the record decoder.
var (
	errShortHeader = errors.New("short record header")
	errBadMagic    = errors.New("bad record magic")
	errBadLength   = errors.New("bad record length")
	errChecksum    = errors.New("record checksum mismatch")
	errPayload     = errors.New("malformed record payload")
)

// appendRecord appends the framed encoding of r to b.
func appendRecord(b []byte, r *Record) []byte {
	start := len(b)
	b = append(b, magic[:]...)
	b = append(b, make([]byte, 8)...) // length and crc, set below
	b = appendPayload(b, r)
	n := len(b) - start - headerSize
	binary.LittleEndian.PutUint32(b[start+4:], uint32(n))
	crc := crc32.Checksum(b[start+4:start+8], castagnoli)
	crc = crc32.Update(crc, castagnoli, b[start+headerSize:])
	binary.LittleEndian.PutUint32(b[start+8:], crc)
	return b
}

// parseHeader checks a record header and returns its payload length and
// checksum. maxPayload bounds the length.
func parseHeader(h []byte, maxPayload int64) (int64, uint32, error) {
	if len(h) < headerSize {
		return 0, 0, errShortHeader
	}
	if [4]byte(h[:4]) != magic {
		return 0, 0, errBadMagic
	}
	n := int64(binary.LittleEndian.Uint32(h[4:8]))
	if n > maxPayload {
		return 0, 0, fmt.Errorf("%w: %d bytes, over the %d left", errBadLength, n, maxPayload)
	}
	return n, binary.LittleEndian.Uint32(h[8:12]), nil
}

// checkPayload verifies the checksum of a payload read after header h.
func checkPayload(h, payload []byte, crc uint32) error {
	got := crc32.Checksum(h[4:8], castagnoli)
	got = crc32.Update(got, castagnoli, payload)
	if got != crc {
		return fmt.Errorf("%w: stored %08x, computed %08x", errChecksum, crc, got)
	}
	return nil
}

// decodeRecord decodes one framed record at the start of b and returns it
// with its framed size.
func decodeRecord(b []byte) (Record, int, error) {
	n, crc, err := parseHeader(b, int64(len(b)-min(len(b), headerSize)))
	if err != nil {
		return Record{}, 0, err
	}
	payload := b[headerSize : headerSize+n]
	if err := checkPayload(b, payload, crc); err != nil {
		return Record{}, 0, err
	}
	r, err := decodePayload(bytes.Clone(payload), nil)
	if err != nil {
		return Record{}, 0, err
	}
	return r, headerSize + int(n), nil
}

func appendPayload(b []byte, r *Record) []byte {
	b = append(b, payloadVersion)
	b = appendString(b, r.Tenant)
	b = appendString(b, r.Token)
	b = binary.AppendUvarint(b, uint64(len(r.Events)))
	for i := range r.Events {
		b = appendEvent(b, &r.Events[i])
	}
	return b
}

func appendEvent(b []byte, e *otelschema.Event) []byte {
	b = binary.LittleEndian.AppendUint64(b, e.ID)
	b = append(b, byte(e.Name))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.Time))
	b = append(b, e.TraceID[:]...)
	b = append(b, e.SpanID[:]...)
	for _, s := range []string{
		e.Service, e.ServiceVersion, e.ServiceInstance, e.ServiceNamespace, e.Environment,
		e.Tool, e.Method, e.RequestID, e.SessionID, e.ProtocolVersion, e.ClientName, e.ClientVersion,
		e.RevisionClient, e.RevisionServer, e.RevisionValidated, e.RevisionBefore, e.RevisionAfter,
		e.AdapterID, e.ExternalTarget, e.ErrorCode, e.RequiredAction,
		e.RetryOf, e.IdempotencyKey, e.RunID,
		e.AdapterRevisionFrom, e.AdapterRevisionTo, e.ContractField, e.ArgsRaw, e.ArgsNormalized,
	} {
		b = appendString(b, s)
	}
	b = append(b, byte(e.Outcome), byte(e.ChangeClass), byte(e.RepairAction), byte(e.RepairResult),
		byte(e.Approval), byte(e.Privilege), byte(e.RefreshResult), flags(e))
	for _, v := range []int64{e.ExternalRequests, e.RetryAttempt, e.RepairDurationMs, e.SessionAgeS, e.NotificationLagMs, e.AdapterWindowEnd} {
		b = binary.AppendVarint(b, v)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Attributes)))
	if len(e.Attributes) > 0 {
		keys := make([]string, 0, len(e.Attributes))
		for k := range e.Attributes {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			b = appendString(b, k)
			b = appendString(b, e.Attributes[k])
		}
	}
	return b
}

const (
	flagSideEffect = 1 << iota
	flagRepairAutomatic
)

func flags(e *otelschema.Event) byte {
	var f byte
	if e.SideEffectStarted {
		f |= flagSideEffect
	}
	if e.RepairAutomatic {
		f |= flagRepairAutomatic
	}
	return f
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// reader decodes a payload; the first error sticks. Its strings are
// slices of whole, the payload itself: decoding a record allocates nothing
// for its strings, and the events of a record are written to the store
// together and dropped together.
type reader struct {
	b     []byte
	whole string
	err   error
}

func (r *reader) fail(what string) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: cannot read %s with %d bytes left", errPayload, what, len(r.b))
	}
}

func (r *reader) bytes(n int, what string) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.fail(what)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) byte1(what string) byte {
	if v := r.bytes(1, what); v != nil {
		return v[0]
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if v := r.bytes(8, what); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (r *reader) uvarint(what string) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint(what string) int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.fail(what)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str(what string) string {
	n := r.uvarint(what)
	if n > uint64(len(r.b)) {
		r.fail(what)
		return ""
	}
	start := len(r.whole) - len(r.b)
	if r.bytes(int(n), what) == nil {
		return ""
	}
	return r.whole[start : start+int(n)]
}

// decodePayload decodes a record's payload. The strings of the record
// alias p, which must therefore never change afterwards: p is the
// decoder's to keep (readRecord reads every payload into a buffer of its
// own). The copy string(p) made instead cost the replayer 0.2 CPU-µs per
// event (slicebytetostring in the ingest bench profile).
//
// The events are appended to dst: Record.Events is dst extended by them,
// so that a replayer gathering a group decodes each record straight into
// the group's buffer rather than copying it there.
func decodePayload(p []byte, dst []otelschema.Event) (Record, error) {
	r := &reader{b: p, whole: unsafe.String(unsafe.SliceData(p), len(p))}
	if v := r.byte1("version"); r.err == nil && v != payloadVersion {
		return Record{}, fmt.Errorf("%w: unknown version %d", errPayload, v)
	}
	rec := Record{Tenant: r.str("tenant"), Token: r.str("token")}
	n := r.uvarint("event count")
	if r.err != nil {
		return Record{}, r.err
	}
	if n > uint64(len(r.b)/minEventSize) {
		return Record{}, fmt.Errorf("%w: %d events cannot fit in %d bytes", errPayload, n, len(r.b))
	}
	base := len(dst)
	rec.Events = slices.Grow(dst, int(n))[:base+int(n)]
	for i := range int(n) {
		e := &rec.Events[base+i]
		*e = otelschema.Event{} // dst's spare room may hold an earlier group's events
		decodeEvent(r, e)
		if r.err != nil {
			return Record{}, fmt.Errorf("event %d of %d: %w", i+1, n, r.err)
		}
	}
	if len(r.b) != 0 {
		return Record{}, fmt.Errorf("%w: %d bytes after the last event", errPayload, len(r.b))
	}
	return rec, nil
}

func decodeEvent(r *reader, e *otelschema.Event) {
	e.ID = r.u64("id")
	e.Name = otelschema.EventName(r.byte1("name"))
	e.Time = int64(r.u64("time"))
	copy(e.TraceID[:], r.bytes(16, "trace id"))
	copy(e.SpanID[:], r.bytes(8, "span id"))
	for _, p := range []*string{
		&e.Service, &e.ServiceVersion, &e.ServiceInstance, &e.ServiceNamespace, &e.Environment,
		&e.Tool, &e.Method, &e.RequestID, &e.SessionID, &e.ProtocolVersion, &e.ClientName, &e.ClientVersion,
		&e.RevisionClient, &e.RevisionServer, &e.RevisionValidated, &e.RevisionBefore, &e.RevisionAfter,
		&e.AdapterID, &e.ExternalTarget, &e.ErrorCode, &e.RequiredAction,
		&e.RetryOf, &e.IdempotencyKey, &e.RunID,
		&e.AdapterRevisionFrom, &e.AdapterRevisionTo, &e.ContractField, &e.ArgsRaw, &e.ArgsNormalized,
	} {
		*p = r.str("string field")
	}
	enums := r.bytes(8, "enums")
	if enums != nil {
		e.Outcome = otelschema.Outcome(enums[0])
		e.ChangeClass = otelschema.ChangeClass(enums[1])
		e.RepairAction = otelschema.RepairAction(enums[2])
		e.RepairResult = otelschema.RepairResult(enums[3])
		e.Approval = otelschema.Approval(enums[4])
		e.Privilege = otelschema.Privilege(enums[5])
		e.RefreshResult = otelschema.RefreshResult(enums[6])
		e.SideEffectStarted = enums[7]&flagSideEffect != 0
		e.RepairAutomatic = enums[7]&flagRepairAutomatic != 0
	}
	for _, p := range []*int64{&e.ExternalRequests, &e.RetryAttempt, &e.RepairDurationMs, &e.SessionAgeS, &e.NotificationLagMs, &e.AdapterWindowEnd} {
		*p = r.varint("integer field")
	}
	n := r.uvarint("attribute count")
	if r.err != nil {
		return
	}
	if n > uint64(len(r.b)/2) || n > math.MaxInt32 {
		r.fail("attributes")
		return
	}
	if n > 0 {
		e.Attributes = make(map[string]string, n)
		for range n {
			k := r.str("attribute key")
			e.Attributes[k] = r.str("attribute value")
		}
	}
}
