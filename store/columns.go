package store

import (
	"strconv"
	"unsafe"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Kind is how a column of events_in holds an event's field, and how the
// field is encoded for it.
type Kind uint8

// Kinds of columns.
const (
	// KindString is a String.
	KindString Kind = iota + 1
	// KindUInt64 is a UInt64.
	KindUInt64
	// KindInt64 is an Int64.
	KindInt64
	// KindEnum is an Enum8 whose values are the Go enum's numbers (the
	// schema renders each from otelschema's enum): sent as its Int8 number,
	// which the engine converts.
	KindEnum
	// KindBool is a Bool.
	KindBool
	// KindNanos is a DateTime64(9, 'UTC') of Unix nanoseconds.
	KindNanos
	// KindSeconds is a DateTime('UTC') of Unix seconds, clamped to its
	// range (1970 to 2106).
	KindSeconds
	// KindFixed is a FixedString of Column.Size bytes.
	KindFixed
	// KindMap is a Map(String, String).
	KindMap
)

// Column is one column of events_in and the field of otelschema.Event it
// holds. Exactly the accessor of its kind is set; each returns a pointer
// into the event (or, for KindFixed, its bytes), so that encoders read the
// field and decoders set it.
type Column struct {
	Name string
	Kind Kind
	// Size is the length of a KindFixed column.
	Size int
	// Names are a KindEnum column's values by number, "" for 0.
	Names []string

	Str   func(*otelschema.Event) *string
	Uint  func(*otelschema.Event) *uint64
	Int   func(*otelschema.Event) *int64 // KindInt64, KindNanos, KindSeconds
	Enum  func(*otelschema.Event) *uint8
	Bool  func(*otelschema.Event) *bool
	Fixed func(*otelschema.Event) []byte
	Map   func(*otelschema.Event) *map[string]string

	// offset is the field's offset in an Event, derived from the accessor
	// once (init): the encoders' and decoders' loops reach the field with
	// the *At methods, inlined, rather than through a call per value.
	offset uintptr
}

func init() {
	var e otelschema.Event
	base := uintptr(unsafe.Pointer(&e))
	for i := range EventColumns {
		c := &EventColumns[i]
		var p unsafe.Pointer
		switch c.Kind {
		case KindString:
			p = unsafe.Pointer(c.Str(&e))
		case KindUInt64:
			p = unsafe.Pointer(c.Uint(&e))
		case KindInt64, KindNanos, KindSeconds:
			p = unsafe.Pointer(c.Int(&e))
		case KindEnum:
			p = unsafe.Pointer(c.Enum(&e))
		case KindBool:
			p = unsafe.Pointer(c.Bool(&e))
		case KindFixed:
			p = unsafe.Pointer(&c.Fixed(&e)[0])
		case KindMap:
			p = unsafe.Pointer(c.Map(&e))
		}
		c.offset = uintptr(p) - base
	}
}

func (c *Column) at(e *otelschema.Event) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(e), c.offset)
}

// StringAt is Str(e), for a KindString column.
func (c *Column) StringAt(e *otelschema.Event) *string { return (*string)(c.at(e)) }

// UintAt is Uint(e), for a KindUInt64 column.
func (c *Column) UintAt(e *otelschema.Event) *uint64 { return (*uint64)(c.at(e)) }

// IntAt is Int(e), for a KindInt64, KindNanos or KindSeconds column.
func (c *Column) IntAt(e *otelschema.Event) *int64 { return (*int64)(c.at(e)) }

// EnumAt is Enum(e), for a KindEnum column.
func (c *Column) EnumAt(e *otelschema.Event) *uint8 { return (*uint8)(c.at(e)) }

// BoolAt is Bool(e), for a KindBool column.
func (c *Column) BoolAt(e *otelschema.Event) *bool { return (*bool)(c.at(e)) }

// FixedAt is Fixed(e), for a KindFixed column.
func (c *Column) FixedAt(e *otelschema.Event) []byte { return unsafe.Slice((*byte)(c.at(e)), c.Size) }

// MapAt is Map(e), for a KindMap column.
func (c *Column) MapAt(e *otelschema.Event) *map[string]string { return (*map[string]string)(c.at(e)) }

// TenantColumn is events_in's first column, which a batch fills.
const TenantColumn = "tenant"

