package otelschema

import (
	"encoding/json"
	"strings"
)

// checkDefinition checks an advertised event's definition: a JSON object
// whose name is the event's tool and whose schemas and annotations, when
// present, are objects. The store keeps the definition as it came, and
// the release check decodes it later: a definition refused here is one
// that could never be compared.
func checkDefinition(e *Event) error {
	var def map[string]json.RawMessage
	if err := json.Unmarshal([]byte(e.Definition), &def); err != nil {
		return fail(ErrMalformedDefinition, "%s: value of %d bytes is not a JSON object: %s", AttrToolDefinition, len(e.Definition), jsonReason(err))
	}
	var name string
	if raw, ok := def["name"]; !ok || json.Unmarshal(raw, &name) != nil {
		return fail(ErrMalformedDefinition, "%s: want a string name, got %s", AttrToolDefinition, shown(def["name"]))
	}
	if name != e.Tool {
		return fail(ErrMalformedDefinition, "%s: name %s differs from %s %s", AttrToolDefinition, quote(name), AttrToolName, quote(e.Tool))
	}
	for _, k := range [...]string{"inputSchema", "outputSchema", "annotations"} {
		raw, ok := def[k]
		if !ok || string(raw) == "null" {
			continue
		}
		if !strings.HasPrefix(string(raw), "{") {
			return fail(ErrMalformedDefinition, "%s: %s must be an object, got %s", AttrToolDefinition, k, shown(raw))
		}
	}
	return nil
}

// jsonReason is a JSON error without the package's prefix.
func jsonReason(err error) string { return strings.TrimPrefix(err.Error(), "json: ") }

// shown is a raw JSON value for a message, cut to 40 bytes; "nothing" when
// absent.
func shown(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	if len(raw) > 40 {
		return string(raw[:40]) + "…"
	}
	return string(raw)
}
