package spool

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// The transcoder lives here, on chwire's row-by-row API, rather than in
// chwire on an iterator the spool would export: the record's layout (the
// column declaration, varints, the map's key order, version 1) is the
// spool's to know, the Native layout chwire's, and the call between them
// is one concrete method per value, with no interface in the loop and no
// otelschema.Event in between.

// Transcoder appends the events of spooled records' payloads to a
// chwire.NativeBlock. Its zero value is ready; it keeps scratch space
// from payload to payload and is not safe for concurrent use.
type Transcoder struct {
	spans []span
	v1    []otelschema.Event // version 1 records go through Events
}

// span is where one value of an event lies in the payload: [lo, hi),
// a string's bytes without their length; n is a map's entry count.
type span struct{ lo, hi, n int }

// AppendPayload appends the events of payload p, one record's (the bytes
// after its header), to blk as rows of the record's tenant, leaving out
// those whose id keep refuses (keep nil keeps every one; an event of a
// record without the event_id column has id 0). keep is called before any
// of an event's columns is appended. It returns the record's tenant and
// token, which alias p, and the rows appended. On error blk is left as it
// was. A column of the declaration the record lacks is appended zero, one
// the declaration lacks is skipped, as decodePayload does; a map whose
// keys are not in strictly increasing order, or a column declared twice,
// is refused (appendEvent writes neither).
func (t *Transcoder) AppendPayload(blk *chwire.NativeBlock, p []byte, keep func(id uint64) bool) (tenant, token string, rows int, err error) {
	blk.Mark()
	tenant, token, rows, err = t.appendPayload(blk, p, keep)
	if err != nil {
		blk.Rollback()
		return "", "", 0, err
	}
	return tenant, token, rows, nil
}

func (t *Transcoder) appendPayload(blk *chwire.NativeBlock, p []byte, keep func(id uint64) bool) (string, string, int, error) {
	r := &reader{b: p, whole: unsafe.String(unsafe.SliceData(p), len(p))}
	v := r.byte1("version")
	if r.err == nil && v == payloadVersionV1 {
		return t.appendV1(blk, p, keep)
	}
	if r.err == nil && v != payloadVersion {
		return "", "", 0, fmt.Errorf("%w: unknown version %d", errPayload, v)
	}
	tenant := r.str("tenant")
	tenantRaw := unsafe.Slice(unsafe.StringData(tenant), len(tenant)) // aliases p
	token := r.str("token")
	plan, minSize := readColumns(r)
	n := r.uvarint("event count")
	if r.err != nil {
		return "", "", 0, r.err
	}
	if n > uint64(len(r.b)/minSize) {
		return "", "", 0, fmt.Errorf("%w: %d events cannot fit in %d bytes", errPayload, n, len(r.b))
	}
	// Each planned column's index in store.EventColumns (-1: skipped),
	// and the declared columns the record lacks, appended zero.
	idx := make([]int, len(plan))
	seen := make([]bool, len(store.EventColumns))
	idAt := -1
	for i, pl := range plan {
		idx[i] = -1
		if pl.col == nil {
			continue
		}
		c := columnIndex[pl.col.Name]
		if seen[c] {
			return "", "", 0, fmt.Errorf("%w: column %q declared twice", errPayload, pl.col.Name)
		}
		seen[c], idx[i] = true, c
		if pl.col.Name == idColumn {
			idAt = i
		}
	}
	var missing []int
	for c, ok := range seen {
		if !ok {
			missing = append(missing, c)
		}
	}
	if cap(t.spans) < len(plan) {
		t.spans = make([]span, len(plan))
	}
	spans := t.spans[:len(plan)]
	rows := 0
	for i := range int(n) {
		end, err := scanEvent(p, len(p)-len(r.b), plan, spans)
		if err != nil {
			return "", "", 0, fmt.Errorf("event %d of %d: %w", i+1, n, err)
		}
		r.b = p[end:]
		var id uint64
		if idAt >= 0 {
			id = binary.LittleEndian.Uint64(p[spans[idAt].lo:])
		}
		if keep != nil && !keep(id) {
			continue
		}
		rows++
		blk.StartRow(tenantRaw)
		for j, pl := range plan {
			c := idx[j]
			if c < 0 {
				continue
			}
			s := spans[j]
			switch pl.kind {
			case store.KindString:
				blk.AppendString(c, p[s.lo:s.hi])
			case store.KindUInt64, store.KindNanos:
				blk.AppendUint64(c, binary.LittleEndian.Uint64(p[s.lo:]))
			case store.KindInt64, store.KindSeconds:
				v, _ := binary.Varint(p[s.lo:s.hi])
				blk.AppendInt(c, v)
			case store.KindEnum, store.KindBool:
				blk.AppendByte(c, p[s.lo])
			case store.KindFixed:
				blk.AppendFixed(c, p[s.lo:s.hi])
			case store.KindMap:
				q := p[s.lo:s.hi]
				for range s.n {
					var k, v []byte
					k, q = cutString(q)
					v, q = cutString(q)
					blk.AppendMapEntry(k, v)
				}
				blk.EndMap(c, s.n)
			}
		}
		for _, c := range missing {
			blk.AppendZero(c)
		}
	}
	if len(r.b) != 0 {
		return "", "", 0, fmt.Errorf("%w: %d bytes after the last event", errPayload, len(r.b))
	}
	return tenant, token, rows, nil
}

