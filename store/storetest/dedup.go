package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// narrowBatch returns events that feed the narrow report tables of
// migrations 0004 and 0006: per i, a notification, a refresh, a stale call
// that is also a side-effect violation, a mixed-revision call, an automatic
// retry across a semantic change, a successful call whose change class is
// removal, a call through an adapter and a current call that feeds none.
func narrowBatch(base time.Time, n int) []otelschema.Event {
	var out []otelschema.Event
	add := func(e otelschema.Event) {
		e.ID = uint64(len(out) + 1)
		e.Time = base.Add(time.Duration(len(out)) * time.Second).UnixNano()
		e.SessionID, e.ClientName, e.ClientVersion, e.Service = "sess", "agent-x", "1.0.0", "tracker"
		out = append(out, e)
	}
	for range n {
		add(otelschema.Event{Name: otelschema.EventListChanged, Tool: "create_issue", NotificationLagMs: 20})
		add(otelschema.Event{Name: otelschema.EventRefresh, RefreshResult: otelschema.RefreshResultOK})
		add(otelschema.Event{Name: otelschema.EventCall, Tool: "create_issue", RevisionClient: "2", RevisionServer: "3",
			Outcome: otelschema.OutcomeRejectedStale, SideEffectStarted: true})
		add(otelschema.Event{Name: otelschema.EventCall, Tool: "create_issue", RevisionClient: "3", RevisionServer: "3",
			RevisionValidated: "2", Outcome: otelschema.OutcomeCurrent})
		add(otelschema.Event{Name: otelschema.EventCall, Tool: "create_issue", RevisionClient: "3", RevisionServer: "3",
			Outcome: otelschema.OutcomeCurrent, RetryOf: "r1", RepairAutomatic: true, ChangeClass: otelschema.ChangeClassSemantic})
		add(otelschema.Event{Name: otelschema.EventCall, Tool: "create_issue", RevisionClient: "3", RevisionServer: "3",
			Outcome: otelschema.OutcomeCurrent, ChangeClass: otelschema.ChangeClassRemoval})
		add(otelschema.Event{Name: otelschema.EventCall, Tool: "create_issue", RevisionClient: "3", RevisionServer: "3",
			Outcome: otelschema.OutcomeNormalized, AdapterID: "create_issue/2-3", ChangeClass: otelschema.ChangeClassBoundedMigration})
		add(otelschema.Event{Name: otelschema.EventCall, Tool: "create_issue", RevisionClient: "3", RevisionServer: "3",
			Outcome: otelschema.OutcomeCurrent})
	}
	return out
}

// testRetriedBatchNarrow writes a batch, then the same batch again under
// the same insert deduplication token, as the ingester does when it
// cannot tell whether the first insert landed: the narrow report tables,
// fed by views from events, must hold it once, like the events table. The
// same content under another token is another batch, stored again.
func (s *Suite) testRetriedBatchNarrow(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "dedup-narrow"
	events := narrowBatch(time.Now().UTC().Add(-time.Hour).Truncate(time.Second), 10)
	p := store.Params{}
	p.String("tenant", tenant)
	counts := func() [4]int {
		return [4]int{
			s.count(t, "events", "tenant = {tenant:String}", p),
			s.count(t, "violation_candidates", "tenant = {tenant:String}", p),
			s.count(t, "propagation_events", "tenant = {tenant:String}", p),
			s.count(t, "adapter_call_candidates", "tenant = {tenant:String}", p),
		}
	}
	// Per i: 8 events, 4 violations (side effect, mixed revision, retry,
	// removal), 3 propagation rows (notice, refresh, stale call), 1 call
	// through an adapter.
	once := [4]int{80, 40, 30, 10}
	for range 2 {
		if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Token: "narrow-1", Events: events}); err != nil {
			t.Fatal(err)
		}
		if got := counts(); got != once {
			t.Fatalf("events, violation_candidates, propagation_events, adapter_call_candidates hold %v rows, want %v", got, once)
		}
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Token: "narrow-2", Events: events}); err != nil {
		t.Fatal(err)
	}
	if got, want := counts(), [4]int{160, 80, 60, 20}; got != want {
		t.Fatalf("after the same events under another token: %v rows, want %v", got, want)
	}
}

// testUntokenedBatch writes the same batch three times without a token:
// "no token" promises no deduplication, so the events table and the views
// fed from it hold it three times, whatever the backend does to insert
// such a batch.
func (s *Suite) testUntokenedBatch(t *testing.T) {
	ctx := s.ctx(t)
	tenant := "dedup-untokened"
	events := narrowBatch(time.Now().UTC().Add(-time.Hour).Truncate(time.Second), 5)
	p := store.Params{}
	p.String("tenant", tenant)
	for i := 1; i <= 3; i++ {
		if err := s.Store.Write(ctx, store.Batch{Tenant: tenant, Events: events}); err != nil {
			t.Fatal(err)
		}
		got := [3]int{
			s.count(t, "events", "tenant = {tenant:String}", p),
			s.count(t, "violation_candidates", "tenant = {tenant:String}", p),
			s.count(t, "recent_calls", "tenant = {tenant:String}", p),
		}
		if want := [3]int{40 * i, 20 * i, 30 * i}; got != want {
			t.Fatalf("after %d untokened writes: events, violation_candidates, recent_calls hold %v rows, want %v", i, got, want)
		}
	}
}

// testEventIDsSince checks the store's deduplication capability
// (store.EventIDLister): the ids of one tenant's events from a moment on,
// the latest first, at most the limit.
func (s *Suite) testEventIDsSince(t *testing.T) {
	l, ok := s.Store.(store.EventIDLister)
	if !ok {
		t.Fatalf("%T does not implement store.EventIDLister: the ingester cannot drop retries across a restart", s.Store)
	}
	ctx := s.ctx(t)
	now := time.Now().UTC().Truncate(time.Second)
	var events []otelschema.Event
	for i, ago := range []time.Duration{2 * time.Hour, 30 * time.Minute, 10 * time.Minute, time.Minute} {
		events = append(events, otelschema.Event{ID: uint64(501 + i), Name: otelschema.EventCall, Time: now.Add(-ago).UnixNano(),
			Tool: "t", Outcome: otelschema.OutcomeCurrent})
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: "event-ids", Events: events}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.Write(ctx, store.Batch{Tenant: "event-ids-other", Events: events[3:]}); err != nil {
		t.Fatal(err)
	}
	f := func(since time.Time, limit int, want ...uint64) {
		t.Helper()
		got, err := l.EventIDsSince(ctx, "event-ids", since, limit)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("EventIDsSince(now-%s, %d) = %v, want %v", now.Sub(since), limit, got, want)
		}
	}
	f(now.Add(-15*time.Minute), 10, 504, 503)
	f(now.Add(-15*time.Minute), 1, 504)
	f(now.Add(-10*time.Minute), 10, 504, 503)
	f(now.Add(-3*time.Hour), 10, 504, 503, 502, 501)
	f(now, 10)
}
