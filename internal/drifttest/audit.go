package drifttest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/argschema"
	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// auditPath is the API endpoint of the call audit.
const auditPath = "/api/v1/audit/calls"

// Audit reads, from mcpdrift's call audit, the call events the server
// under test sent for the test's calls, to confirm what the answers say on
// the server's side: the outcome, the adapter, whether a side effect
// started, and the arguments before and after normalisation. The server
// must send its drift events to that mcpdrift; the token needs the audit
// scope when the API runs with tokens.
type Audit struct {
	// Client reads the API.
	Client *apiclient.Client
	// Wait is how long to wait for the events to be stored; 0 means 30
	// seconds.
	Wait time.Duration
}

// Confirmation is what the server's call event says of one call.
type Confirmation struct {
	// Found says whether the event was in the audit by the time the wait
	// ended; the fields below are empty when it was not.
	Found bool `json:"found"`
	// Outcome, AdapterID and SideEffectStarted are the event's.
	Outcome           string `json:"outcome,omitempty"`
	AdapterID         string `json:"adapter_id,omitempty"`
	SideEffectStarted bool   `json:"side_effect_started,omitempty"`
	// ArgsNormalized are the arguments the adapter produced, as stored
	// (redacted at ingest per mcpdrift's configuration).
	ArgsNormalized string `json:"args_normalized,omitempty"`
	// Dropped are the fields the call sent whose value the normalised
	// arguments no longer carry under any name.
	Dropped []string `json:"dropped,omitempty"`
}

// Confirm reads the audit rows of the declared pass (by run id) and of
// each stock session (by session id: the stdio transport has none, so
// its stock calls stay unconfirmed), matches them to results, and judges
// each result again with what its event says (Reconfirm).
func (a Audit) Confirm(ctx context.Context, runID string, results []Result) error {
	wait := a.Wait
	if wait <= 0 {
		wait = 30 * time.Second
	}
	type key struct{ filter, value string }
	want := map[key][]int{}
	for i, r := range results {
		switch {
		case r.Answer == nil:
		case r.Pass == PassDeclared:
			want[key{"run", runID}] = append(want[key{"run", runID}], i)
		case r.SessionID != "":
			want[key{"session", r.SessionID}] = append(want[key{"session", r.SessionID}], i)
		}
	}
	keys := make([]key, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].value < keys[j].value })
	deadline := time.Now().Add(wait)
	for _, k := range keys {
		idx := want[k]
		var rows []apiv1.AuditRow
		for {
			var err error
			if rows, err = a.rows(ctx, k.filter, k.value); err != nil {
				return err
			}
			if len(rows) >= len(idx) || time.Now().After(deadline) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
		match(results, idx, rows)
	}
	for i := range results {
		if results[i].Confirmed != nil {
			results[i].Verdict, results[i].Reason = Reconfirm(results[i])
		}
	}
	return nil
}

// rows reads every audit row of a run or a session, oldest first.
func (a Audit) rows(ctx context.Context, filter, value string) ([]apiv1.AuditRow, error) {
	var out []apiv1.AuditRow
	q := url.Values{filter: {value}}
	for page := 0; page < 100; page++ {
		var body apiv1.ReportBody[apiv1.AuditRow]
		if err := a.Client.GetJSON(ctx, auditPath, q, &body); err != nil {
			return nil, fmt.Errorf("cannot read the audit of %s %s: %w", filter, value, err)
		}
		out = append(out, body.Rows...)
		if body.Next == "" {
			return out, nil
		}
		q.Set("cursor", body.Next)
	}
	return out, nil
}

// match gives each result of idx its row: by request id when it has one,
// else the next unused row of its tool, in order.
func match(results []Result, idx []int, rows []apiv1.AuditRow) {
	used := make([]bool, len(rows))
	for _, i := range idx {
		r := &results[i]
		j := slices.IndexFunc(rows, func(row apiv1.AuditRow) bool { return r.RequestID != "" && row.RequestID == r.RequestID })
		if r.RequestID == "" {
			for k, row := range rows {
				if !used[k] && row.Tool == r.Tool {
					j = k
					break
				}
			}
		}
		if j < 0 {
			r.Confirmed = &Confirmation{}
			continue
		}
		used[j] = true
		row := rows[j]
		r.Confirmed = &Confirmation{Found: true, Outcome: row.Outcome, AdapterID: row.AdapterID,
			SideEffectStarted: row.SideEffectStarted, ArgsNormalized: row.ArgsNormalized}
		if row.Outcome == otelschema.OutcomeNormalized.String() {
			r.Confirmed.Dropped = dropped(row.ArgsRaw, row.ArgsNormalized)
		}
	}
}

