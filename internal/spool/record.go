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
	"github.com/mcpdrift/mcpdrift/store"
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
//	payload          version byte 2, tenant, token, the columns, event count, events
//
// The columns are those of store.EventColumns when the record was
// written: their count, then each one's name, kind (a byte) and, for a
// fixed string, size; each event is its values in that order. A record
// written before a column was added or removed replays all the same: a
// column the record lacks is left zero, one the declaration lacks is
// skipped. Strings are a uvarint length and the bytes; UInt64 and
// nanosecond times are little-endian fixed width, other integers zig-zag
// varints, enums and bools a byte, a map its entry count and its entries in
// key order. The magic lets replay find the next record after a corrupt
// one. Version 1 records, of releases before the column declaration, are
// still read (record_v1.go).
const (
	headerSize     = 12
	payloadVersion = 2
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
	b = append(b, columnsHeader...)
	b = binary.AppendUvarint(b, uint64(len(r.Events)))
	for i := range r.Events {
		b = appendEvent(b, &r.Events[i])
	}
	return b
}

// columnsHeader is the columns part of a payload: store.EventColumns.
var columnsHeader = func() []byte {
	b := binary.AppendUvarint(nil, uint64(len(store.EventColumns)))
	for _, c := range store.EventColumns {
		b = appendString(b, c.Name)
		b = append(b, byte(c.Kind))
		if c.Kind == store.KindFixed {
			b = binary.AppendUvarint(b, uint64(c.Size))
		}
	}
	return b
}()

func appendEvent(b []byte, e *otelschema.Event) []byte {
	for i := range store.EventColumns {
		c := &store.EventColumns[i]
		switch c.Kind {
		case store.KindString:
			b = appendString(b, *c.StringAt(e))
		case store.KindUInt64:
			b = binary.LittleEndian.AppendUint64(b, *c.UintAt(e))
		case store.KindNanos:
			b = binary.LittleEndian.AppendUint64(b, uint64(*c.IntAt(e)))
		case store.KindInt64, store.KindSeconds:
			b = binary.AppendVarint(b, *c.IntAt(e))
		case store.KindEnum:
			b = append(b, *c.EnumAt(e))
		case store.KindBool:
			if *c.BoolAt(e) {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		case store.KindFixed:
			b = append(b, c.FixedAt(e)...)
		case store.KindMap:
			m := *c.MapAt(e)
			b = binary.AppendUvarint(b, uint64(len(m)))
			if len(m) > 0 {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					b = appendString(b, k)
					b = appendString(b, m[k])
				}
			}
		}
	}
	return b
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
// own). The copy string(p) made instead showed in the replayer's profile
// (slicebytetostring).
//
// The events are appended to dst: Record.Events is dst extended by them,
// so that a replayer gathering a group decodes each record straight into
// the group's buffer rather than copying it there.
func decodePayload(p []byte, dst []otelschema.Event) (Record, error) {
	r := &reader{b: p, whole: unsafe.String(unsafe.SliceData(p), len(p))}
	v := r.byte1("version")
	if r.err == nil && v != payloadVersion && v != payloadVersionV1 {
		return Record{}, fmt.Errorf("%w: unknown version %d", errPayload, v)
	}
	rec := Record{Tenant: r.str("tenant"), Token: r.str("token")}
	var plan []planned
	minSize := minEventSizeV1
	if v == payloadVersion {
		plan, minSize = readColumns(r)
	}
	n := r.uvarint("event count")
	if r.err != nil {
		return Record{}, r.err
	}
	if n > uint64(len(r.b)/minSize) {
		return Record{}, fmt.Errorf("%w: %d events cannot fit in %d bytes", errPayload, n, len(r.b))
	}
	base := len(dst)
	rec.Events = growEvents(dst, int(n))[:base+int(n)]
	for i := range int(n) {
		e := &rec.Events[base+i]
		*e = otelschema.Event{} // dst's spare room may hold an earlier group's events
		if v == payloadVersion {
			decodeEvent(r, e, plan)
		} else {
			decodeEventV1(r, e)
		}
		if r.err != nil {
			return Record{}, fmt.Errorf("event %d of %d: %w", i+1, n, r.err)
		}
	}
	if len(r.b) != 0 {
		return Record{}, fmt.Errorf("%w: %d bytes after the last event", errPayload, len(r.b))
	}
	return rec, nil
}

// planned is one column of a record: its kind and size as the record
// says, and the column of store.EventColumns it fills (nil for one the
// declaration no longer has, or has with another kind: skipped).
type planned struct {
	kind store.Kind
	size int
	col  *store.Column
}

// readColumns reads a payload's columns and returns how to decode its
// events, with the fewest bytes one takes (at least 1).
func readColumns(r *reader) ([]planned, int) {
	n := r.uvarint("column count")
	if r.err != nil || n > uint64(len(r.b)/2) {
		r.fail("columns")
		return nil, 1
	}
	plan := make([]planned, n)
	minSize := 0
	for i := range plan {
		name := r.str("column name")
		p := planned{kind: store.Kind(r.byte1("column kind"))}
		switch p.kind {
		case store.KindFixed:
			size := r.uvarint("column size")
			if size > 1<<16 {
				r.fail("column size")
			}
			p.size = int(size)
			minSize += p.size
		case store.KindUInt64, store.KindNanos:
			minSize += 8
		case store.KindString, store.KindInt64, store.KindSeconds, store.KindEnum, store.KindBool, store.KindMap:
			minSize++
		default:
			r.fail(fmt.Sprintf("column %q of kind %d", name, p.kind))
		}
		if c := columnByName[name]; c != nil && c.Kind == p.kind && c.Size == p.size {
			p.col = c
		}
		plan[i] = p
	}
	return plan, max(minSize, 1)
}

// columnByName indexes store.EventColumns.
var columnByName = func() map[string]*store.Column {
	m := make(map[string]*store.Column, len(store.EventColumns))
	for i := range store.EventColumns {
		m[store.EventColumns[i].Name] = &store.EventColumns[i]
	}
	return m
}()

func decodeEvent(r *reader, e *otelschema.Event, plan []planned) {
	// This loop runs for every column of every event a replay reads back
	// from disk, so it reads from a local slice, with the one-byte varints
	// of short strings and small integers inline, rather than through the
	// reader's methods (a call and an error check per value), and tells
	// the reader where it stopped.
	b := r.b
	base := len(r.whole) - len(b) // b[i] is r.whole[base+i]
	i := 0
	failed := store.Kind(0) // the kind of the column cut short, if one was
loop:
	for _, pl := range plan {
		c := pl.col
		switch pl.kind {
		case store.KindString:
			var n uint64
			if i < len(b) && b[i] < 0x80 {
				n = uint64(b[i])
				i++
			} else {
				v, k := binary.Uvarint(b[i:])
				if k <= 0 {
					failed = pl.kind
					break loop
				}
				n, i = v, i+k
			}
			if n > uint64(len(b)-i) {
				failed = pl.kind
				break loop
			}
			if c != nil {
				*c.StringAt(e) = r.whole[base+i : base+i+int(n)]
			}
			i += int(n)
		case store.KindUInt64, store.KindNanos:
			if len(b)-i < 8 {
				failed = pl.kind
				break loop
			}
			if c != nil {
				*c.UintAt(e) = binary.LittleEndian.Uint64(b[i:])
			}
			i += 8
		case store.KindInt64, store.KindSeconds:
			var v int64
			if i < len(b) && b[i] < 0x80 {
				v = int64(b[i]>>1) ^ -int64(b[i]&1)
				i++
			} else {
				x, k := binary.Varint(b[i:])
				if k <= 0 {
					failed = pl.kind
					break loop
				}
				v, i = x, i+k
			}
			if c != nil {
				*c.IntAt(e) = v
			}
		case store.KindEnum, store.KindBool:
			if i >= len(b) {
				failed = pl.kind
				break loop
			}
			if c != nil {
				if pl.kind == store.KindBool {
					*c.BoolAt(e) = b[i] != 0
				} else {
					*c.EnumAt(e) = b[i]
				}
			}
			i++
		case store.KindFixed:
			if len(b)-i < pl.size {
				failed = pl.kind
				break loop
			}
			if c != nil {
				copy(c.FixedAt(e), b[i:i+pl.size])
			}
			i += pl.size
		case store.KindMap:
			r.b = b[i:]
			m := r.stringMap()
			if r.err != nil {
				return
			}
			if c != nil {
				*c.MapAt(e) = m
			}
			b, base, i = r.b, len(r.whole)-len(r.b), 0
		}
	}
	r.b = b[i:]
	if failed != 0 {
		r.fail(kindValue[failed])
	}
}

// kindValue names a value of each kind in decodeEvent's errors.
var kindValue = map[store.Kind]string{
	store.KindString: "string column", store.KindUInt64: "uint64 column", store.KindNanos: "time column",
	store.KindInt64: "integer column", store.KindSeconds: "integer column", store.KindEnum: "enum column",
	store.KindBool: "bool column", store.KindFixed: "fixed column",
}

// stringMap reads a map's entry count and its entries; nil when empty.
func (r *reader) stringMap() map[string]string {
	n := r.uvarint("map entry count")
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)/2) || n > math.MaxInt32 {
		r.fail("map")
		return nil
	}
	if n == 0 {
		return nil
	}
	m := make(map[string]string, n)
	for range n {
		k := r.str("map key")
		m[k] = r.str("map value")
	}
	return m
}

