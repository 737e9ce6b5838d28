package otelschema

import "testing"

func TestAlgorithmOf(t *testing.T) {
	const hex = "615fd8f5d62bd3b04da6e6d665be42d48c0b3aeb51f5184674cf5a598a86db9d"
	for _, c := range []struct {
		rev  string
		want RevisionAlgorithm
	}{
		{"", ""},
		{"sha256:" + hex, AlgorithmV1},
		{"sha256-jcs-tool:" + hex, AlgorithmTool},
		{"2", AlgorithmDeclared},
		{"v2", AlgorithmDeclared},
		// Near misses of a digest are names a server chose.
		{"sha256:" + hex[:63], AlgorithmDeclared},
		{"sha256:" + hex + "0", AlgorithmDeclared},
		{"sha256:615FD8F5D62BD3B04DA6E6D665BE42D48C0B3AEB51F5184674CF5A598A86DB9D", AlgorithmDeclared},
		{"sha256-jcs-tool:" + hex[:12], AlgorithmDeclared},
		{"sha512:" + hex, AlgorithmDeclared},
	} {
		if got := AlgorithmOf(c.rev); got != c.want {
			t.Errorf("AlgorithmOf(%q) = %q, want %q", c.rev, got, c.want)
		}
	}
	for _, a := range RevisionAlgorithms() {
		if a.Label() == "" {
			t.Errorf("%s has no label", a)
		}
	}
	if AlgorithmTool.Label() != "sha256-jcs-tool (SEP-2636)" || AlgorithmV1.Label() != "mcpdrift v1 (name+schemas+annotations)" {
		t.Error("labels changed: the registry and reports print them")
	}
}
