package spool

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// randomRecord returns a record of up to maxEvents events whose every
// column holds random values of its kind: strings empty, short, or past
// a one-byte length (up to 300 bytes), integers of every varint width and
// both signs and their limits, each enum value in turn and any byte
// besides, both bools, maps of 0 to 5 entries with empty keys and values.
func randomRecord(rng *rand.Rand, maxEvents int) Record {
	str := func() string {
		switch rng.IntN(4) {
		case 0:
			return ""
		case 1:
			return strings.Repeat("é", 64+rng.IntN(90))
		}
		return fmt.Sprint("s", rng.Uint64N(1000))
	}
	ints := []int64{0, -1, 1, -64, 64, math.MaxInt64, math.MinInt64, math.MaxUint32, math.MaxUint32 + 1}
	rec := Record{Tenant: str(), Token: str()}
	for i := range rng.IntN(maxEvents + 1) {
		var e otelschema.Event
		for c := range store.EventColumns {
			col := &store.EventColumns[c]
			switch col.Kind {
			case store.KindString:
				*col.StringAt(&e) = str()
			case store.KindUInt64:
				*col.UintAt(&e) = rng.Uint64() >> rng.IntN(64)
			case store.KindNanos, store.KindInt64, store.KindSeconds:
				if rng.IntN(2) == 0 {
					*col.IntAt(&e) = ints[rng.IntN(len(ints))]
				} else {
					*col.IntAt(&e) = rng.Int64() >> rng.IntN(64) * int64(1-2*rng.IntN(2))
				}
			case store.KindEnum:
				if rng.IntN(4) == 0 {
					*col.EnumAt(&e) = uint8(rng.IntN(256))
				} else {
					*col.EnumAt(&e) = uint8(i % max(len(col.Names), 1))
				}
			case store.KindBool:
				*col.BoolAt(&e) = rng.IntN(2) == 0
			case store.KindFixed:
				for j := range col.FixedAt(&e) {
					col.FixedAt(&e)[j] = byte(rng.IntN(256))
				}
			case store.KindMap:
				if n := rng.IntN(6); n > 0 {
					m := map[string]string{}
					for range n {
						m[str()] = str()
					}
					*col.MapAt(&e) = m
				}
			}
		}
		rec.Events = append(rec.Events, e)
	}
	return rec
}

