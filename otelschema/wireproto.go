package otelschema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"google.golang.org/protobuf/encoding/protowire"
)

// The protobuf wire format as pdata reads it (go.opentelemetry.io/collector/
// pdata/internal/proto and the generated UnmarshalProto methods), so that
// DecodeLogsProto refuses exactly the bytes plogotlp.ExportRequest's
// UnmarshalProto refuses; FuzzDecodeLogsProto checks it. Where pdata departs
// from protowire, this follows pdata:
//
//   - a varint may have 10 bytes whatever the last one holds (bits past
//     the 64th are dropped); protowire refuses a 10th byte over 1;
//   - a field number is the tag shifted right by 3 truncated to 32 bits, and
//     only a result ≤ 0 is refused; protowire refuses numbers over 2^31-1;
//   - an unknown group is skipped field by field, the end tags' numbers
//     unchecked, up to its first field that is not a group: pdata's
//     ConsumeUnknown stops there, so the group's end tag then fails the
//     message; and a group closed on the message's last byte is refused;
//   - every known field must have its type's wire type;
//   - KeyValue, AnyValue, ArrayValue and KeyValueList count a depth, which
//     starts at 0 at every attribute of a record, resource or scope and at a
//     record's body, and refuse 100 levels.
//
// Messages are read with fields, which stops at the first error. A record's
// KeyValues in the layout SDKs and pdata write are read by
// readKeyValueFast, which reads what readKeyValue reads of them, and
// leaves the others to it.

// recursionLimit is pdata's proto.RecursionLimit.
const recursionLimit = 100

// Errors of the wire format, as pdata words them.
var (
	errIntOverflow    = errors.New("proto: integer overflow")
	errInvalidLength  = errors.New("proto: negative length found during unmarshaling")
	errRecursionDepth = errors.New("proto: exceeded max recursion depth")
	errEndOfGroup     = errors.New("proto: unexpected end of group")
	errTraceID        = errors.New("invalid length for TraceID")
	errSpanID         = errors.New("invalid length for SpanID")
)

// fields reads the fields of a message in turn: next reads a tag, then one
// of bytes, varint, fixed64, fixed32 or skip reads its value, checking
// its wire type. The first error stops next; it is in err.
type fields struct {
	b   []byte
	pos int
	num protowire.Number
	typ protowire.Type
	err error
}

// next reads the next tag, and reports whether there is a field to read.
func (f *fields) next() bool {
	if f.err != nil || f.pos >= len(f.b) {
		return false
	}
	tag, pos, err := consumeVarint(f.b, f.pos)
	if err != nil {
		f.err = err
		return false
	}
	f.pos = pos
	f.num, f.typ = protowire.Number(int32(tag>>3)), protowire.Type(tag&7)
	if f.num <= 0 {
		f.err = fmt.Errorf("proto: illegal field=%d (tag=%d, pos=%d)", f.num, tag, pos)
		return false
	}
	return true
}

// check keeps err, the error of a field's value, unless there is one
// already.
func (f *fields) check(err error) {
	if f.err == nil {
		f.err = err
	}
}

// want checks the field's wire type, named name in the error.
func (f *fields) want(t protowire.Type, name string) bool {
	if f.typ != t {
		f.check(fmt.Errorf("proto: wrong wireType = %d for field %s", f.typ, name))
		return false
	}
	return true
}

// bytes reads a length-delimited field.
func (f *fields) bytes(name string) ([]byte, bool) {
	if !f.want(protowire.BytesType, name) {
		return nil, false
	}
	start, end, err := consumeLen(f.b, f.pos)
	if err != nil {
		f.check(err)
		return nil, false
	}
	f.pos = end
	return f.b[start:end:end], true
}

// varint reads a varint field.
func (f *fields) varint(name string) (uint64, bool) {
	if !f.want(protowire.VarintType, name) {
		return 0, false
	}
	v, pos, err := consumeVarint(f.b, f.pos)
	if err != nil {
		f.check(err)
		return 0, false
	}
	f.pos = pos
	return v, true
}

// fixed64 reads a fixed64 field.
func (f *fields) fixed64(name string) (uint64, bool) {
	if !f.want(protowire.Fixed64Type, name) {
		return 0, false
	}
	if len(f.b)-f.pos < 8 {
		f.check(io.ErrUnexpectedEOF)
		return 0, false
	}
	f.pos += 8
	return binary.LittleEndian.Uint64(f.b[f.pos-8:]), true
}

// fixed32 reads a fixed32 field.
func (f *fields) fixed32(name string) (uint32, bool) {
	if !f.want(protowire.Fixed32Type, name) {
		return 0, false
	}
	if len(f.b)-f.pos < 4 {
		f.check(io.ErrUnexpectedEOF)
		return 0, false
	}
	f.pos += 4
	return binary.LittleEndian.Uint32(f.b[f.pos-4:]), true
}

