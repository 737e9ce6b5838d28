package main

import (
	"strings"
	"testing"
)

// TestRevisions prints the fixture's registry: deploy_preview 1 (deployer-0,
// 3 advertisements) and 2 (deployer-1), which overlapped 10 minutes, and
// their diff.
func TestRevisions(t *testing.T) {
	base, _ := fixtureAPI(t)
	code, out, errOut := mcpdrift(t, "revisions", "-api", base, "deploy_preview")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, w := range []string{
		"1         declared   2099-03-06 12:00:00Z  2099-03-08 12:10:00Z  1          -         -        -",
		"2         declared   2099-03-08 12:00:00Z  2099-03-16 11:55:00Z  1          -         10m      bounded_migration: `dry_run` was removed",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("the history lacks %q:\n%s", w, out)
		}
	}
	goldenFile(t, "revisions.txt", out)

	code, out, errOut = mcpdrift(t, "revisions", "-api", base, "-old", "1", "-new", "2", "deploy_preview")
	if code != 0 || !strings.Contains(out, "Old arguments stay valid: no (counterexample {\"branch\":\"a\",\"dry_run\":true})") {
		t.Fatalf("diff: exit %d: %s%s", code, out, errOut)
	}
	goldenFile(t, "revisions_diff.txt", out)

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"revisions", "-api", base}, "want: mcpdrift revisions [flags] TOOL"},
		{[]string{"revisions", "-api", base, "-old", "1", "deploy_preview"}, "-old and -new go together"},
		{[]string{"revisions", "-api", base, "-old", "1", "-new", "7", "deploy_preview"}, `unknown revision "7"`},
	} {
		if code, _, errOut := mcpdrift(t, c.args...); code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %s", c.args, code, errOut)
		}
	}
}
