// Package storetest is the conformance suite that every store backend runs:
// the same tests, against the real engine, through the store interfaces only.
//
// A backend's test fills in a Suite and calls RunAll:
//
//	func TestConformance(t *testing.T) {
//		s := openStore(t) // a fresh, empty store
//		(&storetest.Suite{Store: s, Database: "mcpdrift"}).RunAll(t)
//	}
//
// Tests isolate themselves by tenant, so one store serves the whole suite.
package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// Suite runs the conformance tests against one store.
type Suite struct {
	// Store is the backend under test, opened on an empty database.
	Store store.Store
	// Database is the database the store's schema lives in.
	Database string
}

// RunAll migrates the store and runs every test; when Migrate fails, it
// stops there.
func (s *Suite) RunAll(t *testing.T) {
	if !t.Run("Migrate", s.testMigrate) {
		t.Fatal("Migrate failed: every other test needs the schema")
	}
	t.Run("WriteRoundTrip", s.testWriteRoundTrip)
	t.Run("AuditOnlyCalls", s.testAuditOnlyCalls)
	t.Run("AdapterRegistryLatestWins", s.testAdapterRegistry)
	t.Run("AdvertisedStoredOncePerRevision", s.testAdvertised)
	t.Run("RollupMatchesRaw", s.testRollupMatchesRaw)
	t.Run("LargeBatch", s.testLargeBatch)
	t.Run("ConcurrentWritersAndReaders", s.testConcurrent)
	t.Run("ParamsAreBound", s.testParamsAreBound)
	t.Run("QueryErrorNamesQuery", s.testQueryError)
	t.Run("EmptyBatch", s.testEmptyBatch)
	t.Run("SessionTimeZoneIsUTC", s.testTimeZone)
	t.Run("RetriedBatchNarrowTables", s.testRetriedBatchNarrow)
	t.Run("UntokenedBatchStoredEachTime", s.testUntokenedBatch)
	t.Run("EventIDsSince", s.testEventIDsSince)
	t.Run("NativeBatch", s.testNativeBatch)
}

// testTimeZone checks that bound times are read as UTC whatever the time
// zone of the process or server.
func (s *Suite) testTimeZone(t *testing.T) {
	var rows []struct {
		TZ string    `json:"tz"`
		T  time.Time `json:"t"`
	}
	q := store.Query{Name: "timezone", SQL: "SELECT timezone() AS tz, toDateTime({t:String}) AS t"}
	if err := s.Store.Query(s.ctx(t), q, store.Params{}.String("t", "2026-01-01 00:00:00"), &rows); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if len(rows) != 1 || rows[0].TZ != "UTC" || !rows[0].T.Equal(want) {
		t.Fatalf("engine time zone = %+v, want UTC and %v", rows, want)
	}
}

func (s *Suite) ctx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func (s *Suite) table(name string) string { return s.Database + "." + name }

func (s *Suite) testMigrate(t *testing.T) {
	ctx := s.ctx(t)
	first, err := s.Store.Migrate(ctx)
	if err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	if len(first) == 0 {
		t.Fatalf("Migrate on an empty store applied no migration")
	}
	again, err := s.Store.Migrate(ctx)
	if err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if len(again) != 0 {
		t.Fatalf("second Migrate applied %v, want nothing", again)
	}
	var tables []struct {
		Name string `json:"name"`
	}
	q := store.Query{Name: "tables", SQL: "SELECT name FROM system.tables WHERE database = {db:String} ORDER BY name"}
	if err := s.Store.Query(ctx, q, store.Params{}.String("db", s.Database), &tables); err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, tb := range tables {
		have[tb.Name] = true
	}
	for _, want := range []string{"events_in", "events", "audit_calls", "adapters", "calls_1h", "schema_migrations"} {
		if !have[want] {
			t.Errorf("table %s missing after Migrate; have %v", want, tables)
		}
	}
	if err := s.Store.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}