// skip skips a field the message does not know, as pdata's ConsumeUnknown
// does: groups included, ended tags unchecked.
func (f *fields) skip() {
	b, pos, typ := f.b, f.pos, f.typ
	depth := 0
	for pos < len(b) {
		var err error
		switch typ {
		case protowire.VarintType:
			_, pos, err = consumeVarint(b, pos)
			f.skipped(pos, err)
			return
		case protowire.Fixed64Type:
			f.skipped(pos+8, nil)
			return
		case protowire.BytesType:
			_, pos, err = consumeLen(b, pos)
			f.skipped(pos, err)
			return
		case protowire.StartGroupType:
			depth++
		case protowire.EndGroupType:
			if depth == 0 {
				f.check(errEndOfGroup)
				return
			}
			depth--
		case protowire.Fixed32Type:
			f.skipped(pos+4, nil)
			return
		default:
			f.check(fmt.Errorf("proto: illegal wireType %d", typ))
			return
		}
		if depth == 0 {
			f.pos = pos
			return
		}
		var tag uint64
		if tag, pos, err = consumeVarint(b, pos); err != nil {
			f.check(err)
			return
		}
		if num := int32(tag >> 3); num <= 0 {
			f.check(fmt.Errorf("proto: illegal field=%d (tag=%d, pos=%d)", num, tag, pos))
			return
		}
		typ = protowire.Type(tag & 7)
	}
	f.check(io.ErrUnexpectedEOF)
}

// skipped ends skip at pos, past the end an error.
func (f *fields) skipped(pos int, err error) {
	switch {
	case err != nil:
		f.check(err)
	case pos > len(f.b):
		f.check(io.ErrUnexpectedEOF)
	default:
		f.pos = pos
	}
}

// consumeVarint reads a varint at pos as pdata does: up to 10 bytes, the
// bits past the 64th dropped.
func consumeVarint(b []byte, pos int) (uint64, int, error) {
	if pos < len(b) && b[pos] < 0x80 {
		return uint64(b[pos]), pos + 1, nil
	}
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, 0, errIntOverflow
		}
		if pos >= len(b) {
			return 0, 0, io.ErrUnexpectedEOF
		}
		c := b[pos]
		pos++
		v |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return v, pos, nil
		}
	}
}

// consumeLen reads a length at pos and returns where the bytes it counts
// start and end.
func consumeLen(b []byte, pos int) (int, int, error) {
	n, start, err := consumeVarint(b, pos)
	if err != nil {
		return 0, 0, err
	}
	length := int(n)
	if length < 0 {
		return 0, 0, errInvalidLength
	}
	end := start + length
	if end < 0 || end > len(b) {
		return 0, 0, io.ErrUnexpectedEOF
	}
	return start, end, nil
}

// readKeyValue reads a KeyValue at depth into kv. Repeated fields merge as
// pdata merges them: the last key wins, and the value is the last one set.
func readKeyValue(b []byte, depth int, kv *wireAttr) error {
	if depth >= recursionLimit {
		return errRecursionDepth
	}
	depth++
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			if m, ok := f.bytes("Key"); ok {
				kv.key = m
			}
		case 2:
			if m, ok := f.bytes("Value"); ok {
				f.check(readAnyValue(m, depth, &kv.val))
			}
		case 3:
			f.varint("KeyStrindex")
		default:
			f.skip()
		}
	}
	return f.err
}

// Tags of the fields readKeyValueFast reads.
const (
	tagKey         = 1<<3 | byte(protowire.BytesType)   // KeyValue.key
	tagValue       = 2<<3 | byte(protowire.BytesType)   // KeyValue.value
	tagStringValue = 1<<3 | byte(protowire.BytesType)   // AnyValue.string_value
	tagBoolValue   = 2<<3 | byte(protowire.VarintType)  // AnyValue.bool_value
	tagIntValue    = 3<<3 | byte(protowire.VarintType)  // AnyValue.int_value
	tagDoubleValue = 4<<3 | byte(protowire.Fixed64Type) // AnyValue.double_value
)