// EventColumns are events_in's columns after TenantColumn, in the order
// the backends insert them and the spool records them: the one
// declaration of how an event is stored. Adding an attribute takes an
// Event field (otelschema's registry), a column here, and a migration
// that adds it to events_in and to what reads it.
var EventColumns = []Column{
	{Name: "event_id", Kind: KindUInt64, Uint: func(e *otelschema.Event) *uint64 { return &e.ID }},
	{Name: "event_name", Kind: KindEnum, Names: storedEventNames(),
		Enum: func(e *otelschema.Event) *uint8 { return (*uint8)(unsafe.Pointer(&e.Name)) }},
	{Name: "time", Kind: KindNanos, Int: func(e *otelschema.Event) *int64 { return &e.Time }},
	{Name: "trace_id", Kind: KindFixed, Size: 16, Fixed: func(e *otelschema.Event) []byte { return e.TraceID[:] }},
	{Name: "span_id", Kind: KindFixed, Size: 8, Fixed: func(e *otelschema.Event) []byte { return e.SpanID[:] }},
	str("service", func(e *otelschema.Event) *string { return &e.Service }),
	str("service_version", func(e *otelschema.Event) *string { return &e.ServiceVersion }),
	str("service_instance", func(e *otelschema.Event) *string { return &e.ServiceInstance }),
	str("service_namespace", func(e *otelschema.Event) *string { return &e.ServiceNamespace }),
	str("environment", func(e *otelschema.Event) *string { return &e.Environment }),
	str("tool", func(e *otelschema.Event) *string { return &e.Tool }),
	str("method", func(e *otelschema.Event) *string { return &e.Method }),
	str("request_id", func(e *otelschema.Event) *string { return &e.RequestID }),
	str("session_id", func(e *otelschema.Event) *string { return &e.SessionID }),
	str("protocol_version", func(e *otelschema.Event) *string { return &e.ProtocolVersion }),
	str("client_name", func(e *otelschema.Event) *string { return &e.ClientName }),
	str("client_version", func(e *otelschema.Event) *string { return &e.ClientVersion }),
	str("revision_client", func(e *otelschema.Event) *string { return &e.RevisionClient }),
	enum("revision_client_source", func(e *otelschema.Event) *otelschema.RevisionSource { return &e.RevisionClientSource }),
	str("revision_server", func(e *otelschema.Event) *string { return &e.RevisionServer }),
	str("revision_validated", func(e *otelschema.Event) *string { return &e.RevisionValidated }),
	str("revision_before", func(e *otelschema.Event) *string { return &e.RevisionBefore }),
	str("revision_after", func(e *otelschema.Event) *string { return &e.RevisionAfter }),
	enum("outcome", func(e *otelschema.Event) *otelschema.Outcome { return &e.Outcome }),
	str("adapter_id", func(e *otelschema.Event) *string { return &e.AdapterID }),
	enum("change_class", func(e *otelschema.Event) *otelschema.ChangeClass { return &e.ChangeClass }),
	{Name: "side_effect_started", Kind: KindBool, Bool: func(e *otelschema.Event) *bool { return &e.SideEffectStarted }},
	{Name: "external_requests", Kind: KindInt64, Int: func(e *otelschema.Event) *int64 { return &e.ExternalRequests }},
	str("external_target", func(e *otelschema.Event) *string { return &e.ExternalTarget }),
	str("error_code", func(e *otelschema.Event) *string { return &e.ErrorCode }),
	str("required_action", func(e *otelschema.Event) *string { return &e.RequiredAction }),
	str("retry_of", func(e *otelschema.Event) *string { return &e.RetryOf }),
	{Name: "retry_attempt", Kind: KindInt64, Int: func(e *otelschema.Event) *int64 { return &e.RetryAttempt }},
	enum("retry_after", func(e *otelschema.Event) *otelschema.Outcome { return &e.RetryAfter }),
	str("idempotency_key", func(e *otelschema.Event) *string { return &e.IdempotencyKey }),
	enum("repair_action", func(e *otelschema.Event) *otelschema.RepairAction { return &e.RepairAction }),
	{Name: "repair_automatic", Kind: KindBool, Bool: func(e *otelschema.Event) *bool { return &e.RepairAutomatic }},
	enum("repair_result", func(e *otelschema.Event) *otelschema.RepairResult { return &e.RepairResult }),
	{Name: "repair_duration_ms", Kind: KindInt64, Int: func(e *otelschema.Event) *int64 { return &e.RepairDurationMs }},
	enum("approval", func(e *otelschema.Event) *otelschema.Approval { return &e.Approval }),
	enum("privilege", func(e *otelschema.Event) *otelschema.Privilege { return &e.Privilege }),
	str("run_id", func(e *otelschema.Event) *string { return &e.RunID }),
	{Name: "session_age_s", Kind: KindInt64, Int: func(e *otelschema.Event) *int64 { return &e.SessionAgeS }},
	enum("refresh_result", func(e *otelschema.Event) *otelschema.RefreshResult { return &e.RefreshResult }),
	{Name: "notification_lag_ms", Kind: KindInt64, Int: func(e *otelschema.Event) *int64 { return &e.NotificationLagMs }},
	str("adapter_revision_from", func(e *otelschema.Event) *string { return &e.AdapterRevisionFrom }),
	str("adapter_revision_to", func(e *otelschema.Event) *string { return &e.AdapterRevisionTo }),
	{Name: "adapter_window_end", Kind: KindSeconds, Int: func(e *otelschema.Event) *int64 { return &e.AdapterWindowEnd }},
	str("contract_field", func(e *otelschema.Event) *string { return &e.ContractField }),
	str("definition", func(e *otelschema.Event) *string { return &e.Definition }),
	{Name: "list_ttl_ms", Kind: KindInt64, Int: func(e *otelschema.Event) *int64 { return &e.ListTTLMs }},
	str("list_cache_scope", func(e *otelschema.Event) *string { return &e.ListCacheScope }),
	str("args_raw", func(e *otelschema.Event) *string { return &e.ArgsRaw }),
	str("args_normalized", func(e *otelschema.Event) *string { return &e.ArgsNormalized }),
	enum("client_view", func(e *otelschema.Event) *otelschema.ClientView { return &e.ClientView }),
	{Name: "attributes", Kind: KindMap, Map: func(e *otelschema.Event) *map[string]string { return &e.Attributes }},
}

