package clientview

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// testStore is a migrated store and its database.
type testStore interface {
	store.Store
	schema.Execer
}

func TestMain(m *testing.M) {
	code := m.Run()
	clickhousetest.StopAll()
	os.Exit(code)
}

// openEmbedded opens an embedded store in a temporary directory.
func openEmbedded(t *testing.T) (testStore, string) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	cfg := embedded.DefaultConfig(t.TempDir())
	st, err := embedded.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, cfg.Schema.Database
}

// call is a tools/call event of tenant's tool, in trace and with request.
func call(trace byte, request, tool string, view otelschema.ClientView, at time.Time) otelschema.Event {
	e := otelschema.Event{
		Name: otelschema.EventCall, Time: at.UnixNano(), TraceID: [16]byte{0xc1, trace},
		SpanID: [8]byte{byte(view), trace, request[0]}, Service: "books-mcp", Environment: "test",
		Tool: tool, Method: "tools/call", RequestID: request, Outcome: otelschema.OutcomeCurrent, ClientView: view,
	}
	e.ID = uint64(trace)<<32 | uint64(request[0])<<8 | uint64(view)<<4 | uint64(len(tool))
	return e
}

// TestRelease stores server spans and client views of the same and of
// other calls, then releases: a client view whose call has a server span
// (same tenant, trace, request and tool) is dropped, every other counts
// once, in the events and in the rollups alike, and a release run again
// stores nothing more.
func TestRelease(t *testing.T) {
	backends := []struct {
		name string
		open func(t *testing.T) (testStore, string)
	}{
		{"embedded", openEmbedded},
		{"server", func(t *testing.T) (testStore, string) {
			st := clickhousetest.Server(t).Open(t)
			return st, st.Schema.Database
		}},
		{"cluster", func(t *testing.T) (testStore, string) {
			st := clickhousetest.ShardedCluster(t).Open(t)
			return st, st.Schema.Database
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			st, db := b.open(t)
			if _, err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			at := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
			held, none := otelschema.ClientViewHeld, otelschema.ClientViewNone
			write := func(tenant string, events ...otelschema.Event) {
				t.Helper()
				if err := st.Write(ctx, store.Batch{Tenant: tenant, Events: events}); err != nil {
					t.Fatal(err)
				}
			}
			write("a",
				call(1, "1", "search_books", none, at),                  // the server's span of a call
				call(1, "1", "search_books", held, at),                  // its client view: dropped
				call(1, "2", "search_books", held, at),                  // another call of the trace: counted
				call(2, "1", "search_books", held, at),                  // another trace: counted
				call(1, "1", "reserve_book", held, at.Add(time.Second)), // another tool: counted
			)
			write("b", call(1, "1", "search_books", held, at)) // tenant a's server span is not its twin

			counts := func() map[string][2]uint64 {
				t.Helper()
				var rows []struct {
					Tenant string `json:"tenant"`
					Raw    uint64 `json:"raw"`
					Rollup uint64 `json:"rollup"`
				}
				q := store.Query{Name: "test_counts", SQL: "SELECT tenant, sum(raw) AS raw, sum(rollup) AS rollup FROM (" +
					"SELECT tenant, count() AS raw, toUInt64(0) AS rollup FROM " + db + ".events WHERE event_name = 'mcp.drift.call' GROUP BY tenant " +
					"UNION ALL SELECT tenant, toUInt64(0), sum(calls) FROM " + db + ".calls_1h GROUP BY tenant) GROUP BY tenant ORDER BY tenant"}
				if err := st.Query(ctx, q, nil, &rows); err != nil {
					t.Fatal(err)
				}
				m := map[string][2]uint64{}
				for _, r := range rows {
					m[r.Tenant] = [2]uint64{r.Raw, r.Rollup}
				}
				return m
			}
			if got := counts(); got["a"] != [2]uint64{1, 1} || got["b"] != [2]uint64{} {
				t.Fatalf("before the release, calls (raw, rollup) = %v, want a: [1 1], b: none", got)
			}

			r := New(st, db, Config{Hold: time.Millisecond, Interval: time.Second}, slog.New(slog.NewTextHandler(io.Discard, nil)))
			time.Sleep(20 * time.Millisecond)
			res, err := r.Release(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Claimed || res.Held != 5 || res.Released != 4 {
				t.Errorf("release = %+v, want claimed, 5 held, 4 released", res)
			}
			if got := counts(); got["a"] != [2]uint64{4, 4} || got["b"] != [2]uint64{1, 1} {
				t.Errorf("after the release, calls (raw, rollup) = %v, want a: [4 4], b: [1 1]", got)
			}
			var views []struct {
				RequestID  string `json:"request_id"`
				Tool       string `json:"tool"`
				ClientView string `json:"client_view"`
			}
			if err := st.Query(ctx, store.Query{Name: "test_views", SQL: "SELECT request_id, tool, toString(client_view) AS client_view FROM " + db +
				".events WHERE tenant = 'a' ORDER BY tool, trace_id, request_id"}, nil, &views); err != nil {
				t.Fatal(err)
			}
			want := []string{"reserve_book 1 alone", "search_books 1 ", "search_books 2 alone", "search_books 1 alone"}
			for i, v := range views {
				if i >= len(want) || v.Tool+" "+v.RequestID+" "+v.ClientView != want[i] {
					t.Errorf("events of a = %+v, want %q", views, want)
					break
				}
			}

			// Run again over the same window: nothing more is stored.
			again, err := r.release(ctx, res.From, res.To)
			if err != nil {
				t.Fatal(err)
			}
			if again.Held != 5 || again.Released != 0 {
				t.Errorf("release run again = %+v, want 5 held, 0 released", again)
			}
			if got := counts(); got["a"] != [2]uint64{4, 4} || got["b"] != [2]uint64{1, 1} {
				t.Errorf("after the second release, calls (raw, rollup) = %v, want a: [4 4], b: [1 1]", got)
			}
			// The next release starts where this one ended.
			next, err := r.Release(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if next.Held != 0 || (next.Claimed && !next.From.Equal(res.To)) {
				t.Errorf("next release = %+v, want none held, from %s", next, res.To)
			}
			if views, runs := r.Released(); views != 4 || runs < 1 {
				t.Errorf("Released() = %d views, %d runs; want 4, 1 or more", views, runs)
			}
		})
	}
}

// TestClaim: of two releasers, one owns each period.
func TestClaim(t *testing.T) {
	st, db := openEmbedded(t)
	ctx := context.Background()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r1, r2 := New(st, db, DefaultConfig(), log), New(st, db, DefaultConfig(), log)
	for _, c := range []struct {
		r     *Releaser
		epoch uint64
		want  bool
	}{{r1, 42, true}, {r2, 42, false}, {r1, 42, true}, {r2, 43, true}, {r1, 43, false}} {
		got, err := c.r.claim(ctx, c.epoch)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("claim of %d by %s = %v, want %v", c.epoch, c.r.owner, got, c.want)
		}
	}
}
