package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// conventions is the machine-readable form of the conventions: what an
// instrumentation in another language needs to emit events the ingester
// accepts and to speak to mcpgo on the other side of a call.
type conventions struct {
	Comment    string              `json:"comment"`
	Events     []eventJSON         `json:"events"`
	Attributes []attributeJSON     `json:"attributes"`
	Enums      map[string][]string `json:"enums"`
	// Meta holds the _meta keys mcpgo reads and writes, by role.
	Meta map[string]string `json:"meta"`
	// ErrorCodes and RequiredActions are the values of a rejection's
	// structured content (error_code, required_action).
	ErrorCodes      map[string]string `json:"error_codes"`
	RequiredActions map[string]string `json:"required_actions"`
	// Digest says how a tool definition's revision is computed.
	Digest digestJSON `json:"digest"`
}

type eventJSON struct {
	// Key names the event in code; it stays when Name changes.
	Key       string   `json:"key"`
	Name      string   `json:"name"`
	EmittedBy string   `json:"emitted_by"`
	Required  []string `json:"required"`
	Doc       string   `json:"doc"`
}

type attributeJSON struct {
	// Key names the attribute in code; it stays when Name changes
	// (attributeKeys).
	Key        string   `json:"key"`
	Name       string   `json:"name"`
	Type       string   `json:"type"`
	Values     []string `json:"values,omitempty"`
	Events     []string `json:"events"`
	RequiredOn []string `json:"required_on,omitempty"`
	Resource   bool     `json:"resource,omitempty"`
	Doc        string   `json:"doc"`
}

type digestJSON struct {
	Prefix      string          `json:"prefix"`
	Algorithm   string          `json:"algorithm"`
	Fields      []string        `json:"fields"`
	Annotations annotationsJSON `json:"annotations"`
	Doc         string          `json:"doc"`
	// Tool says the SEP-2636 tool digest and how a revision records it.
	Tool toolDigestJSON `json:"tool"`
	// Forms are the forms a revision takes, each with its algorithm.
	Forms []revisionFormJSON `json:"forms"`
}

// toolDigestJSON says the SEP-2636 tool digest: over the whole Tool
// object, written with Prefix, recorded as a revision under
// RevisionPrefix.
type toolDigestJSON struct {
	Prefix         string `json:"prefix"`
	RevisionPrefix string `json:"revision_prefix"`
	// Omitted is the _meta key left out of the object digested.
	OmittedMeta string `json:"omitted_meta"`
	Doc         string `json:"doc"`
}

// revisionFormJSON is one form of revision: Prefix and 64 lowercase hex
// digits, or (Prefix empty) any other string.
type revisionFormJSON struct {
	Algorithm string `json:"algorithm"`
	Prefix    string `json:"prefix,omitempty"`
	Label     string `json:"label"`
}

// annotationsJSON says how the annotations enter the digest: as the MCP Go
// SDK encodes its ToolAnnotations, which is what mcpgo digests.
type annotationsJSON struct {
	// Members are the members kept, in the SDK's order; any other member
	// is left out.
	Members []string `json:"members"`
	// Defaults are the members always written, with the value written
	// when a definition leaves them out (or sets them to null).
	Defaults map[string]any `json:"defaults"`
	Doc      string         `json:"doc"`
}

// sdkAnnotations reads the members of the Go SDK's ToolAnnotations from its
// JSON encoding: those of an empty value are the defaults, those of a value
// with every member set are all the members.
func sdkAnnotations() (annotationsJSON, error) {
	yes := true
	var a annotationsJSON
	empty, err := json.Marshal(mcp.ToolAnnotations{})
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(empty, &a.Defaults); err != nil {
		return a, err
	}
	full, err := json.Marshal(mcp.ToolAnnotations{DestructiveHint: &yes, IdempotentHint: true, OpenWorldHint: &yes, ReadOnlyHint: true, Title: "t"})
	if err != nil {
		return a, err
	}
	// The members in the SDK's order, read from the encoding itself.
	dec := json.NewDecoder(strings.NewReader(string(full)))
	if _, err := dec.Token(); err != nil {
		return a, err
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return a, err
		}
		a.Members = append(a.Members, k.(string))
		var skip any
		if err := dec.Decode(&skip); err != nil {
			return a, err
		}
	}
	a.Doc = "The annotations enter the digest as the MCP Go SDK encodes them: only the members listed; " +
		"those in defaults always, with their default when absent or null; the others when present, not null and not the empty string."
	return a, nil
}