// readKeyValueFast reads into kv a KeyValue laid out as SDKs and pdata
// write them: its key and its value, each once, in either order, the value
// one string, bool, int or double, every length of one byte. It reports
// whether b is such a KeyValue; kv is then what readKeyValue(b, 0, kv)
// reads, and b has no error. For any other b it leaves kv as it was and
// reports false, for readKeyValue to read.
func readKeyValueFast(b []byte, kv *wireAttr) bool {
	if len(b) < 4 || b[1] >= 0x80 {
		return false
	}
	p := 2 + int(b[1])
	if p+2 > len(b) || b[p+1] >= 0x80 || p+2+int(b[p+1]) != len(b) {
		return false
	}
	var key, v []byte
	switch {
	case b[0] == tagKey && b[p] == tagValue:
		key, v = b[2:p:p], b[p+2:]
	case b[0] == tagValue && b[p] == tagKey:
		v, key = b[2:p:p], b[p+2:]
	default:
		return false
	}
	if len(v) < 2 {
		return false
	}
	switch v[0] {
	case tagStringValue:
		if v[1] >= 0x80 || 2+int(v[1]) != len(v) {
			return false
		}
		kv.key = key
		kv.val = wireValue{typ: pcommon.ValueTypeStr, raw: v[2:]}
	case tagIntValue, tagBoolValue:
		num, end, err := consumeVarint(v, 1)
		if err != nil || end != len(v) {
			return false
		}
		kv.key = key
		if v[0] == tagIntValue {
			kv.val = wireValue{typ: pcommon.ValueTypeInt, num: num}
		} else {
			kv.val = wireValue{typ: pcommon.ValueTypeBool, num: min(num, 1)}
		}
	case tagDoubleValue:
		if len(v) != 9 {
			return false
		}
		kv.key = key
		kv.val = wireValue{typ: pcommon.ValueTypeDouble, num: binary.LittleEndian.Uint64(v[1:])}
	default:
		return false
	}
	return true
}

// readAnyValue reads an AnyValue at depth into v, which it sets to the last
// value of the message; v keeps its value when the message sets none. A
// string_value_strindex (the profiles' string table) is an empty value, as
// pcommon.Value's Type says.
func readAnyValue(b []byte, depth int, v *wireValue) error {
	if depth >= recursionLimit {
		return errRecursionDepth
	}
	depth++
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			if m, ok := f.bytes("StringValue"); ok {
				*v = wireValue{typ: pcommon.ValueTypeStr, raw: m}
			}
		case 2:
			if n, ok := f.varint("BoolValue"); ok {
				*v = wireValue{typ: pcommon.ValueTypeBool}
				if n != 0 {
					v.num = 1
				}
			}
		case 3:
			if n, ok := f.varint("IntValue"); ok {
				*v = wireValue{typ: pcommon.ValueTypeInt, num: n}
			}
		case 4:
			if n, ok := f.fixed64("DoubleValue"); ok {
				*v = wireValue{typ: pcommon.ValueTypeDouble, num: n}
			}
		case 5:
			if m, ok := f.bytes("ArrayValue"); ok {
				f.check(checkArray(m, depth))
				*v = wireValue{typ: pcommon.ValueTypeSlice, raw: m}
			}
		case 6:
			if m, ok := f.bytes("KvlistValue"); ok {
				f.check(checkKeyValueList(m, depth))
				*v = wireValue{typ: pcommon.ValueTypeMap, raw: m}
			}
		case 7:
			if m, ok := f.bytes("BytesValue"); ok {
				*v = wireValue{typ: pcommon.ValueTypeBytes, raw: m}
			}
		case 8:
			if _, ok := f.varint("StringValueStrindex"); ok {
				*v = wireValue{}
			}
		default:
			f.skip()
		}
	}
	return f.err
}

// checkArray checks an ArrayValue at depth.
func checkArray(b []byte, depth int) error {
	if depth >= recursionLimit {
		return errRecursionDepth
	}
	depth++
	f := fields{b: b}
	for f.next() {
		if f.num != 1 {
			f.skip()
			continue
		}
		if m, ok := f.bytes("Values"); ok {
			var v wireValue
			f.check(readAnyValue(m, depth, &v))
		}
	}
	return f.err
}

// checkKeyValueList checks a KeyValueList at depth.
func checkKeyValueList(b []byte, depth int) error {
	if depth >= recursionLimit {
		return errRecursionDepth
	}
	depth++
	f := fields{b: b}
	for f.next() {
		if f.num != 1 {
			f.skip()
			continue
		}
		if m, ok := f.bytes("Values"); ok {
			var kv wireAttr
			f.check(readKeyValue(m, depth, &kv))
		}
	}
	return f.err
}

// checkEntityRef checks a resource's EntityRef.
func checkEntityRef(b []byte) error {
	f := fields{b: b}
	for f.next() {
		switch f.num {
		case 1:
			f.bytes("SchemaUrl")
		case 2:
			f.bytes("Type")
		case 3:
			f.bytes("IdKeys")
		case 4:
			f.bytes("DescriptionKeys")
		default:
			f.skip()
		}
	}
	return f.err
}

// readID reads a trace or span id into id: empty is zero, any length other
// than the id's is refused.
func readID(id, b []byte, errLength error) error {
	switch len(b) {
	case 0:
		clear(id)
	case len(id):
		copy(id, b)
	default:
		return errLength
	}
	return nil
}
