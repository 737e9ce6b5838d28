package otelschema

import (
	"fmt"
	"maps"
	"slices"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// EncodeLogRecord writes e into lr as a drift log record, the inverse of
// DecodeLogs: the EventName, the timestamp, the trace and span ids, every
// non-resource attribute of the Registry whose Event field is set (strings
// and enums as strings, ints and timestamps as ints, bools as bools), and
// e.Attributes as string attributes. Zero fields are not written, and
// neither are the resource fields: write those with EncodeResource.
//
// lr is expected to be empty, as AppendEmpty returns it; attributes already
// on it are overwritten when e sets the same key. e.ID is not written: the
// decoder derives it from the content, so decoding the record gives back
// e.ID only when e.ID is that identity. An entry of e.Attributes named after
// a non-resource attribute of the conventions is skipped, since the decoder
// would read it as that attribute; one named after a resource attribute is
// written, and the decoder keeps it in Event.Attributes. The extra
// attributes are written in key order, so the same Event always encodes to
// the same record.
func EncodeLogRecord(e *Event, lr plog.LogRecord) {
	if name := e.Name.String(); name != "" {
		lr.SetEventName(name)
	}
	if e.Time != 0 {
		lr.SetTimestamp(pcommon.Timestamp(uint64(e.Time)))
	}
	lr.SetTraceID(e.TraceID)
	lr.SetSpanID(e.SpanID)
	attrs := lr.Attributes()
	for i := range registry {
		if a := &registry[i]; !a.Resource {
			putAttribute(attrs, a, e)
		}
	}
	switch len(e.Attributes) {
	case 0:
	case 1:
		for k, v := range e.Attributes {
			putExtra(attrs, k, v)
		}
	default:
		for _, k := range slices.Sorted(maps.Keys(e.Attributes)) {
			putExtra(attrs, k, e.Attributes[k])
		}
	}
}

// EncodeResource writes the resource attributes of the Registry whose Event
// field is set in e — service.name, service.version and the others — into
// res, the inverse of how DecodeLogs reads a resource. Zero fields are not
// written.
func EncodeResource(e *Event, res pcommon.Resource) {
	attrs := res.Attributes()
	for i := range registry {
		if a := &registry[i]; a.Resource {
			putAttribute(attrs, a, e)
		}
	}
}

// putAttribute writes the Event field of a into m under a's name, when it
// is set, with the OTLP value type that a's Type decodes from without
// conversion.
func putAttribute(m pcommon.Map, a *Attribute, e *Event) {
	if a.get == nil || !a.present(e) {
		return
	}
	switch v := a.get(e); a.Type {
	case TypeString:
		m.PutStr(a.Name, v.(string))
	case TypeInt, TypeTimestamp:
		m.PutInt(a.Name, v.(int64))
	case TypeBool:
		m.PutBool(a.Name, v.(bool))
	case TypeEnum:
		// Every enum type has a String method returning its wire value, ""
		// for values out of range, which are not written.
		if s := v.(fmt.Stringer).String(); s != "" {
			m.PutStr(a.Name, s)
		}
	}
}

// putExtra writes one entry of Event.Attributes, unless the decoder would
// read its key as a record attribute of the conventions.
func putExtra(m pcommon.Map, k, v string) {
	if a := attrByName[k]; a != nil && !a.Resource {
		return
	}
	m.PutStr(k, v)
}