// scanEvent finds the values of the event at p[at:], one span per planned
// column, and returns where the event ends; a map's span is its entries,
// after their count, which it checks are in strictly increasing key order.
func scanEvent(p []byte, at int, plan []planned, spans []span) (int, error) {
	i := at
	str := func() (int, int, bool) {
		n, k := binary.Uvarint(p[i:])
		if k <= 0 || n > uint64(len(p)-i-k) {
			return 0, 0, false
		}
		return i + k, i + k + int(n), true
	}
	for j, pl := range plan {
		s := span{lo: i}
		switch pl.kind {
		case store.KindString:
			lo, hi, ok := str()
			if !ok {
				return 0, fmt.Errorf("%w: cannot read %s at byte %d", errPayload, kindValue[pl.kind], i)
			}
			s.lo, s.hi = lo, hi
		case store.KindUInt64, store.KindNanos:
			s.hi = i + 8
		case store.KindInt64, store.KindSeconds:
			_, k := binary.Varint(p[i:])
			if k <= 0 {
				return 0, fmt.Errorf("%w: cannot read %s at byte %d", errPayload, kindValue[pl.kind], i)
			}
			s.hi = i + k
		case store.KindEnum, store.KindBool:
			s.hi = i + 1
		case store.KindFixed:
			s.hi = i + pl.size
		case store.KindMap:
			n, k := binary.Uvarint(p[i:])
			if k <= 0 || n > uint64(len(p)-i-k)/2 {
				return 0, fmt.Errorf("%w: cannot read map at byte %d", errPayload, i)
			}
			i += k
			s.lo, s.n = i, int(n)
			var prev []byte
			for e := range s.n {
				klo, khi, ok := str()
				if !ok {
					return 0, fmt.Errorf("%w: cannot read map key at byte %d", errPayload, i)
				}
				if e > 0 && bytes.Compare(prev, p[klo:khi]) >= 0 {
					return 0, fmt.Errorf("%w: map key %q after %q", errPayload, p[klo:khi], prev)
				}
				prev, i = p[klo:khi], khi
				_, vhi, ok := str()
				if !ok {
					return 0, fmt.Errorf("%w: cannot read map value at byte %d", errPayload, i)
				}
				i = vhi
			}
			s.hi = i
		}
		if s.hi > len(p) {
			return 0, fmt.Errorf("%w: cannot read %s at byte %d", errPayload, kindValue[pl.kind], s.lo)
		}
		i = s.hi
		spans[j] = s
	}
	return i, nil
}

// cutString splits the string at the start of q from what follows it; q
// was checked by scanEvent.
func cutString(q []byte) ([]byte, []byte) {
	n, k := binary.Uvarint(q)
	return q[k : k+int(n)], q[k+int(n):]
}

// idColumn is the column of an event's id, which keep is given.
const idColumn = "event_id"

// columnIndex is each column's index in store.EventColumns.
var columnIndex = func() map[string]int {
	m := make(map[string]int, len(store.EventColumns))
	for i := range store.EventColumns {
		m[store.EventColumns[i].Name] = i
	}
	return m
}()

// appendV1 appends a version 1 record's events through decodePayload and
// chwire's Append: such records predate the column declaration, are only
// met in a spool written by an older release, and are not worth a
// transcoder of their own.
func (t *Transcoder) appendV1(blk *chwire.NativeBlock, p []byte, keep func(id uint64) bool) (string, string, int, error) {
	rec, err := decodePayload(bytes.Clone(p), t.v1[:0])
	if err != nil {
		return "", "", 0, err
	}
	t.v1 = rec.Events
	kept := rec.Events[:0]
	for _, e := range rec.Events {
		if keep == nil || keep(e.ID) {
			kept = append(kept, e)
		}
	}
	blk.Append(rec.Tenant, kept)
	clear(t.v1) // the events alias the clone of p: let it go
	return rec.Tenant, rec.Token, len(kept), nil
}