// dropped returns the fields of raw whose value no part of normalized
// holds, at any depth, named by their path ("target.ttl"): a rename or a
// move keeps the value elsewhere, a dropped field loses it. An object
// whose value is not found whole is looked into, field by field, so that
// what was lost inside it is named; anything else (a scalar, an array)
// not found is dropped whole. Either side not a JSON object (not
// recorded, or redacted whole) yields none.
func dropped(raw, normalized string) []string {
	var r, n map[string]any
	if json.Unmarshal([]byte(raw), &r) != nil || json.Unmarshal([]byte(normalized), &n) != nil {
		return nil
	}
	var held []any
	var collect func(v any)
	collect = func(v any) {
		held = append(held, v)
		switch x := v.(type) {
		case map[string]any:
			for _, w := range x {
				collect(w)
			}
		case []any:
			for _, w := range x {
				collect(w)
			}
		}
	}
	for _, w := range n {
		collect(w)
	}
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		for _, h := range held {
			if reflect.DeepEqual(v, h) {
				return
			}
		}
		if m, ok := v.(map[string]any); ok && len(m) > 0 {
			for k, w := range m {
				walk(path+"."+k, w)
			}
			return
		}
		out = append(out, path)
	}
	for k, v := range r {
		walk(k, v)
	}
	slices.Sort(out)
	return out
}

// Reconfirm judges a result again with its call event: the event's word
// on a side effect and an adapter outweighs the answer's silence, and a
// normalisation that lost a field fails.
func Reconfirm(r Result) (Verdict, string) {
	v, why := r.Verdict, r.Reason
	c := r.Confirmed
	if c == nil || !c.Found {
		return v, why
	}
	switch {
	case c.SideEffectStarted && (v == VerdictRejected || v == VerdictRemoved):
		return VerdictAfterSideEffect, fmt.Sprintf("the answer said no side effect, but the server's call event (outcome %s) says one had started", c.Outcome)
	case c.Outcome != otelschema.OutcomeNormalized.String():
		return v, why
	case len(c.Dropped) > 0:
		return VerdictDroppedField, fmt.Sprintf("adapter `%s` dropped %s: the handler ran without what the call sent (normalised: %s)",
			c.AdapterID, quoteList(c.Dropped), cell(c.ArgsNormalized))
	case v == VerdictUnadapted || v == VerdictCurrent:
		return VerdictNormalized, fmt.Sprintf("normalised by adapter `%s`, as the server's call event says", c.AdapterID)
	}
	return v, why
}

func quoteList(fields []string) string {
	out := ""
	for i, f := range fields {
		if i > 0 {
			out += ", "
		}
		out += "`" + f + "`"
	}
	return out
}

// maxSampleRows bounds the audit rows read per tool for a sample.
const maxSampleRows = 200

// Sample returns, per changed or removed tool of check, up to n argument
// objects agents really sent when planning with the old revision: the
// audit's arguments of calls whose client revision is the old list's, as
// stored (redacted at ingest: a secret stays a redaction marker), that the
// old input schema accepts, each once, from the tool's first
// maxSampleRows rows in the audit's window. The drift test's own calls
// (client ClientName) are left out.
func (a Audit) Sample(ctx context.Context, old toolchange.List, check toolchange.Report, n int) (map[string][]json.RawMessage, error) {
	out := map[string][]json.RawMessage{}
	for _, c := range check.Tools {
		if c.Status != toolchange.StatusChanged && c.Status != toolchange.StatusRemoved {
			continue
		}
		o, _ := old.Tool(c.Tool)
		schema, err := argschema.Compile(o.Input)
		if err != nil {
			return nil, fmt.Errorf("tool %q: the old input schema does not compile: %w", c.Tool, err)
		}
		var body apiv1.ReportBody[apiv1.AuditRow]
		q := url.Values{"tool": {c.Tool}, "limit": {fmt.Sprint(maxSampleRows)}}
		if err := a.Client.GetJSON(ctx, auditPath, q, &body); err != nil {
			return nil, fmt.Errorf("cannot read the audit of tool %s: %w", c.Tool, err)
		}
		seen := map[string]bool{}
		for _, row := range body.Rows {
			if len(out[c.Tool]) >= n {
				break
			}
			if row.ClientName == ClientName || row.RevisionClient != c.OldRevision || seen[row.ArgsRaw] {
				continue
			}
			var obj map[string]any
			if json.Unmarshal([]byte(row.ArgsRaw), &obj) != nil || schema.Validate(json.RawMessage(row.ArgsRaw)) != nil {
				continue
			}
			seen[row.ArgsRaw] = true
			out[c.Tool] = append(out[c.Tool], json.RawMessage(row.ArgsRaw))
		}
	}
	return out, nil
}
