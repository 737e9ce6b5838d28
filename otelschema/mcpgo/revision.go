package mcpgo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/otelschema/jcs"
)

// DigestPrefix prefixes revisions computed by Digest
// (otelschema.AlgorithmV1).
const DigestPrefix = otelschema.DigestPrefixV1

// ToolDigestPrefix prefixes a SEP-2636 tool digest recorded as a revision
// (otelschema.AlgorithmTool); see ToolRevision.
const ToolDigestPrefix = otelschema.DigestPrefixTool

// Digest returns the revision of a tool definition: "sha256:" and the hex
// SHA-256 of the RFC 8785 canonical JSON of its name, inputSchema,
// outputSchema and annotations (those present). Title, description, icons
// and _meta do not change it.
//
// Server and client compute the same digest from the same definition. An
// explicit revision (Contract.Revision, advertised under MetaRevision) is
// preferred when the definition crosses implementations whose JSON
// encodings of annotations differ.
func Digest(t *mcp.Tool) (string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("cannot marshal tool %q: %w", t.Name, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return "", fmt.Errorf("cannot read tool %q: %w", t.Name, err)
	}
	def := make(map[string]json.RawMessage, 4)
	for _, k := range [...]string{"name", "inputSchema", "outputSchema", "annotations"} {
		if v, ok := all[k]; ok && string(v) != "null" {
			def[k] = v
		}
	}
	b, err := json.Marshal(def)
	if err != nil {
		return "", fmt.Errorf("cannot marshal tool %q: %w", t.Name, err)
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", fmt.Errorf("cannot canonicalise tool %q: %w", t.Name, err)
	}
	sum := sha256.Sum256(canon)
	return DigestPrefix + hex.EncodeToString(sum[:]), nil
}

// Definition returns a tool definition as a dev.mcpdrift.advertised event
// carries it (otelschema.AttrToolDefinition): the definition as tools/list
// serves it, RFC 8785 canonical JSON, without _meta (which may hold keys
// private to the server) and icons (which can be large data URLs and say
// nothing of the contract).
func Definition(t *mcp.Tool) (string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("cannot marshal tool %q: %w", t.Name, err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return "", fmt.Errorf("cannot read tool %q: %w", t.Name, err)
	}
	delete(all, "_meta")
	delete(all, "icons")
	b, err := json.Marshal(all)
	if err != nil {
		return "", fmt.Errorf("cannot marshal tool %q: %w", t.Name, err)
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", fmt.Errorf("cannot canonicalise tool %q: %w", t.Name, err)
	}
	return string(canon), nil
}

// Short returns a revision for display: a digest of either form cut to
// its first 12 hex digits, any other revision unchanged.
func Short(rev string) string {
	for _, p := range [...]string{DigestPrefix, ToolDigestPrefix} {
		if len(rev) > len(p)+12 && rev[:len(p)] == p {
			return rev[len(p) : len(p)+12]
		}
	}
	return rev
}

// ToolDigest returns the SEP-2636 digest of a tool definition as the Go
// SDK serves it: "sha256:" and the hex SHA-256 of the RFC 8785 form of the
// whole Tool object, title, description, icons and _meta included, as a
// tools/manifest entry carries it. See ToolDigestJSON for what it leaves
// out.
func ToolDigest(t *mcp.Tool) (string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("cannot marshal tool %q: %w", t.Name, err)
	}
	return ToolDigestJSON(raw)
}

// ToolDigestJSON is ToolDigest of a Tool object as served (the JSON of
// one tools/list entry), whatever SDK serves it. The one member it leaves
// out is MetaRevision in _meta (and _meta, when that key was its only
// one): that key carries the revision, which may be this digest, so the
// digest is the one of the Tool before mcpdrift advertised a revision on
// it. A Tool without that key gets exactly the proposal's digest.
func ToolDigestJSON(tool []byte) (string, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(tool, &all); err != nil {
		return "", fmt.Errorf("cannot read a tool object of %d bytes: %w", len(tool), err)
	}
	if all == nil {
		return "", fmt.Errorf("a tool of %d bytes is not a JSON object", len(tool))
	}
	if m, ok := all["_meta"]; ok {
		var meta map[string]json.RawMessage
		if err := json.Unmarshal(m, &meta); err == nil && meta != nil {
			if _, ok := meta[MetaRevision]; ok {
				delete(meta, MetaRevision)
				if len(meta) == 0 {
					delete(all, "_meta")
				} else if all["_meta"], err = json.Marshal(meta); err != nil {
					return "", fmt.Errorf("cannot marshal the _meta of a tool: %w", err)
				}
			}
		}
	}
	b, err := json.Marshal(all)
	if err != nil {
		return "", fmt.Errorf("cannot marshal a tool object of %d bytes: %w", len(tool), err)
	}
	canon, err := jcs.Transform(b)
	if err != nil {
		return "", fmt.Errorf("cannot canonicalise a tool object of %d bytes: %w", len(tool), err)
	}
	sum := sha256.Sum256(canon)
	return DigestPrefix + hex.EncodeToString(sum[:]), nil
}

// ToolRevision returns the revision that records a SEP-2636 tool digest
// ("sha256:" and 64 lowercase hex digits, as ToolDigest and a
// tools/manifest entry write it): ToolDigestPrefix and the same hex, so
// that the revision's form says its algorithm (otelschema.AlgorithmOf)
// and it is never read as a v1 Digest. Anything else is an error.
func ToolRevision(digest string) (string, error) {
	if otelschema.AlgorithmOf(digest) != otelschema.AlgorithmV1 {
		return "", fmt.Errorf("tool digest %q is not \"sha256:\" and 64 lowercase hex digits", digest)
	}
	return ToolDigestPrefix + digest[len(DigestPrefix):], nil
}

// Advertised returns the revision a tool definition advertises: its
// MetaRevision, else its Digest. Clients record it as the revision they
// plan with, and a release check compares tools/list results by it.
func Advertised(t *mcp.Tool) (string, error) {
	if r := metaString(t.Meta, MetaRevision); r != "" {
		return r, nil
	}
	return Digest(t)
}

// advertised is Advertised, "" when the definition cannot be digested.
func advertised(t *mcp.Tool) string {
	r, err := Advertised(t)
	if err != nil {
		return ""
	}
	return r
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

func formatNumber(f float64) string {
	if f == float64(int64(f)) {
		return itoa(int64(f))
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
