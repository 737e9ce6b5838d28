package otelschema

import "strings"

// A revision is a string, and its form says how it was made. The form is
// the whole record of the algorithm: a revision stored before a form
// existed keeps the meaning it had, and no column or attribute is needed
// to read a stored revision's algorithm.
const (
	// DigestPrefixV1 prefixes mcpdrift's own digest (AlgorithmV1): the
	// SHA-256 of the RFC 8785 form of a tool's name, inputSchema,
	// outputSchema and annotations. Every revision mcpdrift computed
	// before SEP-2636 digests were accepted has this form.
	DigestPrefixV1 = "sha256:"
	// DigestPrefixTool prefixes a SEP-2636 tool digest (AlgorithmTool):
	// the SHA-256 of the RFC 8785 form of the whole Tool object. The
	// proposal writes that digest "sha256:" and the hex; mcpdrift
	// records it under this prefix instead, so that it cannot be read as
	// a v1 digest of another definition: the hex is the proposal's.
	DigestPrefixTool = "sha256-jcs-tool:"
)

// RevisionAlgorithm says how a revision was made, as its form tells.
type RevisionAlgorithm string

// Revision algorithms.
const (
	// AlgorithmV1 is mcpdrift's digest: DigestPrefixV1 and 64 lowercase
	// hex digits.
	AlgorithmV1 RevisionAlgorithm = "mcpdrift-v1"
	// AlgorithmTool is a SEP-2636 tool digest: DigestPrefixTool and 64
	// lowercase hex digits.
	AlgorithmTool RevisionAlgorithm = "sha256-jcs-tool"
	// AlgorithmDeclared is any other revision: a name the server chose
	// ("2", FastMCP's "v2"), not computed from the definition.
	AlgorithmDeclared RevisionAlgorithm = "declared"
)

// AlgorithmOf returns the algorithm of rev from its form; "" for the empty
// revision (unknown).
func AlgorithmOf(rev string) RevisionAlgorithm {
	switch {
	case rev == "":
		return ""
	case isHex64(rev, DigestPrefixV1):
		return AlgorithmV1
	case isHex64(rev, DigestPrefixTool):
		return AlgorithmTool
	}
	return AlgorithmDeclared
}

// Label says the algorithm for a person, as reports and the registry
// print it.
func (a RevisionAlgorithm) Label() string {
	switch a {
	case AlgorithmV1:
		return "mcpdrift v1 (name+schemas+annotations)"
	case AlgorithmTool:
		return "sha256-jcs-tool (SEP-2636)"
	case AlgorithmDeclared:
		return "declared"
	}
	return ""
}

// RevisionAlgorithms are the algorithms, in the order the conventions list
// them.
func RevisionAlgorithms() []RevisionAlgorithm {
	return []RevisionAlgorithm{AlgorithmV1, AlgorithmTool, AlgorithmDeclared}
}

// isHex64 reports whether s is prefix and 64 lowercase hex digits.
func isHex64(s, prefix string) bool {
	h, ok := strings.CutPrefix(s, prefix)
	if !ok || len(h) != 64 {
		return false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