// growEvents returns dst with room for n more events, at least doubling
// its capacity when it has to grow: a replayer's group buffer built record
// by record grows in a few steps, where append's growth of large slices
// (a quarter at a time) would copy it over and over.
func growEvents(dst []otelschema.Event, n int) []otelschema.Event {
	if cap(dst)-len(dst) >= n {
		return dst
	}
	return slices.Grow(dst, max(n, cap(dst)))
}

// payloadHead reads the head of a payload: its tenant and token (aliasing
// p) and its event count, without reading the events.
func payloadHead(p []byte) (tenant, token string, events int, err error) {
	r := &reader{b: p, whole: unsafe.String(unsafe.SliceData(p), len(p))}
	v := r.byte1("version")
	if r.err == nil && v != payloadVersion && v != payloadVersionV1 {
		return "", "", 0, fmt.Errorf("%w: unknown version %d", errPayload, v)
	}
	tenant, token = r.str("tenant"), r.str("token")
	if v == payloadVersion {
		if bytes.HasPrefix(r.b, columnsHeader) {
			r.b = r.b[len(columnsHeader):]
		} else {
			readColumns(r)
		}
	}
	n := r.uvarint("event count")
	if r.err != nil {
		return "", "", 0, r.err
	}
	if n > uint64(len(r.b)) {
		return "", "", 0, fmt.Errorf("%w: %d events cannot fit in %d bytes", errPayload, n, len(r.b))
	}
	return tenant, token, int(n), nil
}

// DecodePayload decodes a record's payload (Payload.Bytes), its events
// appended to dst, for a reader that cannot take payloads as they are.
// The record's strings alias p, which must not change afterwards.
func DecodePayload(p []byte, dst []otelschema.Event) (Record, error) {
	return decodePayload(p, dst)
}