// fullEvent returns a call event with every field set.
func fullEvent(i int, base time.Time) otelschema.Event {
	return otelschema.Event{
		ID:                   uint64(1000 + i),
		Name:                 otelschema.EventCall,
		Time:                 base.Add(time.Duration(i) * time.Millisecond).UnixNano(),
		TraceID:              [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, byte(i)},
		SpanID:               [8]byte{9, 8, 7, 6, 5, 4, 3, byte(i)},
		Service:              "deployer",
		ServiceVersion:       "build-42",
		ServiceInstance:      "pod-a",
		ServiceNamespace:     "platform",
		Environment:          "prod",
		Tool:                 "deploy_preview",
		Method:               "tools/call",
		RequestID:            fmt.Sprintf("req-%d", i),
		SessionID:            fmt.Sprintf("sess-%d", i%3),
		ProtocolVersion:      "2025-11-25",
		ClientName:           "agent-x",
		ClientVersion:        "1.2.3",
		RevisionClient:       "1",
		RevisionClientSource: otelschema.RevisionSourceListed,
		RevisionServer:       "2",
		RevisionValidated:    "1",
		Outcome:              otelschema.OutcomeNormalized,
		AdapterID:            "deploy_preview-1-to-2",
		ChangeClass:          otelschema.ChangeClassBoundedMigration,
		SideEffectStarted:    true,
		ExternalRequests:     1,
		ExternalTarget:       "https://deploy.example/api",
		ErrorCode:            "",
		RequiredAction:       "",
		RetryOf:              "req-0",
		RetryAttempt:         2,
		IdempotencyKey:       "idem-1",
		Approval:             otelschema.ApprovalSession,
		Privilege:            otelschema.PrivilegeWrite,
		RunID:                fmt.Sprintf("run-%d", i%2),
		SessionAgeS:          7200,
		ArgsRaw:              `{"branch":"fix-login"}`,
		ArgsNormalized:       `{"branch":"fix-login","region":"us-east-preview"}`,
		Attributes:           map[string]string{"team": "payments", "quote'": "a\tb\n"},
		AdapterRevisionFrom:  "",
	}
}

type eventRow struct {
	EventID           uint64            `json:"event_id"`
	EventName         string            `json:"event_name"`
	Time              time.Time         `json:"time"`
	TraceID           string            `json:"trace_id_hex"`
	SpanID            string            `json:"span_id_hex"`
	Service           string            `json:"service"`
	ServiceVersion    string            `json:"service_version"`
	ServiceInstance   string            `json:"service_instance"`
	ServiceNamespace  string            `json:"service_namespace"`
	Environment       string            `json:"environment"`
	Tool              string            `json:"tool"`
	Method            string            `json:"method"`
	RequestID         string            `json:"request_id"`
	SessionID         string            `json:"session_id"`
	ProtocolVersion   string            `json:"protocol_version"`
	ClientName        string            `json:"client_name"`
	ClientVersion     string            `json:"client_version"`
	RevisionClient    string            `json:"revision_client"`
	RevisionSource    string            `json:"revision_client_source"`
	RevisionServer    string            `json:"revision_server"`
	RevisionValidated string            `json:"revision_validated"`
	Outcome           string            `json:"outcome"`
	AdapterID         string            `json:"adapter_id"`
	ChangeClass       string            `json:"change_class"`
	SideEffectStarted bool              `json:"side_effect_started"`
	ExternalRequests  int64             `json:"external_requests"`
	ExternalTarget    string            `json:"external_target"`
	RetryOf           string            `json:"retry_of"`
	RetryAttempt      int64             `json:"retry_attempt"`
	IdempotencyKey    string            `json:"idempotency_key"`
	Approval          string            `json:"approval"`
	Privilege         string            `json:"privilege"`
	RunID             string            `json:"run_id"`
	SessionAgeS       int64             `json:"session_age_s"`
	Attributes        map[string]string `json:"attributes"`
	// The columns a call seldom fills, which the round trip sets anyway.
	RevisionBefore      string    `json:"revision_before"`
	RevisionAfter       string    `json:"revision_after"`
	ErrorCode           string    `json:"error_code"`
	RequiredAction      string    `json:"required_action"`
	RepairAction        string    `json:"repair_action"`
	RepairAutomatic     bool      `json:"repair_automatic"`
	RepairResult        string    `json:"repair_result"`
	RepairDurationMs    int64     `json:"repair_duration_ms"`
	RefreshResult       string    `json:"refresh_result"`
	NotificationLagMs   int64     `json:"notification_lag_ms"`
	AdapterRevisionFrom string    `json:"adapter_revision_from"`
	AdapterRevisionTo   string    `json:"adapter_revision_to"`
	AdapterWindowEnd    time.Time `json:"adapter_window_end"`
	ContractField       string    `json:"contract_field"`
	ArgsRaw             string    `json:"args_raw"`
	ArgsNormalized      string    `json:"args_normalized"`
}

