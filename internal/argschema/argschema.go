// Package argschema validates tool-call arguments against a tool's input
// schema, as a JSON Schema 2020-12 validator that asserts formats and loads
// no remote or file reference. The release check (internal/toolchange)
// proves compatibility with it, and the server middleware
// (otelschema/mcpgo) admits calls with it, so that the schema a check
// calls compatible is the one a server enforces.
package argschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Schema is a compiled input schema, safe for concurrent use.
type Schema struct {
	s *jsonschema.Schema
}

// Compile compiles schema: a decoded JSON value, a json.RawMessage, or any
// value that marshals to the schema's JSON.
func Compile(schema any) (*Schema, error) {
	doc, err := document(schema)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	c.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "mem:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, fmt.Errorf("cannot add the schema: %w", err)
	}
	s, err := c.Compile(loc)
	if err != nil {
		return nil, fmt.Errorf("cannot compile the schema: %w", err)
	}
	return &Schema{s: s}, nil
}

// document re-reads a schema the way the validator reads JSON (numbers as
// json.Number), whatever form it was given in.
func document(schema any) (any, error) {
	var raw []byte
	switch v := schema.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(schema)
		if err != nil {
			return nil, fmt.Errorf("cannot marshal the schema: %w", err)
		}
		raw = b
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("cannot read the schema: %w", err)
	}
	return doc, nil
}

// Violation is one reason arguments fail a schema.
type Violation struct {
	// Field is the JSON pointer of the offending value, such as "/region";
	// for a missing required property, the pointer it would have.
	Field string `json:"field"`
	// Kind is the JSON Schema keyword that failed, such as "required",
	// "additionalProperties", "enum" or "type".
	Kind string `json:"kind"`
	// Message says what is wrong, in English.
	Message string `json:"message"`
}

// Error is a validation failure: every violation found, ordered by field.
type Error struct {
	Violations []Violation
	// cause is the validator's own error, for callers that word it
	// themselves (errors.As to *jsonschema.ValidationError).
	cause error
}

// Unwrap returns the validator's own error.
func (e *Error) Unwrap() error { return e.cause }

func (e *Error) Error() string {
	parts := make([]string, len(e.Violations))
	for i, v := range e.Violations {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// String is "at /region: value must be one of …" ("at the arguments" for
// the root).
func (v Violation) String() string {
	if v.Field == "" {
		return "the arguments: " + v.Message
	}
	return v.Field + ": " + v.Message
}

// Fields returns the distinct fields of the violations of kind (every kind
// when kind is ""), as property paths without the leading slash: "region",
// "target/host".
func (e *Error) Fields(kind string) []string {
	var out []string
	for _, v := range e.Violations {
		if kind != "" && v.Kind != kind {
			continue
		}
		f := strings.TrimPrefix(v.Field, "/")
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// ErrNotJSON is wrapped by Validate for arguments that are not JSON.
var ErrNotJSON = errors.New("arguments are not JSON")

// Validate checks args, a JSON document, against the schema. It returns
// nil when they are valid, an *Error when they are not, and an error
// wrapping ErrNotJSON when they cannot be read. Empty args are the empty
// object, as MCP clients send a call without arguments.
func (s *Schema) Validate(args json.RawMessage) error {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	return s.ValidateValue(inst)
}

// ValidateValue is Validate for a value decoded by jsonschema.UnmarshalJSON
// (numbers as json.Number).
func (s *Schema) ValidateValue(inst any) error {
	err := s.s.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	out := &Error{cause: ve}
	leaves(ve, func(l *jsonschema.ValidationError) {
		out.Violations = append(out.Violations, violations(l)...)
	})
	slices.SortStableFunc(out.Violations, func(a, b Violation) int { return strings.Compare(a.Field, b.Field) })
	if len(out.Violations) == 0 {
		out.Violations = []Violation{{Field: pointer(ve.InstanceLocation), Kind: keyword(ve), Message: ve.ErrorKind.LocalizedString(printer)}}
	}
	return out
}

var printer = message.NewPrinter(language.English)

// leaves calls f on the innermost errors of e: the keywords that failed.
func leaves(e *jsonschema.ValidationError, f func(*jsonschema.ValidationError)) {
	if len(e.Causes) == 0 {
		if _, ok := e.ErrorKind.(*kind.Schema); !ok {
			f(e)
		}
		return
	}
	for _, c := range e.Causes {
		leaves(c, f)
	}
}

// violations turns one failed keyword into violations: one per missing or
// additional property, so that each names its field.
func violations(e *jsonschema.ValidationError) []Violation {
	at := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		out := make([]Violation, len(k.Missing))
		for i, m := range k.Missing {
			out[i] = Violation{Field: at + "/" + escape(m), Kind: "required", Message: "is required and missing"}
		}
		return out
	case *kind.AdditionalProperties:
		out := make([]Violation, len(k.Properties))
		for i, p := range k.Properties {
			out[i] = Violation{Field: at + "/" + escape(p), Kind: "additionalProperties", Message: "is not allowed"}
		}
		return out
	}
	return []Violation{{Field: at, Kind: keyword(e), Message: e.ErrorKind.LocalizedString(printer)}}
}

// keyword returns the JSON Schema keyword that failed. The validator's
// kinds for "not" and for the false schema name no keyword path; they are
// named here, as other validators (Ajv: mcpts) name them.
func keyword(e *jsonschema.ValidationError) string {
	if p := e.ErrorKind.KeywordPath(); len(p) > 0 {
		return p[0]
	}
	switch e.ErrorKind.(type) {
	case *kind.Not:
		return "not"
	case *kind.FalseSchema:
		return "false schema"
	}
	return ""
}

// pointer renders an instance location as a JSON pointer, "" for the root.
func pointer(loc []string) string {
	var b strings.Builder
	for _, s := range loc {
		b.WriteByte('/')
		b.WriteString(escape(s))
	}
	return b.String()
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
