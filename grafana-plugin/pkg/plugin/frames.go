package plugin

import (
	"strconv"
	"strings"
	"time"

	"github.com/grafana/grafana-plugin-sdk-go/data"
	"github.com/mcpdrift/mcpdrift/apiv1"
)

// Units of the fields, as Grafana names them.
const (
	unitCount   = "short"
	unitPercent = "percentunit"
	unitMs      = "ms"
	unitSeconds = "s"
	unitTime    = "dateTimeAsIso"
)

// column is one field of a report's table: its name (the API's JSON
// name), the name a person reads, its unit, and how to build it from the
// rows.
type column[T any] struct {
	name  string
	build func(rows []T) *data.Field
}

// col builds a column whose values get returns; V must be a type data
// frames hold (string, bool, uint64, int64, float64, *float64, time.Time,
// *time.Time).
func col[T, V any](name, display, unit string, get func(T) V) column[T] {
	return column[T]{name: name, build: func(rows []T) *data.Field {
		vals := make([]V, len(rows))
		for i, r := range rows {
			vals[i] = get(r)
		}
		f := data.NewField(name, nil, vals)
		f.Config = &data.FieldConfig{DisplayNameFromDS: display, Unit: unit}
		return f
	}}
}

func text[T any](name, display string, get func(T) string) column[T] {
	return col(name, display, "", get)
}

func count[T any](name, display string, get func(T) uint64) column[T] {
	return col(name, display, unitCount, get)
}

func when[T any](name, display string, get func(T) time.Time) column[T] {
	return col(name, display, unitTime, get)
}

func whenOpt[T any](name, display string, get func(T) *time.Time) column[T] {
	return col(name, display, unitTime, get)
}

func flag[T any](name, display string, get func(T) bool) column[T] {
	return col(name, display, "bool_yes_no", get)
}

// flagOpt is flag for a value that may be null (unknown).
func flagOpt[T any](name, display string, get func(T) *bool) column[T] {
	return col(name, display, "bool_yes_no", get)
}

// tableFrame lays rows out as a table frame named after the report.
func tableFrame[T any](name string, cols []column[T], rows []T) *data.Frame {
	f := data.NewFrame(name)
	for _, c := range cols {
		f.Fields = append(f.Fields, c.build(rows))
	}
	f.Meta = &data.FrameMeta{PreferredVisualization: data.VisTypeTable}
	return f
}

// usageList spells client usages as "client (N calls)".
func usageList(us []apiv1.ClientUsage) string {
	parts := make([]string, len(us))
	for i, u := range us {
		parts[i] = u.Client + " (" + strconv.FormatUint(u.Calls, 10) + " calls)"
		if u.UnknownRevisionCalls > 0 {
			parts[i] = u.Client + " (" + strconv.FormatUint(u.Calls, 10) + " calls, " + strconv.FormatUint(u.UnknownRevisionCalls, 10) + " to the tool without a client revision)"
		}
	}
	return strings.Join(parts, ", ")
}

// fieldList spells contract errors by tool and field as
// "tool: field (N)".
func fieldList(fs []apiv1.ContractField) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Tool + ": " + f.Field + " (" + strconv.FormatUint(f.ContractErrors, 10) + ")"
	}
	return strings.Join(parts, ", ")
}