func (s *Suite) testWriteRoundTrip(t *testing.T) {
	ctx := s.ctx(t)
	base := time.Date(2026, 11, 30, 3, 0, 0, 123456789, time.UTC)
	tenant := "roundtrip"
	var events []otelschema.Event
	for i := 0; i < 10; i++ {
		e := fullEvent(i, base)
		// Every column gets a value of its own in every row, so that a
		// value written under another column's name, or into another row,
		// shows; the attributes have zero, one or three entries.
		e.RevisionBefore, e.RevisionAfter = fmt.Sprintf("before-%d", i), fmt.Sprintf("after-%d", i)
		e.ErrorCode, e.RequiredAction = fmt.Sprintf("E%d", i), fmt.Sprintf("action-%d", i)
		e.RepairAction = otelschema.RepairAction(1 + i%4)
		e.RepairAutomatic = i%2 == 0
		e.RepairResult = otelschema.RepairResult(1 + i%2)
		e.RepairDurationMs = int64(100 + i)
		e.RefreshResult = otelschema.RefreshResult(1 + i%2)
		e.NotificationLagMs = int64(-i)
		e.AdapterRevisionFrom, e.AdapterRevisionTo = fmt.Sprintf("from-%d", i), fmt.Sprintf("to-%d", i)
		e.AdapterWindowEnd = base.Add(time.Duration(i) * time.Hour).Unix()
		e.ContractField = fmt.Sprintf("field-%d", i)
		e.RevisionClientSource = otelschema.RevisionSource(i % 4)
		e.ArgsRaw, e.ArgsNormalized = fmt.Sprintf(`{"i":%d}`, i), fmt.Sprintf(`{"i":%d,"n":true}`, i)
		switch i % 3 {
		case 0:
			e.Attributes = nil
		case 1:
			e.Attributes = map[string]string{"only": fmt.Sprint(i)}
		}
		events = append(events, e)
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatalf("Write: %v", err)
	}
	var rows []eventRow
	q := store.Query{Name: "roundtrip", SQL: "SELECT * EXCEPT audited, lower(hex(trace_id)) AS trace_id_hex, lower(hex(span_id)) AS span_id_hex FROM " + s.table("events") + " WHERE tenant = {tenant:String} ORDER BY event_id"}
	if err := s.Store.Query(ctx, q, store.Params{}.String("tenant", tenant), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != len(events) {
		t.Fatalf("stored %d rows, want %d", len(rows), len(events))
	}
	for i, r := range rows {
		e := events[i]
		want := eventRow{
			EventID: e.ID, EventName: e.Name.Stored(), Time: time.Unix(0, e.Time).UTC(),
			TraceID: fmt.Sprintf("%x", e.TraceID), SpanID: fmt.Sprintf("%x", e.SpanID),
			Service: e.Service, ServiceVersion: e.ServiceVersion, ServiceInstance: e.ServiceInstance,
			ServiceNamespace: e.ServiceNamespace, Environment: e.Environment, Tool: e.Tool,
			Method: e.Method, RequestID: e.RequestID, SessionID: e.SessionID,
			ProtocolVersion: e.ProtocolVersion, ClientName: e.ClientName, ClientVersion: e.ClientVersion,
			RevisionClient: e.RevisionClient, RevisionSource: e.RevisionClientSource.String(), RevisionServer: e.RevisionServer,
			RevisionValidated: e.RevisionValidated, Outcome: e.Outcome.String(), AdapterID: e.AdapterID,
			ChangeClass: e.ChangeClass.String(), SideEffectStarted: e.SideEffectStarted,
			ExternalRequests: e.ExternalRequests, ExternalTarget: e.ExternalTarget, RetryOf: e.RetryOf,
			RetryAttempt: e.RetryAttempt, IdempotencyKey: e.IdempotencyKey, Approval: e.Approval.String(),
			Privilege: e.Privilege.String(), RunID: e.RunID, SessionAgeS: e.SessionAgeS,
			Attributes:     e.Attributes,
			RevisionBefore: e.RevisionBefore, RevisionAfter: e.RevisionAfter,
			ErrorCode: e.ErrorCode, RequiredAction: e.RequiredAction,
			RepairAction: e.RepairAction.String(), RepairAutomatic: e.RepairAutomatic,
			RepairResult: e.RepairResult.String(), RepairDurationMs: e.RepairDurationMs,
			RefreshResult: e.RefreshResult.String(), NotificationLagMs: e.NotificationLagMs,
			AdapterRevisionFrom: e.AdapterRevisionFrom, AdapterRevisionTo: e.AdapterRevisionTo,
			AdapterWindowEnd: time.Unix(e.AdapterWindowEnd, 0).UTC(), ContractField: e.ContractField,
			ArgsRaw: e.ArgsRaw, ArgsNormalized: e.ArgsNormalized,
		}
		if want.Attributes == nil {
			want.Attributes = map[string]string{}
		}
		if got, w := fmt.Sprintf("%+v", r), fmt.Sprintf("%+v", want); got != w {
			t.Errorf("row %d:\n got %s\nwant %s", i, got, w)
		}
	}
}

func (s *Suite) count(t *testing.T, table, where string, params store.Params) int {
	t.Helper()
	var rows []struct {
		N int `json:"n"`
	}
	q := store.Query{Name: "count_" + table, SQL: "SELECT count() AS n FROM " + s.table(table) + " WHERE " + where}
	if err := s.Store.Query(s.ctx(t), q, params, &rows); err != nil {
		t.Fatal(err)
	}
	return rows[0].N
}

func (s *Suite) testAuditOnlyCalls(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "audit"
	base := time.Now().UTC()
	call := fullEvent(1, base)
	refresh := otelschema.Event{ID: 7, Name: otelschema.EventRefresh, Time: base.UnixNano(), Tool: "deploy_preview", RevisionBefore: "1", RevisionAfter: "2", RefreshResult: otelschema.RefreshResultOK}
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: []otelschema.Event{call, refresh}}); err != nil {
		t.Fatal(err)
	}
	p := store.Params{}.String("tenant", tenant)
	if n := s.count(t, "events", "tenant = {tenant:String}", p); n != 2 {
		t.Errorf("events: %d rows, want 2", n)
	}
	if n := s.count(t, "events", "tenant = {tenant:String} AND audited", p); n != 1 {
		t.Errorf("audited events: %d rows, want 1 (calls only)", n)
	}
	// The arguments are kept in the events since version 15; audit_calls
	// only holds the calls stored before it.
	if n := s.count(t, "audit_calls", "tenant = {tenant:String}", p); n != 0 {
		t.Errorf("audit_calls: %d rows, want 0", n)
	}
	var args []struct {
		Raw        string `json:"args_raw"`
		Normalized string `json:"args_normalized"`
	}
	q := store.Query{Name: "audit_args", SQL: "SELECT args_raw, args_normalized FROM " + s.table("events") + " WHERE tenant = {tenant:String} AND audited"}
	if err := s.Store.Query(ctx, q, p, &args); err != nil {
		t.Fatal(err)
	}
	if len(args) != 1 || args[0].Raw != call.ArgsRaw || args[0].Normalized != call.ArgsNormalized {
		t.Errorf("audit args = %+v, want raw %q normalized %q", args, call.ArgsRaw, call.ArgsNormalized)
	}
}

