package queries

import (
	"reflect"
	"strings"
	"testing"
)

// TestShapeConditions renders every query with one optional condition at a
// time and checks that a parameter the condition binds appears in the SQL
// if and only if the shape asks for it: a filter left out when its value is
// set would silently widen a report, one kept when it is empty costs every
// call its parsing and planning.
func TestShapeConditions(t *testing.T) {
	r, err := New(nil, "mcpdrift")
	if err != nil {
		t.Fatal(err)
	}
	// The parameter each field of shape binds, as it appears in the SQL.
	conditions := []struct {
		field string
		param string
	}{
		{"Tool", "{tool:String}"},
		{"Service", "{service:String}"},
		{"Environment", "{environment:String}"},
		{"Client", "{client:String}"},
		{"Exclude", "{exclude_clients:Array(String)}"},
		{"RunID", "{run_id:String}"},
		{"SessionID", "{session_id:String}"},
		{"RequestID", "{request_id:String}"},
		{"After", "{after_id:UInt64}"},
		{"Removed", "{removed_adapters:Array(String)}"},
		{"SameContract", "{same_contract:Array(Tuple(String, String, String))}"},
	}
	// G, the series' groups, binds nothing: TestSeriesGroupsRendered.
	if n := reflect.TypeFor[shape]().NumField() - 1; n != len(conditions) {
		t.Fatalf("shape has %d condition fields, the test knows %d", n, len(conditions))
	}
	used := map[string]int{}
	for name, tmpl := range r.templates {
		fine := strings.HasSuffix(name, FineSuffix)
		for _, c := range conditions {
			var sh shape
			reflect.ValueOf(&sh).Elem().FieldByName(c.field).SetBool(true)
			with, err := render(tmpl, "mcpdrift", !fine, sh, allRanges)
			if err != nil {
				t.Fatalf("%s with %s: %v", name, c.field, err)
			}
			without, err := render(tmpl, "mcpdrift", !fine, shape{}, allRanges)
			if err != nil {
				t.Fatalf("%s without conditions: %v", name, err)
			}
			full, _ := r.Query(name)
			everything := full.SQL
			if strings.Contains(without, c.param) {
				t.Errorf("%s binds %s with no condition asked for", name, c.param)
			}
			if strings.Contains(everything, c.param) != strings.Contains(with, c.param) {
				t.Errorf("%s: %s in the full rendering %t, with only %s %t",
					name, c.param, strings.Contains(everything, c.param), c.field, strings.Contains(with, c.param))
			}
			if strings.Contains(with, c.param) {
				used[c.field]++
			}
		}
	}
	// Every condition is used by some query, so that the loop above tested it.
	for _, c := range conditions {
		if used[c.field] == 0 {
			t.Errorf("no query renders a condition for %s", c.field)
		}
	}
}

// TestShapeOf checks which filter fields make a condition necessary: a set
// field, whatever its value holds (an empty JSON array spelled "[]" is a
// tool name like any other), and none other.
func TestShapeOf(t *testing.T) {
	f := Filter{Tenant: "acme"}
	if got := f.call().shape; got != (shape{}) {
		t.Errorf("an unfiltered report has shape %+v", got)
	}
	f = Filter{Tenant: "acme", Tool: "[]", Service: "billing", Environment: "prod",
		Client: "cursor", ExcludeClients: []string{"ci"}}
	q := cursor{Time: f.From, EventID: 7, Kind: "mixed_revision", set: true}.bind(f.call(), 10)
	want := shape{Tool: true, Service: true, Environment: true, Client: true, Exclude: true, After: true}
	if q.shape != want {
		t.Errorf("shape %+v, want %+v", q.shape, want)
	}
	if q = (cursor{}).bind(Filter{Tenant: "acme", ExcludeClients: []string{}}.call(), 10); q.shape != (shape{}) {
		t.Errorf("no exclusion and no cursor give shape %+v", q.shape)
	}
}

// TestQueriesNotCompiled checks that every query, in every shape, ends with
// the settings that keep ClickHouse from compiling its expressions (the
// "settings" template), and that the audit keeps its own setting too.
func TestQueriesNotCompiled(t *testing.T) {
	r, err := New(nil, "mcpdrift")
	if err != nil {
		t.Fatal(err)
	}
	const want = "SETTINGS compile_expressions = 0, compile_aggregate_expressions = 0, compile_sort_description = 0"
	for name, tmpl := range r.templates {
		for _, sh := range []shape{{}, every} {
			sql, err := render(tmpl, "mcpdrift", !strings.HasSuffix(name, FineSuffix), sh, allRanges)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(sql), "\n")
			if last := lines[len(lines)-1]; !strings.HasPrefix(last, want) {
				t.Errorf("%s (%+v) ends with %q", name, sh, last)
			}
		}
	}
	if q, _ := r.Query("audit"); !strings.HasSuffix(strings.TrimSpace(q.SQL), want+", optimize_read_in_order = 0") {
		t.Errorf("the audit lost its own setting:\n%s", q.SQL)
	}
}

// TestSeriesGroupsRendered checks that each dimension a series can group
// by changes its query's text, and that every dimension has a flag.
func TestSeriesGroupsRendered(t *testing.T) {
	r, err := New(nil, "mcpdrift")
	if err != nil {
		t.Fatal(err)
	}
	if n := reflect.TypeFor[groups]().NumField(); n != len(dimensionFields) {
		t.Fatalf("groups has %d fields, dimensionFields %d", n, len(dimensionFields))
	}
	for report, dims := range seriesDimensions {
		name := strings.ReplaceAll(report, "-", "_") + "_series"
		tmpl, ok := r.templates[name]
		if !ok {
			t.Fatalf("no query %s for the %s series", name, report)
		}
		without, err := render(tmpl, "mcpdrift", true, shape{}, allRanges)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dims {
			var sh shape
			*dimensionFields[d](&sh.G) = true
			with, err := render(tmpl, "mcpdrift", true, sh, allRanges)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Count(with, "'' AS "+d) >= strings.Count(without, "'' AS "+d) {
				t.Errorf("%s: grouping by %s does not select it", name, d)
			}
		}
	}
}
