package otelschema

import (
	"reflect"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// TestLegacyNamesMapToCurrent: every name of an earlier release is read as
// a current name of the conventions, and none is a current name itself.
func TestLegacyNamesMapToCurrent(t *testing.T) {
	names := LegacyNames()
	if len(names) != len(legacyNames) {
		t.Fatalf("LegacyNames has %d names, the table %d", len(names), len(legacyNames))
	}
	for _, old := range names {
		now, ok := CurrentName(old)
		if !ok {
			t.Errorf("%s is not read", old)
			continue
		}
		if _, current := attrByName[old]; current {
			t.Errorf("%s is a current attribute name", old)
		}
		_, isEvent := ParseEventName(now)
		_, isAttr := attrByName[now]
		if !isEvent && !isAttr && now != OutcomeInferredAttr {
			t.Errorf("%s is read as %s, which is neither an event nor an attribute", old, now)
		}
	}
	for _, want := range []string{"mcp.drift.call", "mcp.drift.outcome", "mcp.drift.revision.client.source", "mcp.client.name", "mcp.client.version"} {
		if _, ok := CurrentName(want); !ok {
			t.Errorf("%s is not among the legacy names", want)
		}
	}
	if _, ok := CurrentName("mcp.drift.client.name"); ok {
		t.Error("mcp.drift.client.name never existed, and must not be read")
	}
	for i := range registry {
		if n := registry[i].Name; strings.HasPrefix(n, LegacyPrefix) || strings.HasPrefix(n, "mcp.client.") {
			t.Errorf("attribute %s is still under a legacy name", n)
		}
	}
	if got := EventCall.Stored(); got != "mcp.drift.call" {
		t.Errorf("EventCall.Stored() = %q", got)
	}
}

// legacyCall is callAttrs under the names of earlier releases.
func legacyCall() []kv {
	return []kv{
		{"gen_ai.tool.name", "create_invoice"},
		{"mcp.drift.outcome", "normalized"},
		{"mcp.drift.revision.client", "7"},
		{"mcp.drift.revision.server", "9"},
		{"mcp.client.name", "claude-code"},
		{"mcp.client.version", "2.1.0"},
		{"mcp.drift.side_effect.started", true},
	}
}

// TestLegacyNamesDecodeAsCurrent: a record under the old names decodes to
// the event its current names give, through both decoders, and each old
// name is counted once per use.
func TestLegacyNamesDecodeAsCurrent(t *testing.T) {
	current := []kv{
		{AttrToolName, "create_invoice"},
		{AttrOutcome, "normalized"},
		{AttrRevisionClient, "7"},
		{AttrRevisionServer, "9"},
		{AttrClientName, "claude-code"},
		{AttrClientVersion, "2.1.0"},
		{AttrSideEffectStarted, true},
	}
	d := testDecoder()
	want, res := d.DecodeLogs(logsWith(t, testResource, EventCall.String(), current), nil)
	if res.Accepted != 1 || res.Legacy != nil {
		t.Fatalf("current names: %+v", res)
	}
	old := logsWith(t, testResource, "mcp.drift.call", legacyCall(), legacyCall())
	body, err := plogotlp.NewExportRequestFromLogs(old).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	fast, fres, err := d.DecodeLogsProto(body, nil)
	if err != nil {
		t.Fatal(err)
	}
	slow, sres := d.DecodeLogs(old, nil)
	for name, c := range map[string]struct {
		evs []Event
		res Result
	}{"pdata": {slow, sres}, "wire": {fast, fres}} {
		if c.res.Accepted != 2 || len(c.evs) != 2 {
			t.Fatalf("%s: legacy names: %+v %s", name, c.res, c.res.Message())
		}
		got := c.evs[0]
		if got.ID != want[0].ID || !reflect.DeepEqual(got, want[0]) {
			t.Errorf("%s: legacy names decode to\n %+v\nwant\n %+v", name, got, want[0])
		}
		counts := map[string]int{}
		for i, n := range c.res.Legacy {
			if n > 0 {
				counts[LegacyNames()[i]] = n
			}
		}
		wantCounts := map[string]int{"mcp.drift.call": 2, "mcp.drift.outcome": 2, "mcp.drift.revision.client": 2,
			"mcp.drift.revision.server": 2, "mcp.client.name": 2, "mcp.client.version": 2, "mcp.drift.side_effect.started": 2}
		if !reflect.DeepEqual(counts, wantCounts) {
			t.Errorf("%s: legacy counts %v, want %v", name, counts, wantCounts)
		}
	}

	// The deprecated event.name attribute carrying an old name.
	fallback := logsWith(t, testResource, "", append(legacyCall(), kv{AttrEventName, "mcp.drift.call"}))
	if evs, res := d.DecodeLogs(fallback, nil); res.Accepted != 1 || evs[0].Name != EventCall {
		t.Errorf("event.name = mcp.drift.call: %+v", res)
	}
	// An unknown name under the old prefix is rejected, as under the new.
	if _, res := d.DecodeLogs(logsWith(t, testResource, "mcp.drift.calls", legacyCall()), nil); res.Rejected != 1 {
		t.Errorf("mcp.drift.calls: %+v, want a rejection", res)
	}
}

// TestLegacyNamesOnSpans: the old names on a span are read too, and an old
// inferred-outcome marker sent by a span is dropped like the current one.
func TestLegacyNamesOnSpans(t *testing.T) {
	sp := serverCall(kv{"mcp.drift.outcome", "current"}, kv{"mcp.drift.outcome.inferred", "true"}, kv{"mcp.client.name", "cursor"})
	evs, res := testDecoder().DecodeTraces(tracesWith(t, testResource, sp), nil)
	if res.Accepted != 1 {
		t.Fatalf("%+v %s", res, res.Message())
	}
	e := evs[0]
	if e.Outcome != OutcomeCurrent || e.ClientName != "cursor" {
		t.Errorf("event %+v", e)
	}
	if _, ok := e.Attributes["mcp.drift.outcome.inferred"]; ok {
		t.Error("a span marked its own outcome inferred under the old name")
	}
	if n := countOf(res, "mcp.client.name"); n != 1 {
		t.Errorf("mcp.client.name counted %d times", n)
	}
}

func countOf(res Result, name string) int {
	for i, n := range LegacyNames() {
		if n == name && res.Legacy != nil {
			return res.Legacy[i]
		}
	}
	return 0
}
