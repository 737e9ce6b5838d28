package toolchange

import "testing"

func TestShortRev(t *testing.T) {
	const hex = "615fd8f5d62bd3b04da6e6d665be42d48c0b3aeb51f5184674cf5a598a86db9d"
	for _, c := range []struct{ rev, want string }{
		{"sha256:" + hex, hex[:12]},
		{"sha256-jcs-tool:" + hex, hex[:12]},
		{"2", "2"},
		{"sha256:abc", "sha256:abc"},
	} {
		if got := shortRev(c.rev); got != c.want {
			t.Errorf("shortRev(%q) = %q, want %q", c.rev, got, c.want)
		}
	}
}