func str(name string, field func(*otelschema.Event) *string) Column {
	return Column{Name: name, Kind: KindString, Str: field}
}

// enumValue is an otelschema enum: a uint8 whose String is its wire value,
// "" past the last.
type enumValue interface {
	~uint8
	String() string
}

func enum[T enumValue](name string, field func(*otelschema.Event) *T) Column {
	return Column{Name: name, Kind: KindEnum, Names: EnumNames[T](),
		Enum: func(e *otelschema.Event) *uint8 { return (*uint8)(unsafe.Pointer(field(e))) }}
}

// storedEventNames returns the stored names of the events by number, ""
// for 0: the store keeps the names of its first version
// (otelschema.EventName.Stored), whatever name an event came in under.
func storedEventNames() []string {
	names := []string{""}
	for e := otelschema.EventName(1); e.String() != ""; e++ {
		names = append(names, e.Stored())
	}
	return names
}

// EnumNames returns the wire values of an otelschema enum by number, ""
// for 0 (unset).
func EnumNames[T enumValue]() []string {
	names := []string{""}
	for i := 1; i < 256 && T(i).String() != ""; i++ {
		names = append(names, T(i).String())
	}
	return names
}

// WireType is the ClickHouse type a column's values are sent as: its
// own, but Int8 for an enum.
func (c Column) WireType() string {
	switch c.Kind {
	case KindString:
		return "String"
	case KindUInt64:
		return "UInt64"
	case KindInt64:
		return "Int64"
	case KindEnum:
		return "Int8"
	case KindBool:
		return "Bool"
	case KindNanos:
		return "DateTime64(9, 'UTC')"
	case KindSeconds:
		return "DateTime('UTC')"
	case KindFixed:
		return "FixedString(" + strconv.Itoa(c.Size) + ")"
	case KindMap:
		return "Map(String, String)"
	}
	return ""
}

// InsertColumns is the column list of an INSERT into events_in, tenant
// first: "(tenant, event_id, …)".
var InsertColumns = func() string {
	s := "(" + TenantColumn
	for _, c := range EventColumns {
		s += ", " + c.Name
	}
	return s + ")"
}()