func (s *Suite) testAdapterRegistry(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "adapters"
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	decl := func(i int, windowEnd time.Time) otelschema.Event {
		return otelschema.Event{ID: uint64(i), Name: otelschema.EventAdapter, Time: base.Add(time.Duration(i) * time.Hour).UnixNano(),
			Tool: "deploy_preview", AdapterID: "dp-1-2", AdapterRevisionFrom: "1", AdapterRevisionTo: "2",
			ChangeClass: otelschema.ChangeClassBoundedMigration, AdapterWindowEnd: windowEnd.Unix(), Service: "deployer"}
	}
	first, second := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: []otelschema.Event{decl(1, first)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: []otelschema.Event{decl(2, second)}}); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		AdapterID string    `json:"adapter_id"`
		WindowEnd time.Time `json:"window_end"`
		From      string    `json:"revision_from"`
	}
	q := store.Query{Name: "adapters", SQL: "SELECT adapter_id, argMax(window_end, declared_at) AS window_end, argMax(revision_from, declared_at) AS revision_from FROM " + s.table("adapters") + " WHERE tenant = {tenant:String} GROUP BY adapter_id"}
	if err := s.Store.Query(ctx, q, store.Params{}.String("tenant", tenant), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || !rows[0].WindowEnd.Equal(second) || rows[0].From != "1" {
		t.Fatalf("adapters = %+v, want one adapter ending %v", rows, second)
	}
}