// reference appends the events of payload p that keep keeps to blk as
// replay does today: decoded to events, then NativeBlock.Append.
func reference(t testing.TB, blk *chwire.NativeBlock, p []byte, keep func(uint64) bool) {
	t.Helper()
	rec, err := decodePayload(bytes.Clone(p), nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := slices.DeleteFunc(rec.Events, func(e otelschema.Event) bool { return keep != nil && !keep(e.ID) })
	blk.Append(rec.Tenant, kept)
}

// canonical returns blk's bytes, Chunks joined, with each row's map
// entries in key order: Append writes them in Go's map order, the
// transcoder in the record's (key order), and the engine reads either as
// the same map.
func canonical(t testing.TB, blk *chwire.NativeBlock) []byte {
	t.Helper()
	chunks := blk.Chunks()
	out := bytes.Clone(chunks[0])
	for i, c := range blk.Columns() {
		out = appendString(appendString(out, c.Name), c.Type)
		if len(c.Data) == 1 {
			out = append(out, c.Data[0]...)
			continue
		}
		offsets, keys, values := c.Data[0], c.Data[1], c.Data[2]
		var prev uint64
		var ks, vs []byte
		for r := 0; r < len(offsets); r += 8 {
			end := binary.LittleEndian.Uint64(offsets[r:])
			type entry struct{ k, v []byte }
			var es []entry
			for range end - prev {
				var k, v []byte
				k, keys = cutString(keys)
				v, values = cutString(values)
				es = append(es, entry{k, v})
			}
			slices.SortFunc(es, func(a, b entry) int { return bytes.Compare(a.k, b.k) })
			for _, e := range es {
				ks, vs = appendBytes(ks, e.k), appendBytes(vs, e.v)
			}
			prev = end
		}
		if len(keys)+len(values) != 0 {
			t.Fatalf("column %d: %d map bytes past the offsets", i, len(keys)+len(values))
		}
		out = append(append(append(out, offsets...), ks...), vs...)
	}
	return out
}

func appendBytes(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// TestTranscodeMatchesDecode: for random records, appended one after the
// other to a block (so that the map offsets carry on from record to
// record), with every event kept and with some dropped by id, the
// transcoder's block is byte for byte the block of the decoded events
// appended with NativeBlock.Append, their maps' entries in key order.
func TestTranscodeMatchesDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(46, 2))
	keeps := map[string]func(uint64) bool{
		"all":      nil,
		"odd ids":  func(id uint64) bool { return id%2 == 1 },
		"none":     func(uint64) bool { return false },
		"id below": func(id uint64) bool { return id < 1<<40 },
	}
	for name, keep := range keeps {
		t.Run(name, func(t *testing.T) {
			var got, want chwire.NativeBlock
			var tr Transcoder
			rows := 0
			for i := range 60 {
				rec := randomRecord(rng, 40)
				p := appendRecord(nil, &rec)[headerSize:]
				reference(t, &want, p, keep)
				tenant, token, n, err := tr.AppendPayload(&got, p, keep)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if tenant != rec.Tenant || token != rec.Token {
					t.Fatalf("record %d: tenant %q token %q, want %q %q", i, tenant, token, rec.Tenant, rec.Token)
				}
				rows += n
				if got.Rows() != want.Rows() || got.Rows() != rows {
					t.Fatalf("record %d: %d rows transcoded (%d returned), %d decoded", i, got.Rows(), rows, want.Rows())
				}
			}
			g, w := bytes.Join(got.Chunks(), nil), canonical(t, &want)
			if !bytes.Equal(g, w) {
				t.Fatalf("blocks of %d rows differ: %d bytes transcoded, %d decoded; first difference at byte %d",
					got.Rows(), len(g), len(w), firstDiff(g, w))
			}
			if !bytes.Equal(g, canonical(t, &got)) {
				t.Fatal("the transcoder's maps are not in key order")
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestTranscodeColumnsChange: a record written with other columns than
// the declaration's — one since removed, one since added, one whose kind
// changed — transcodes as it decodes: the known columns copied, the
// others skipped or zero.
func TestTranscodeColumnsChange(t *testing.T) {
	b := otherColumnsPayload()
	var got, want chwire.NativeBlock
	keep := func(id uint64) bool { return id != 101 }
	reference(t, &want, b, keep)
	var tr Transcoder
	if _, _, n, err := tr.AppendPayload(&got, b, keep); err != nil || n != 2 {
		t.Fatalf("%d rows, %v; want 2", n, err)
	}
	if !bytes.Equal(bytes.Join(got.Chunks(), nil), canonical(t, &want)) {
		t.Fatal("the blocks differ")
	}
}

// otherColumnsPayload is a payload of 3 events whose columns are one
// since removed, a string, the id, one whose kind changed and the map,
// with 0, 1 and 2 entries.
func otherColumnsPayload() []byte {
	b := []byte{payloadVersion}
	b = appendString(b, "acme")
	b = appendString(b, "tok")
	b = binary.AppendUvarint(b, 5)
	for _, c := range []struct {
		name string
		kind store.Kind
	}{{"removed_since", store.KindString}, {"tool", store.KindString}, {"event_id", store.KindUInt64}, {"outcome", store.KindString}, {"attributes", store.KindMap}} {
		b = appendString(b, c.name)
		b = append(b, byte(c.kind))
	}
	b = binary.AppendUvarint(b, 3)
	for i := range 3 {
		b = appendString(b, "gone")
		b = appendString(b, "search")
		b = binary.LittleEndian.AppendUint64(b, uint64(100+i))
		b = appendString(b, "normalized")
		b = binary.AppendUvarint(b, uint64(i))
		for j := range i {
			b = appendString(appendString(b, fmt.Sprint("k", j)), "v")
		}
	}
	return b
}

// TestTranscodeVersion1 transcodes a version 1 record (through its
// decoder) as it decodes.
func TestTranscodeVersion1(t *testing.T) {
	rec := testRecord(3, 5)
	p := appendPayloadV1(nil, &rec)
	var got, want chwire.NativeBlock
	keep := func(id uint64) bool { return id%2 == 0 }
	reference(t, &want, p, keep)
	var tr Transcoder
	tenant, token, n, err := tr.AppendPayload(&got, p, keep)
	if err != nil || tenant != rec.Tenant || token != rec.Token || n != want.Rows() {
		t.Fatalf("%q %q %d rows, %v; want %d rows", tenant, token, n, err, want.Rows())
	}
	if !bytes.Equal(canonical(t, &got), canonical(t, &want)) {
		t.Fatal("the blocks differ")
	}
}

// TestTranscodeRefusesWholly: every proper prefix of a payload, a map
// out of key order and a column declared twice are refused with
// errPayload, and the block keeps the rows it held, byte for byte.
func TestTranscodeRefusesWholly(t *testing.T) {
	rec := testRecord(1, 3)
	p := appendRecord(nil, &rec)[headerSize:]
	var blk chwire.NativeBlock
	var tr Transcoder
	if _, _, _, err := tr.AppendPayload(&blk, p, nil); err != nil {
		t.Fatal(err)
	}
	before := bytes.Join(blk.Chunks(), nil)
	bad := map[string][]byte{}
	for cut := range len(p) {
		bad[fmt.Sprint("first ", cut, " bytes")] = p[:cut]
	}
	// testRecord's attributes are {a: 1, b: 2}: swap the keys.
	swapped := bytes.Replace(bytes.Clone(p), []byte("\x01a\x011\x01b\x012"), []byte("\x01b\x012\x01a\x011"), 1)
	if bytes.Equal(swapped, p) {
		t.Fatal("no map to swap")
	}
	bad["map out of order"] = swapped
	twice := []byte{payloadVersion}
	twice = appendString(appendString(twice, "acme"), "tok")
	twice = binary.AppendUvarint(twice, 2)
	twice = append(appendString(twice, "tool"), byte(store.KindString))
	twice = append(appendString(twice, "tool"), byte(store.KindString))
	twice = binary.AppendUvarint(twice, 1)
	twice = appendString(appendString(twice, "a"), "b")
	bad["column twice"] = twice
	for name, b := range bad {
		if _, _, _, err := tr.AppendPayload(&blk, b, nil); !errors.Is(err, errPayload) {
			t.Fatalf("%s: %v, want errPayload", name, err)
		}
		if !bytes.Equal(bytes.Join(blk.Chunks(), nil), before) {
			t.Fatalf("%s: the block changed", name)
		}
	}
}

// FuzzTranscode: a payload the transcoder takes decodes, to the same
// block; a payload that decodes and is as appendPayload writes it (its
// re-encoding) transcodes.
func FuzzTranscode(f *testing.F) {
	rng := rand.New(rand.NewPCG(46, 3))
	for range 4 {
		rec := randomRecord(rng, 3)
		f.Add(appendRecord(nil, &rec)[headerSize:])
	}
	f.Add(appendRecord(nil, ptr(testRecord(1, 2)))[headerSize:])
	f.Add(otherColumnsPayload())
	f.Add(appendPayloadV1(nil, ptr(testRecord(2, 2))))
	f.Fuzz(func(t *testing.T, p []byte) {
		var got, want chwire.NativeBlock
		var tr Transcoder
		_, _, _, terr := tr.AppendPayload(&got, bytes.Clone(p), nil)
		rec, derr := decodePayload(bytes.Clone(p), nil)
		switch {
		case terr == nil && derr != nil:
			t.Fatalf("transcoded, but does not decode: %v", derr)
		case terr == nil:
			want.Append(rec.Tenant, rec.Events)
			// canonical on both sides: a version 1 record goes through
			// Append, its maps in Go's order.
			if !bytes.Equal(canonical(t, &got), canonical(t, &want)) {
				t.Fatal("the blocks differ")
			}
		case derr == nil && bytes.Equal(appendPayload(nil, &rec), p):
			t.Fatalf("decodes and is canonical, but does not transcode: %v", terr)
		}
	})
}
