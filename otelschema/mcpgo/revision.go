package mcpgo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/otelschema/jcs"
)

// DigestPrefix prefixes revisions computed by Digest.
const DigestPrefix = "sha256:"

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

// Short returns a revision for display: a digest cut to its first 12 hex
// digits, any other revision unchanged.
func Short(rev string) string {
	if len(rev) > len(DigestPrefix)+12 && rev[:len(DigestPrefix)] == DigestPrefix {
		return rev[len(DigestPrefix) : len(DigestPrefix)+12]
	}
	return rev
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