// testAdvertised stores the advertisements of two instances, a restart
// and a retried batch, and reads tool_revisions back: one row per
// revision, whatever the number of advertisements.
func (s *Suite) testAdvertised(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "advertised"
	// Within the raw events' retention, which the count below reads.
	base := time.Now().UTC().Truncate(time.Hour).Add(-6 * time.Hour)
	def := func(desc string) string {
		return `{"name":"deploy_preview","description":"` + desc + `","inputSchema":{"type":"object"}}`
	}
	adv := func(id int, at time.Duration, instance, rev, definition string) otelschema.Event {
		return otelschema.Event{ID: uint64(id), Name: otelschema.EventAdvertised, Time: base.Add(at).UnixNano(),
			Service: "deployer", Environment: "prod", ServiceInstance: instance,
			Tool: "deploy_preview", RevisionServer: rev, Definition: definition}
	}
	batches := [][]otelschema.Event{
		{adv(1, 0, "pod-a", "1", def("first"))},
		{adv(2, time.Hour, "pod-a", "1", def("first"))}, // a restart
		{adv(3, 2*time.Hour, "pod-b", "1", def("again"))},
		{adv(4, 3*time.Hour, "pod-c", "2", def("two")), adv(5, 4*time.Hour, "pod-b", "1", def("again"))},
	}
	for i, b := range batches {
		if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Token: fmt.Sprintf("adv-%d", i), Events: b}); err != nil {
			t.Fatal(err)
		}
	}
	// The last batch again, as an exporter's retry sends it.
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Token: "adv-3", Events: batches[3]}); err != nil {
		t.Fatal(err)
	}
	var rows []struct {
		Revision   string    `json:"revision"`
		Definition string    `json:"definition"`
		First      time.Time `json:"first_advertised"`
		Last       time.Time `json:"last_advertised"`
		Instances  []string  `json:"instances"`
	}
	q := store.Query{Name: "tool_revisions", SQL: "SELECT revision, argMaxMerge(definition) AS definition, min(first_advertised) AS first_advertised, max(last_advertised) AS last_advertised, arraySort(groupUniqArrayArray(instances)) AS instances FROM " + s.table("tool_revisions") + " WHERE tenant = {tenant:String} GROUP BY revision ORDER BY revision"}
	if err := s.Store.Query(ctx, q, store.Params{}.String("tenant", tenant), &rows); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%+v", rows)
	want := fmt.Sprintf("%+v", []struct {
		Revision   string
		Definition string
		First      time.Time
		Last       time.Time
		Instances  []string
	}{
		{"1", def("again"), base, base.Add(4 * time.Hour), []string{"pod-a", "pod-b"}},
		{"2", def("two"), base.Add(3 * time.Hour), base.Add(3 * time.Hour), []string{"pod-c"}},
	})
	if got != want {
		t.Errorf("tool_revisions:\n got %s\nwant %s", got, want)
	}
	p := store.Params{}.String("tenant", tenant)
	if n := s.count(t, "events", "tenant = {tenant:String} AND event_name = 'mcp.drift.advertised'", p); n != 5 {
		t.Errorf("events: %d advertised events, want 5", n)
	}
}

