package ingest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// ackSpooledConfig returns a test configuration acknowledging once
// spooled, with inserts of up to insertMax events.
func ackSpooledConfig(t *testing.T, insertMax int) Config {
	cfg := spoolConfig(t)
	cfg.Spool.MaxBytes = 16 << 20
	cfg.Ack = AckSpooled
	cfg.InsertMaxEvents = insertMax
	cfg.InsertMaxDelay = 200 * time.Millisecond
	return cfg
}

// addPiledUp adds requests exports of per events each to b at once and
// waits for their answers. The writer cannot append while modeMu is held:
// the requests pile up behind the first append, as they do behind a slow
// fsync.
func addPiledUp(t *testing.T, b *batcher, requests, per int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, requests)
	b.modeMu.Lock()
	for i := range requests {
		wg.Go(func() { errs <- b.Add(ctx, events(fmt.Sprintf("tool-%02d", i), per)) })
	}
	waitFor(t, "the requests", func() bool { return b.Pending() == requests*per })
	b.modeMu.Unlock()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Add with the store blocked: %v", err)
		}
	}
}

// TestAckSpooledGroupsInserts checks group commit and grouped inserts:
// every export is acknowledged once spooled, while the store is blocked,
// and the replayer then writes the spooled batches in a few inserts of at
// most InsertMaxEvents, each under its content's token. It does so with
// the spool's memory off, every batch read back from disk, and on, as the
// server runs it (spool.Config.CacheEvents): the inserts are the same,
// and with it on no batch is read back from disk.
func TestAckSpooledGroupsInserts(t *testing.T) {
	for _, cacheEvents := range []int{0, 1000} {
		t.Run(fmt.Sprintf("cache %d events", cacheEvents), func(t *testing.T) {
			testAckSpooledGroupsInserts(t, cacheEvents)
		})
	}
}

func testAckSpooledGroupsInserts(t *testing.T, cacheEvents int) {
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 100)}
	cfg := ackSpooledConfig(t, 250)
	cfg.BatchMaxEvents = 100
	cfg.Spool.CacheEvents = cacheEvents
	b, sp := startSpoolBatcher(t, cfg, w)
	const requests, per = 40, 10
	addPiledUp(t, b, requests, per)
	st := b.stats.snapshot(receiver.Stats{})
	if st.Spool.SpooledEvents != requests*per {
		t.Fatalf("spooled %d events, want %d", st.Spool.SpooledEvents, requests*per)
	}
	// One append for the first request or few, then full batches.
	if max := 1 + requests*per/cfg.BatchMaxEvents + 1; st.Batches > uint64(max) {
		t.Errorf("%d spool appends for %d concurrent requests, want at most %d: no group commit", st.Batches, requests, max)
	}
	close(w.gate)
	waitFor(t, "the replay", func() bool { return w.total() == requests*per && sp.Stats().Records == 0 })
	sizes := w.sizes()
	// The first insert may have been gathered before most requests
	// arrived; the rest fill up to the bound.
	if len(sizes) > 1+(requests*per+249)/250 {
		t.Errorf("insert sizes %v: want groups of up to 250 events", sizes)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	seen := map[uint64]bool{}
	for i, bt := range w.batches {
		if len(bt.Events) > 250 {
			t.Errorf("insert %d holds %d events, more than InsertMaxEvents", i, len(bt.Events))
		}
		// One record under its own token, or a group under the group's:
		// both derive from the content, so a replay repeats them.
		if one, many := groupablePrefix+batchToken(bt.Tenant, bt.Events), "group:"+batchToken(bt.Tenant, bt.Events); bt.Token != one && bt.Token != many {
			t.Errorf("insert %d of %d events: token %q, want %q or %q", i, len(bt.Events), bt.Token, one, many)
		}
		for _, e := range bt.Events {
			if seen[e.ID] {
				t.Fatalf("event %d written twice", e.ID)
			}
			seen[e.ID] = true
		}
	}
	if got := b.stats.snapshot(receiver.Stats{}).InsertSize.Count; got != uint64(len(sizes)) {
		t.Errorf("InsertSize counted %d inserts, the store saw %d", got, len(sizes))
	}
	// Every batch spooled fits in the spool's memory, if it has any.
	want := uint64(0)
	if cacheEvents > 0 {
		want = sp.Stats().Appended
	}
	if got := sp.Stats().CacheReads; got != want {
		t.Errorf("%d of %d spooled batches read from memory, want %d", got, sp.Stats().Appended, want)
	}
}

