package registry

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/queries"
)

// Diff is the comparison of two stored revisions of a tool.
type Diff struct {
	Tool        string `json:"tool"`
	Service     string `json:"service"`
	Environment string `json:"environment"`
	From        string `json:"from"`
	To          string `json:"to"`
	apiv1.RevisionChange
	// SchemaDiff is a line diff of the two definitions, each printed as
	// indented JSON with sorted keys: "-" lines only in From, "+" lines
	// only in To, " " lines in both.
	SchemaDiff string `json:"schema_diff"`
}

// DiffOf compares revisions from and to of the rows of one tool, service
// and environment (queries.ToolRevisions); ErrUnknownRevision names one
// the rows lack.
func DiffOf(rows []queries.ToolRevisionRow, from, to string) (Diff, error) {
	find := func(rev string) (queries.ToolRevisionRow, error) {
		for _, r := range rows {
			if r.Revision == rev {
				return r, nil
			}
		}
		return queries.ToolRevisionRow{}, fmt.Errorf("%w %q: the registry holds %d revisions of the tool", ErrUnknownRevision, rev, len(rows))
	}
	o, err := find(from)
	if err != nil {
		return Diff{}, err
	}
	n, err := find(to)
	if err != nil {
		return Diff{}, err
	}
	c, err := Compare(o, n)
	if err != nil {
		return Diff{}, err
	}
	return Diff{Tool: o.Tool, Service: o.Service, Environment: o.Environment, From: from, To: to, RevisionChange: c,
		SchemaDiff: lineDiff(pretty(o.Definition), pretty(n.Definition))}, nil
}

// pretty prints a definition as indented JSON with sorted keys, one value
// per line, so that a line diff shows the fields that changed.
func pretty(def string) []string {
	var v any
	if err := json.Unmarshal([]byte(def), &v); err != nil {
		return strings.Split(def, "\n")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v) // a decoded value always encodes
	return strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
}

// lineDiff is the diff of a and b through their longest common
// subsequence of lines: every line, prefixed "-", "+" or " ".
func lineDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			out.WriteString(" " + a[i] + "\n")
			i, j = i+1, j+1
		case j < m && (i == n || lcs[i][j+1] >= lcs[i+1][j]):
			out.WriteString("+" + b[j] + "\n")
			j++
		default:
			out.WriteString("-" + a[i] + "\n")
			i++
		}
	}
	return out.String()
}