func (s *Suite) testRollupMatchesRaw(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "rollup"
	base := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	outcomes := []otelschema.Outcome{otelschema.OutcomeCurrent, otelschema.OutcomeNormalized, otelschema.OutcomeRejectedStale}
	var events []otelschema.Event
	for i := 0; i < 3000; i++ {
		e := fullEvent(i, base)
		e.ID = uint64(i)
		e.Time = base.Add(time.Duration(i) * 7 * time.Second).UnixNano()
		e.Outcome = outcomes[i%3]
		e.RevisionClient = fmt.Sprint(1 + i%2)
		e.SessionID = fmt.Sprintf("s%d", i%17)
		events = append(events, e)
	}
	// Two inserts, so that the rollup holds partial states to merge.
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: events[:1700]}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: events[1700:]}); err != nil {
		t.Fatal(err)
	}
	type agg struct {
		Revision string    `json:"revision_client"`
		Outcome  string    `json:"outcome"`
		Calls    uint64    `json:"calls"`
		Sessions uint64    `json:"sessions"`
		First    time.Time `json:"first_seen"`
		Last     time.Time `json:"last_seen"`
	}
	var raw, rolled []agg
	p := store.Params{}.String("tenant", tenant)
	rawQ := store.Query{Name: "raw", SQL: "SELECT revision_client, toString(outcome) AS outcome, count() AS calls, uniqHLL12(session_id) AS sessions, min(time) AS first_seen, max(time) AS last_seen FROM " + s.table("events") + " WHERE tenant = {tenant:String} AND event_name = 'mcp.drift.call' GROUP BY revision_client, outcome ORDER BY revision_client, outcome"}
	rollQ := store.Query{Name: "rollup", SQL: "SELECT revision_client, toString(outcome) AS outcome, sum(calls) AS calls, uniqHLL12Merge(sessions) AS sessions, min(first_seen) AS first_seen, max(last_seen) AS last_seen FROM " + s.table("calls_1h") + " WHERE tenant = {tenant:String} GROUP BY revision_client, outcome ORDER BY revision_client, outcome"}
	if err := s.Store.Query(ctx, rawQ, p, &raw); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Query(ctx, rollQ, p, &rolled); err != nil {
		t.Fatal(err)
	}
	if len(raw) != 6 {
		t.Fatalf("raw has %d groups, want 6: %+v", len(raw), raw)
	}
	if fmt.Sprint(raw) != fmt.Sprint(rolled) {
		t.Fatalf("rollup differs from raw:\n raw    %+v\n rollup %+v", raw, rolled)
	}
}

func (s *Suite) testLargeBatch(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "large"
	const n = 100_000
	// A day of its own, ahead of every other test's events: the insert is
	// the one part of its partition, which no merge can take to a higher
	// level before checkCompactParts reads it.
	base := time.Now().Add(48 * time.Hour).UTC()
	events := make([]otelschema.Event, n)
	for i := range events {
		events[i] = fullEvent(i, base)
		events[i].ID = uint64(i)
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: events}); err != nil {
		t.Fatal(err)
	}
	if got := s.count(t, "events", "tenant = {tenant:String}", store.Params{}.String("tenant", tenant)); got != n {
		t.Fatalf("stored %d events, want %d", got, n)
	}
	s.checkCompactParts(t)
}

// engineWideBound is the engine's default min_bytes_for_wide_part: parts
// this large are written wide unless the table's min_level_for_wide_part
// keeps inserts compact.
const engineWideBound = 10 << 20

// checkCompactParts checks that the parts an insert writes are compact
// (the schema sets min_level_for_wide_part) even when they are larger than
// the engine's default bound: the tables with the largest rows, on the node
// asked (a cluster's local tables).
func (s *Suite) checkCompactParts(t *testing.T) {
	t.Helper()
	var parts []struct {
		Table string `json:"table"`
		Name  string `json:"name"`
		Type  string `json:"part_type"`
		Bytes uint64 `json:"bytes"`
	}
	q := store.Query{Name: "compact_parts", SQL: "SELECT table, name, part_type, data_uncompressed_bytes AS bytes FROM system.parts" +
		" WHERE database = {db:String} AND active AND table IN ('events', 'events_local')" +
		" AND level = 0 ORDER BY bytes DESC"}
	if err := s.Store.Query(s.ctx(t), q, store.Params{}.String("db", s.Database), &parts); err != nil {
		t.Fatal(err)
	}
	if len(parts) == 0 {
		t.Fatal("no part of events on the node asked")
	}
	if parts[0].Bytes <= engineWideBound {
		t.Fatalf("the largest inserted part, %s of %s, has %d bytes: the check needs one above %d", parts[0].Name, parts[0].Table, parts[0].Bytes, engineWideBound)
	}
	for _, p := range parts {
		if p.Type != "Compact" {
			t.Errorf("part %s of %s (%d bytes, as inserted) is %s, want Compact", p.Name, p.Table, p.Bytes, p.Type)
		}
	}
}