// TestAckSpooledInsertsFillSegments: when a spool segment has room for
// more than one insert's worth but not for two, the tenant's spool (as
// tenantSpool configures it) still ends its segments at InsertMaxEvents,
// so that a replayer behind the spool writes whole inserts, not one cut
// short at every segment's end.
func TestAckSpooledInsertsFillSegments(t *testing.T) {
	const insertMax, per, requests = 300, 100, 42
	cfg := ackSpooledConfig(t, insertMax)
	cfg.BatchMaxEvents = per
	// Room for 7 of these records by bytes, two inserts and a third of one.
	probe, err := spool.Open(spool.Config{Dir: t.TempDir(), MaxBytes: 1 << 20, SegmentBytes: 1 << 20}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := probe.Append(spool.Record{Tenant: cfg.Tenant, Token: groupablePrefix + batchToken(cfg.Tenant, events("tool-00", per)), Events: events("tool-00", per)}); err != nil {
		t.Fatal(err)
	}
	record := probe.Stats().Bytes
	probe.Close()
	cfg.Spool.SegmentBytes = record*15/2 + 1

	cfg.Spool = cfg.tenantSpool()
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 100)}
	b, sp := startSpoolBatcher(t, cfg, w)
	addPiledUp(t, b, requests, per)
	close(w.gate)
	waitFor(t, "the replay", func() bool { return w.total() == requests*per && sp.Stats().Records == 0 })
	// The first insert may have been gathered before most requests
	// arrived, and the rest of its segment is then a group of its own;
	// every other insert is whole. Segments cut by bytes alone would cut
	// one short every 7 records.
	short := 0
	for _, n := range w.sizes() {
		if n > insertMax {
			t.Fatalf("insert of %d events, more than InsertMaxEvents", n)
		}
		if n < insertMax {
			short++
		}
	}
	if short > 2 {
		t.Errorf("insert sizes %v: %d short of %d events, want at most 2", w.sizes(), short, insertMax)
	}
}