func names(es []otelschema.EventName) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.String()
	}
	return out
}

// conventionsJSON renders the conventions, indented, with a final newline.
func conventionsJSON() ([]byte, error) {
	ann, err := sdkAnnotations()
	if err != nil {
		return nil, fmt.Errorf("cannot read the SDK's annotations: %w", err)
	}
	c := conventions{
		Comment: "Generated by `go generate ./otelschema` from the otelschema registry and otelschema/mcpgo; DO NOT EDIT.",
		Enums:   map[string][]string{},
		Meta: map[string]string{
			"revision":        mcpgo.MetaRevision,
			"request_id":      mcpgo.MetaRequestID,
			"retry_of":        mcpgo.MetaRetryOf,
			"retry_attempt":   mcpgo.MetaRetryAttempt,
			"retry_automatic": mcpgo.MetaRetryAutomatic,
			"retry_revision":  mcpgo.MetaRetryRevision,
			"retry_after":     mcpgo.MetaRetryAfter,
			"run_id":          mcpgo.MetaRunID,
			"approval":        mcpgo.MetaApproval,
			"idempotency_key": mcpgo.MetaIdempotencyKey,
			"adapter_id":      mcpgo.MetaAdapterID,
		},
		ErrorCodes: map[string]string{
			"stale_tool_schema":        mcpgo.CodeStaleToolSchema,
			"incompatible_tool_schema": mcpgo.CodeIncompatibleToolSchema,
			"invalid_arguments":        mcpgo.CodeInvalidArguments,
			"tool_removed":             mcpgo.CodeToolRemoved,
		},
		RequiredActions: map[string]string{
			"refresh_tools": mcpgo.ActionRefreshTools,
			"fix_arguments": mcpgo.ActionFixArguments,
		},
		Digest: digestJSON{
			Prefix:      mcpgo.DigestPrefix,
			Algorithm:   "SHA-256 of the RFC 8785 (JCS) canonical JSON",
			Fields:      []string{"name", "inputSchema", "outputSchema", "annotations"},
			Annotations: ann,
			Doc:         "The revision of a tool definition without an explicit one: the prefix and the lowercase hex SHA-256 of the canonical JSON of an object holding those of the fields that are present and not null, the annotations as `annotations` says.",
			Tool: toolDigestJSON{
				Prefix:         mcpgo.DigestPrefix,
				RevisionPrefix: mcpgo.ToolDigestPrefix,
				OmittedMeta:    mcpgo.MetaRevision,
				Doc:            "SEP-2636's tool digest: the prefix and the lowercase hex SHA-256 of the canonical JSON of the whole Tool object as served, `omitted_meta` left out of its `_meta` (and `_meta` when that was its only key). A revision records it as `revision_prefix` and the same hex.",
			},
			Forms: revisionForms(),
		},
	}
	for _, s := range otelschema.Events() {
		key, ok := strings.CutPrefix(s.Name.String(), otelschema.EventNamePrefix)
		if !ok {
			return nil, fmt.Errorf("event %s is not under %s", s.Name, otelschema.EventNamePrefix)
		}
		c.Events = append(c.Events, eventJSON{Key: key, Name: s.Name.String(), EmittedBy: s.EmittedBy,
			Required: otelschema.RequiredAttributes(s.Name), Doc: s.Doc})
	}
	for _, a := range otelschema.Registry() {
		key := attributeKeys[a.Name]
		if key == "" {
			return nil, fmt.Errorf("attribute %s has no key in attributeKeys", a.Name)
		}
		c.Attributes = append(c.Attributes, attributeJSON{Key: key, Name: a.Name, Type: a.Type.String(), Values: a.Values,
			Events: names(a.Events), RequiredOn: names(a.Required), Resource: a.Resource, Doc: a.Doc})
		if a.Type == otelschema.TypeEnum {
			c.Enums[a.Name] = a.Values
		}
	}
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// revisionForms lists otelschema.RevisionAlgorithms with their prefixes.
func revisionForms() []revisionFormJSON {
	prefix := map[otelschema.RevisionAlgorithm]string{otelschema.AlgorithmV1: otelschema.DigestPrefixV1, otelschema.AlgorithmTool: otelschema.DigestPrefixTool}
	var out []revisionFormJSON
	for _, a := range otelschema.RevisionAlgorithms() {
		out = append(out, revisionFormJSON{Algorithm: string(a), Prefix: prefix[a], Label: a.Label()})
	}
	return out
}