func (s *Suite) testConcurrent(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "concurrent"
	const writers, batches, perBatch = 4, 5, 500
	base := time.Now().Add(-time.Hour).UTC()
	var wg sync.WaitGroup
	errs := make(chan error, writers*batches*2)
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				events := make([]otelschema.Event, perBatch)
				for i := range events {
					events[i] = fullEvent(i, base)
				}
				if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: events}); err != nil {
					errs <- err
				}
			}
		}(w)
		go func() {
			defer wg.Done()
			for b := 0; b < batches; b++ {
				var rows []struct {
					N int `json:"n"`
				}
				q := store.Query{Name: "concurrent_count", SQL: "SELECT count() AS n FROM " + s.table("events") + " WHERE tenant = {tenant:String}"}
				if err := s.Store.Query(ctx, q, store.Params{}.String("tenant", tenant), &rows); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got, want := s.count(t, "events", "tenant = {tenant:String}", store.Params{}.String("tenant", tenant)), writers*batches*perBatch; got != want {
		t.Fatalf("stored %d events, want %d", got, want)
	}
}

func (s *Suite) testParamsAreBound(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "bound"
	e := fullEvent(0, time.Now().UTC())
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: []otelschema.Event{e}}); err != nil {
		t.Fatal(err)
	}
	for _, hostile := range []string{"x' OR 1=1 --", "deploy_preview' OR '1'='1", `\'; DROP TABLE events; --`, "{tool:String}", "deploy_preview\x00"} {
		p := store.Params{}.String("tenant", tenant).String("tool", hostile)
		if n := s.count(t, "events", "tenant = {tenant:String} AND tool = {tool:String}", p); n != 0 {
			t.Errorf("tool = %q matched %d rows, want 0", hostile, n)
		}
	}
	// Values that need escaping bind exactly: each matches its own row only.
	odd := []string{`back\slash`, "tab\there", "new\nline", `quote\'s`, "nul\x00byte", `\N`}
	for i, tool := range odd {
		e := fullEvent(i+1, time.Now().UTC())
		e.Tool = tool
		if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: []otelschema.Event{e}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tool := range odd {
		p := store.Params{}.String("tenant", tenant).String("tool", tool)
		if n := s.count(t, "events", "tenant = {tenant:String} AND tool = {tool:String}", p); n != 1 {
			t.Errorf("tool = %q matched %d rows, want 1", tool, n)
		}
	}
	p := store.Params{}.String("tenant", tenant).Strings("tools", []string{"a'b", "deploy_preview", `c\d`})
	if n := s.count(t, "events", "tenant = {tenant:String} AND has({tools:Array(String)}, tool)", p); n != 1 {
		t.Errorf("array parameter matched %d rows, want 1", n)
	}
	if n := s.count(t, "events", "tenant = {tenant:String}", p); n != 1+len(odd) {
		t.Errorf("table has %d rows after hostile queries, want %d", n, 1+len(odd))
	}
}

func (s *Suite) testQueryError(t *testing.T) {
	var rows []struct{}
	err := s.Store.Query(s.ctx(t), store.Query{Name: "broken_report", SQL: "SELECT no_such_column FROM " + s.table("events")}, nil, &rows)
	if err == nil || !strings.Contains(err.Error(), "broken_report") {
		t.Fatalf("error = %v, want one naming the query", err)
	}
	if err := s.Store.Query(s.ctx(t), store.Query{Name: "bad_dest", SQL: "SELECT 1"}, nil, rows); err == nil {
		t.Fatal("a non-pointer dest was accepted")
	}
}

func (s *Suite) testEmptyBatch(t *testing.T) {
	if err := s.Store.Write(s.ctx(t), store.Batch{Tenant: "empty"}); err != nil {
		t.Fatalf("empty batch: %v", err)
	}
}