// TestAckSpooledShutdownWritesTheSpool: a clean shutdown leaves nothing
// acknowledged outside the store.
func TestAckSpooledShutdownWritesTheSpool(t *testing.T) {
	w := &sink{}
	cfg := ackSpooledConfig(t, 1000)
	cfg.InsertMaxDelay = time.Hour // only the shutdown makes it write
	sp, err := spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	b := newBatcher(cfg, w, sp, &counters{}, nil, tracing{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tool := range []string{"a", "b", "c"} {
		if err := b.Add(ctx, events(tool, 7)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if w.total() != 21 || sp.Stats().Records != 0 {
		t.Fatalf("after Shutdown: stored %d of 21 events, %d records left in the spool", w.total(), sp.Stats().Records)
	}
}

// recorder forwards writes to a store and records their tokens and sizes.
type recorder struct {
	store.Writer
	mu     sync.Mutex
	tokens []string
	sizes  []int
}

func (r *recorder) Write(ctx context.Context, b store.Batch) error {
	r.mu.Lock()
	r.tokens = append(r.tokens, b.Token)
	r.sizes = append(r.sizes, len(b.Events))
	r.mu.Unlock()
	return r.Writer.Write(ctx, b)
}

// WriteNative records and forwards a replayed group, which the replayer
// hands a store that takes Native blocks (both do) as one.
func (r *recorder) WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error {
	r.mu.Lock()
	r.tokens = append(r.tokens, token)
	r.sizes = append(r.sizes, blk.Rows())
	r.mu.Unlock()
	return r.Writer.(nativeWriter).WriteNative(ctx, token, blk)
}

// TestInflightGroupReplayedWhole plays the restart after a process died in
// the middle of a grouped insert, against the real store: the group had
// reached the store (wholly here; partly is the same to deduplication)
// but its records were not committed. The new process must write exactly
// that group again, under its token, so that the store keeps one copy.
func TestInflightGroupReplayedWhole(t *testing.T) {
	st := openStore(t)
	cfg := ackSpooledConfig(t, 1000)
	tenant := fmt.Sprintf("inflight-%d", time.Now().UnixNano())
	cfg.Tenant = tenant
	now := time.Now().UnixNano()

	sp, err := spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	var (
		group []otelschema.Event
		end   spool.Position
	)
	for i := range 5 {
		ev := events(fmt.Sprintf("%s-%d", tenant, i), 10)
		for j := range ev {
			ev[j].Time = now
		}
		next, err := sp.Append(spool.Record{Tenant: tenant, Token: groupablePrefix + batchToken(tenant, ev), Events: ev})
		if err != nil {
			t.Fatal(err)
		}
		if i < 3 {
			group = append(group, ev...)
			end = next
		}
	}
	token := "group:" + batchToken(tenant, group)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// What the dead process had written, and recorded as in flight.
	if err := st.Write(ctx, store.Batch{Tenant: tenant, Token: token, Events: group}); err != nil {
		t.Fatal(err)
	}
	if err := sp.SetInflight(spool.Inflight{End: end, Token: token}); err != nil {
		t.Fatal(err)
	}
	sp.Close()

	sp, err = spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	rec := &recorder{Writer: st}
	b := newBatcher(cfg, rec, sp, &counters{}, nil, tracing{})
	waitFor(t, "the replay", func() bool { return sp.Stats().Records == 0 })
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.tokens) == 0 || rec.tokens[0] != token || rec.sizes[0] != 30 {
		t.Fatalf("first replayed insert: tokens %q sizes %v, want the inflight group of 30 events under %q", rec.tokens, rec.sizes, token)
	}
	var n []struct {
		N uint64 `json:"n"`
	}
	q := store.Query{Name: "inflight_count", SQL: "SELECT count() AS n FROM mcpdrift.events WHERE tenant = {tenant:String}"}
	if err := st.Query(ctx, q, store.Params{}.String("tenant", tenant), &n); err != nil {
		t.Fatal(err)
	}
	if len(n) != 1 || n[0].N != 50 {
		t.Fatalf("the store holds %v events of the tenant, want 50: the inflight group was stored twice or lost", n)
	}
	if _, ok := sp.Inflight(); ok {
		t.Error("the inflight group is still recorded after its commit")
	}
}

// TestAckSpooledDoesNotWaitForTheBatchDelay: an idle writer seals the
// filling batch at once (group commit), so an export is acknowledged after
// one append, not after BatchMaxDelay.
func TestAckSpooledDoesNotWaitForTheBatchDelay(t *testing.T) {
	cfg := ackSpooledConfig(t, 1000)
	cfg.BatchMaxDelay = time.Hour
	b, _ := startSpoolBatcher(t, cfg, &sink{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tool := range []string{"a", "b"} {
		if err := b.Add(ctx, events(tool, 3)); err != nil {
			t.Fatalf("Add(%s): %v (waiting for the batch delay?)", tool, err)
		}
	}
}

// TestReplayBufferFollowsTraffic checks that the replayer's group buffer
// grows with the groups it gathers rather than being sized for the largest
// insert allowed: with the default InsertMaxEvents, a few hundred spooled
// events must not cost the process a buffer of 200,000.
func TestReplayBufferFollowsTraffic(t *testing.T) {
	insertMax := DefaultConfig().InsertMaxEvents
	w := &sink{gate: make(chan struct{}), entered: make(chan struct{}, 100)}
	cfg := ackSpooledConfig(t, insertMax)
	cfg.BatchMaxEvents = 100
	b, sp := startSpoolBatcher(t, cfg, w)
	const requests, per = 40, 10
	// Piled up, the requests leave the replayer several records to group.
	addPiledUp(t, b, requests, per)
	close(w.gate)
	waitFor(t, "the replay", func() bool { return w.total() == requests*per && sp.Stats().Records == 0 })
	largest := 0
	for _, n := range w.sizes() {
		largest = max(largest, n)
	}
	if largest <= per {
		t.Fatalf("insert sizes %v: no group of several records was written, the buffer was not used", w.sizes())
	}
	// Stopped, the replayer no longer touches its buffer.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if c := cap(b.groupBuf); c < largest || c > 4*requests*per {
		t.Errorf("group buffer of %d events after groups of at most %d (InsertMaxEvents %d): want it grown to the groups, not to the bound", c, largest, insertMax)
	}
}

// TestReplayBufferSizedForTheBacklog checks that a replayer finding a
// backlog in the spool (here, left by an earlier process) allocates its
// group buffer once, for the group the backlog makes, where growing it
// record by record would double it to the next power of two past it.
func TestReplayBufferSizedForTheBacklog(t *testing.T) {
	const records, per = 40, 10
	cfg := ackSpooledConfig(t, 1000)
	cfg.BatchMaxEvents = per
	b, w := replayBacklog(t, cfg, slices.Repeat([]int{per}, records))
	if sizes := w.sizes(); len(sizes) != 1 || sizes[0] != records*per {
		t.Fatalf("insert sizes %v, want the backlog in one insert of %d", sizes, records*per)
	}
	if c := cap(b.groupBuf); c != records*per {
		t.Errorf("group buffer of %d events for a backlog of %d records of %d: want it allocated for the group, %d", c, records, per, records*per)
	}
}

// TestReplayBufferBoundedByTheInsert checks that the replayer's group
// buffer never outgrows the largest group it may gather, InsertMaxEvents
// and a batch more, even when the backlog it sees understates the records
// to come (here, a small record ahead of larger ones): doubled past that
// bound, the buffer is held, and its fresh memory faulted in, for events
// that no group can hold.
func TestReplayBufferBoundedByTheInsert(t *testing.T) {
	const insertMax, per, first = 1000, 100, 10
	cfg := ackSpooledConfig(t, insertMax)
	cfg.BatchMaxEvents = per
	b, w := replayBacklog(t, cfg, append([]int{first}, slices.Repeat([]int{per}, 29)...))
	// The spool ends its segments at InsertMaxEvents: the first one holds
	// the small record and nine large ones.
	if sizes := w.sizes(); len(sizes) == 0 || sizes[0] != first+9*per {
		t.Fatalf("insert sizes %v, want a first group of the first segment's %d events", sizes, first+9*per)
	}
	if c := cap(b.groupBuf); c > insertMax+per {
		t.Errorf("group buffer of %d events, want at most InsertMaxEvents + BatchMaxEvents = %d", c, insertMax+per)
	}
}

// replayBacklog leaves in cfg's spool a backlog of groupable records of the
// given sizes, as an earlier process would, then starts a batcher on it and
// returns it, shut down, once the backlog is replayed, with its store.
func replayBacklog(t *testing.T, cfg Config, sizes []int) (*batcher, *sink) {
	t.Helper()
	cfg.Spool.SegmentBytes = cfg.Spool.MaxBytes // segments cut by events only
	sp, err := spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, n := range sizes {
		ev := events(fmt.Sprintf("tool-%02d", i), n)
		if _, err := sp.Append(spool.Record{Tenant: cfg.Tenant, Token: groupablePrefix + batchToken(cfg.Tenant, ev), Events: ev}); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	sp.Close()
	w := &sink{}
	b, sp := startSpoolBatcher(t, cfg, w)
	waitFor(t, "the replay", func() bool { return w.total() == total && sp.Stats().Records == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	return b, w
}

// limitedRecorder is a recorder of a store that bounds its INSERTs, as
// the server store does (store.insert.max-rows).
type limitedRecorder struct {
	*recorder
	max int
}

func (r limitedRecorder) MaxInsertRows() int { return r.max }

// TestReplayGroupsWithinTheInsertRows: against a store that bounds its
// INSERTs' rows, the replayer gathers no group past the bound (a Native
// block is one INSERT; Write would split it), and the real store holds
// every event once.
func TestReplayGroupsWithinTheInsertRows(t *testing.T) {
	st := openStore(t)
	cfg := ackSpooledConfig(t, 1000)
	tenant := fmt.Sprintf("limited-%d", time.Now().UnixNano())
	cfg.Tenant = tenant
	cfg.BatchMaxEvents = 10
	sp, err := spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UnixNano()
	for i := range 10 {
		ev := events(fmt.Sprintf("%s-%d", tenant, i), 10)
		for j := range ev {
			ev[j].Time = now
		}
		if _, err := sp.Append(spool.Record{Tenant: tenant, Token: groupablePrefix + batchToken(tenant, ev), Events: ev}); err != nil {
			t.Fatal(err)
		}
	}
	sp.Close()
	sp, err = spool.Open(cfg.Spool, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	rec := limitedRecorder{recorder: &recorder{Writer: st}, max: 25}
	b := newBatcher(cfg, rec, sp, &counters{}, nil, tracing{})
	waitFor(t, "the replay", func() bool { return sp.Stats().Records == 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := b.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	sizes := slices.Clone(rec.sizes)
	rec.mu.Unlock()
	if want := []int{20, 20, 20, 20, 20}; !slices.Equal(sizes, want) {
		t.Errorf("insert sizes %v, want %v: groups of whole records within 25 rows", sizes, want)
	}
	var n []struct {
		N int `json:"n"`
	}
	q := store.Query{Name: "limited_count", SQL: "SELECT count() AS n FROM mcpdrift.events WHERE tenant = {tenant:String}"}
	if err := st.Query(ctx, q, store.Params{}.String("tenant", tenant), &n); err != nil {
		t.Fatal(err)
	}
	if len(n) != 1 || n[0].N != 100 {
		t.Fatalf("the store holds %v events of the tenant, want 100", n)
	}
}
