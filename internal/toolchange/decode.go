package toolchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// MaxListBytes bounds a tools/list document Decode accepts.
const MaxListBytes = 16 << 20

// ErrInvalidList is returned by Decode for a document that is not a
// tools/list result.
var ErrInvalidList = errors.New("invalid tools/list")

// List is one tools/list result: the tools a server advertises, by name.
type List struct {
	// Tools are the tools in the order the server listed them.
	Tools []Tool
	// Cache is the result's cache hint (MCP 2026-07-28, SEP-2549): how
	// long a client may keep the list, and for whom; nil without one.
	Cache *Cache
}

// Cache is a tools/list result's cache hint.
type Cache struct {
	// TTLMs is ttlMs: how many milliseconds a client may keep the list
	// without listing again.
	TTLMs int64 `json:"ttl_ms"`
	// Scope is cacheScope, as the server said it ("" when absent).
	Scope string `json:"cache_scope,omitempty"`
}

// TTL is TTLMs as a duration.
func (c *Cache) TTL() time.Duration { return time.Duration(c.TTLMs) * time.Millisecond }

// Tool is one tool definition of a tools/list result.
type Tool struct {
	// Name is the tool's name, unique in its list.
	Name string
	// Description is the tool's description, "" when it has none.
	Description string
	// Revision is the revision the definition advertises, computed as the
	// instrumentation computes it (mcpgo.Advertised): the explicit
	// revision under _meta, else the digest of the definition.
	Revision string
	// Input is the input schema, decoded as JSON (maps, slices, float64).
	Input any
	// Output is the output schema, nil when the tool declares none.
	Output any
	// Annotations are the tool's annotations as listed, nil when absent.
	Annotations map[string]any
}

// Tool returns the tool named name and whether the list has it.
func (l List) Tool(name string) (Tool, bool) {
	for _, t := range l.Tools {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// Decode reads a tools/list result as a server returns it: the result
// object {"tools": [...]}, the JSON-RPC response that carries it, or the
// bare array of tools. Each tool needs a name, unique in the list, and an
// inputSchema that is a JSON object; an outputSchema, when present, must be
// an object too. Pages (nextCursor) are not followed: the document must
// hold the whole list.
func Decode(data []byte) (List, error) {
	if len(data) > MaxListBytes {
		return List{}, fmt.Errorf("%w: %d bytes, more than %d", ErrInvalidList, len(data), MaxListBytes)
	}
	if !utf8.Valid(data) {
		return List{}, fmt.Errorf("%w: not valid UTF-8", ErrInvalidList)
	}
	raw, cache, err := toolsArray(data)
	if err != nil {
		return List{}, err
	}
	l := List{Cache: cache}
	seen := make(map[string]int, len(raw))
	for i, r := range raw {
		t, err := decodeTool(r)
		if err != nil {
			return List{}, fmt.Errorf("%w: tool %d: %w", ErrInvalidList, i, err)
		}
		if j, dup := seen[t.Name]; dup {
			return List{}, fmt.Errorf("%w: tools %d and %d are both named %q", ErrInvalidList, j, i, t.Name)
		}
		seen[t.Name] = i
		l.Tools = append(l.Tools, t)
	}
	return l, nil
}

// listResult is the part of a tools/list result toolsArray reads.
type listResult struct {
	Tools      *[]json.RawMessage `json:"tools"`
	NextCursor string             `json:"nextCursor"`
	TTLMs      *float64           `json:"ttlMs"`
	CacheScope string             `json:"cacheScope"`
}

// toolsArray finds the array of tools in a document, and the result's
// cache hint.
func toolsArray(data []byte) ([]json.RawMessage, *Cache, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var raw []json.RawMessage
		if err := json.Unmarshal(trimmed, &raw); err != nil {
			return nil, nil, fmt.Errorf("%w: cannot parse the array of tools of %d bytes: %w", ErrInvalidList, len(data), err)
		}
		return raw, nil, nil
	}
	var doc struct {
		listResult
		Result *listResult     `json:"result"`
		Error  json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(trimmed, &doc); err != nil {
		return nil, nil, fmt.Errorf("%w: cannot parse %d bytes: %w", ErrInvalidList, len(data), err)
	}
	res := &doc.listResult
	if res.Tools == nil && doc.Result != nil {
		res = doc.Result
	}
	switch {
	case len(doc.Error) > 0 && string(doc.Error) != "null":
		return nil, nil, fmt.Errorf("%w: the document is a JSON-RPC error response", ErrInvalidList)
	case res.Tools == nil:
		return nil, nil, fmt.Errorf("%w: no \"tools\" array (want a tools/list result, its JSON-RPC response, or an array of tools)", ErrInvalidList)
	case res.NextCursor != "":
		return nil, nil, fmt.Errorf("%w: the list has more pages (nextCursor %q): list every page into one document", ErrInvalidList, res.NextCursor)
	}
	var cache *Cache
	if res.TTLMs != nil {
		if *res.TTLMs < 0 || *res.TTLMs != float64(int64(*res.TTLMs)) {
			return nil, nil, fmt.Errorf("%w: ttlMs %v is not a count of milliseconds", ErrInvalidList, *res.TTLMs)
		}
		cache = &Cache{TTLMs: int64(*res.TTLMs), Scope: res.CacheScope}
	}
	return *res.Tools, cache, nil
}

func decodeTool(raw json.RawMessage) (Tool, error) {
	var fields struct {
		Name         *string         `json:"name"`
		Description  *string         `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema"`
		Annotations  json.RawMessage `json:"annotations"`
	}
	if err := json.Unmarshal(raw, &fields); err != nil {
		return Tool{}, fmt.Errorf("cannot parse: %w", err)
	}
	if fields.Name == nil || *fields.Name == "" {
		return Tool{}, errors.New("no name")
	}
	t := Tool{Name: *fields.Name}
	if fields.Description != nil {
		t.Description = *fields.Description
	}
	in, err := schemaObject(fields.InputSchema)
	if err != nil {
		return Tool{}, fmt.Errorf("tool %q: inputSchema: %w", t.Name, err)
	}
	if in == nil {
		return Tool{}, fmt.Errorf("tool %q: no inputSchema", t.Name)
	}
	t.Input = in
	out, err := schemaObject(fields.OutputSchema)
	if err != nil {
		return Tool{}, fmt.Errorf("tool %q: outputSchema: %w", t.Name, err)
	}
	if out != nil {
		t.Output = out
	}
	if len(fields.Annotations) > 0 && string(fields.Annotations) != "null" {
		if err := json.Unmarshal(fields.Annotations, &t.Annotations); err != nil {
			return Tool{}, fmt.Errorf("tool %q: annotations: %w", t.Name, err)
		}
	}
	var sdk mcp.Tool
	if err := json.Unmarshal(raw, &sdk); err != nil {
		return Tool{}, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	if t.Revision, err = mcpgo.Advertised(&sdk); err != nil {
		return Tool{}, err
	}
	return t, nil
}

// schemaObject decodes a schema that must be a JSON object; absent or null
// gives nil.
func schemaObject(raw json.RawMessage) (map[string]any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("a %s, not an object", jsonKind(v))
	}
	return m, nil
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
