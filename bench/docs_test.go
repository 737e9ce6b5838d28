package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocsFromResults regenerates README.md's and docs/capacity.md's
// sections from the results files checked in under bench/results/ and
// fails when a file differs from what its results give: a table pasted or
// edited by hand, a README figure that the results do not hold, a results
// file replaced without `go generate ./bench`. It runs no bench.
func TestDocsFromResults(t *testing.T) {
	const root = ".."
	for _, name := range renderedDocs {
		doc, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(doc), markerPrefix) {
			t.Errorf("%s has no section generated from bench/results/", name)
			continue
		}
		want, err := renderDoc(doc, root)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if line, got, w := firstLineDiff(string(doc), string(want)); line > 0 {
			t.Errorf("%s is out of date with its results (run go generate ./bench); first difference at line %d:\n file: %s\n want: %s", name, line, got, w)
		}
	}
}
