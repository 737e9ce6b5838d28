package embedded_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// These tests run the test binary again as a child process, selected by
// MCPDRIFT_CHILD, to check what only a separate process can show: a second
// owner, a missing library, a recoverable panic, data surviving a restart.

func TestMain(m *testing.M) {
	// A process time zone other than UTC: the store must not follow it.
	os.Setenv("TZ", "America/New_York")
	if role := os.Getenv("MCPDRIFT_CHILD"); role != "" {
		os.Exit(child(role, os.Getenv("MCPDRIFT_CHILD_DIR")))
	}
	os.Exit(m.Run())
}

func child(role, dir string) int {
	ctx := context.Background()
	switch role {
	case "open-missing-library":
		_, err := embedded.Open(ctx, embedded.DefaultConfig(dir))
		fmt.Println(err)
		return 0
	case "hold":
		s, err := embedded.Open(ctx, embedded.DefaultConfig(dir))
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		defer s.Close()
		fmt.Println("holding")
		time.Sleep(time.Minute)
		return 0
	case "panic":
		s, err := embedded.Open(ctx, embedded.DefaultConfig(dir))
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		defer s.Close()
		if err := s.Ping(ctx); err != nil {
			fmt.Println("ping:", err)
			return 1
		}
		fmt.Println(recoverNilDeref())
		return 0
	case "write":
		s, err := embedded.Open(ctx, embedded.DefaultConfig(dir))
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		if _, err := s.Migrate(ctx); err != nil {
			fmt.Println("migrate:", err)
			return 1
		}
		events := make([]otelschema.Event, 1234)
		for i := range events {
			events[i] = otelschema.Event{ID: uint64(i), Name: otelschema.EventCall, Time: time.Now().UnixNano(), Tool: "t", Outcome: otelschema.OutcomeCurrent}
		}
		if err := s.Write(ctx, store.Batch{Tenant: "persist", Events: events}); err != nil {
			fmt.Println("write:", err)
			return 1
		}
		fmt.Println("written")
		return 0 // exit without Close: acknowledged data must survive
	case "write-token":
		s, err := embedded.Open(ctx, embedded.DefaultConfig(dir))
		if err != nil {
			fmt.Println("open:", err)
			return 1
		}
		if _, err := s.Migrate(ctx); err != nil {
			fmt.Println("migrate:", err)
			return 1
		}
		base, err := strconv.ParseInt(os.Getenv("MCPDRIFT_CHILD_BASE"), 10, 64)
		if err != nil {
			fmt.Println("base:", err)
			return 1
		}
		if err := s.Write(ctx, replayedBatch(base)); err != nil {
			fmt.Println("write:", err)
			return 1
		}
		fmt.Println("written")
		return 0 // killed before the acknowledgement reached the spool
	}
	return 2
}

// replayedBatch is the batch TestReplayAfterRestartIsStoredOnce writes
// twice, under one token: 300 calls from base on, a second apart, of every
// outcome the rollups split, and every source of the client revision.
func replayedBatch(base int64) store.Batch {
	outcomes := []otelschema.Outcome{otelschema.OutcomeCurrent, otelschema.OutcomeNormalized, otelschema.OutcomeRejectedStale}
	events := make([]otelschema.Event, 300)
	for i := range events {
		e := otelschema.Event{ID: uint64(i + 1), Name: otelschema.EventCall, Time: base + int64(i)*int64(time.Second),
			Tool: fmt.Sprintf("tool-%d", i%3), SessionID: fmt.Sprintf("s%d", i%7), ClientName: "cursor", ClientVersion: "1",
			RevisionClient: "1", RevisionClientSource: otelschema.RevisionSource(i % 4), RevisionServer: "2", Outcome: outcomes[i%3]}
		if e.Outcome == otelschema.OutcomeNormalized {
			e.AdapterID = "v1-to-v2"
		}
		events[i] = e
	}
	return store.Batch{Tenant: "replayed", Token: "replayed-batch", Events: events}
}

func recoverNilDeref() (msg string) {
	defer func() {
		if r := recover(); r != nil {
			msg = fmt.Sprintf("recovered: %v", r)
		}
	}()
	var p *struct{ x int }
	return fmt.Sprint(p.x)
}

func runChild(t *testing.T, role, dir string, env ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "MCPDRIFT_CHILD="+role, "MCPDRIFT_CHILD_DIR="+dir)...)
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("child %s did not finish in time (hung?): %s", role, out)
	}
	return string(out), err
}

func TestOpenWithoutLibrarySaysHowToGetIt(t *testing.T) {
	out, err := runChild(t, "open-missing-library", t.TempDir(), embedded.LibraryEnv+"=/nonexistent/libchdb.so")
	if err != nil {
		t.Fatalf("child failed: %v: %s", err, out)
	}
	for _, want := range []string{"libchdb.so not found", embedded.LibraryEnv, "/nonexistent/libchdb.so"} {
		if !strings.Contains(out, want) {
			t.Errorf("error %q does not mention %q", out, want)
		}
	}
	// And with the default cache location empty, it names the make target.
	out, _ = runChild(t, "open-missing-library", t.TempDir(), embedded.LibraryEnv+"=", "XDG_CACHE_HOME="+t.TempDir())
	if !strings.Contains(out, "make libchdb") {
		t.Errorf("error %q does not say to run make libchdb", out)
	}
}

func TestSecondProcessGetsInUse(t *testing.T) {
	requireLibrary(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	holder := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	holder.Env = append(os.Environ(), "MCPDRIFT_CHILD=hold", "MCPDRIFT_CHILD_DIR="+dir)
	stdout, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Process.Kill(); _ = holder.Wait() }()
	buf := make([]byte, 64)
	n, _ := stdout.Read(buf)
	if !strings.Contains(string(buf[:n]), "holding") {
		t.Fatalf("holder did not open the store: %q", buf[:n])
	}
	_, err = embedded.Open(context.Background(), embedded.DefaultConfig(dir))
	if !errors.Is(err, store.ErrInUse) {
		t.Fatalf("Open of a held directory = %v, want ErrInUse", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprint(holder.Process.Pid)) {
		t.Errorf("error %q does not name the holder's pid %d", err, holder.Process.Pid)
	}
}

func TestGoPanicStaysRecoverableAfterOpen(t *testing.T) {
	requireLibrary(t)
	out, err := runChild(t, "panic", t.TempDir())
	if err != nil {
		t.Fatalf("child failed: %v: %s", err, out)
	}
	if !strings.Contains(out, "recovered: runtime error: invalid memory address or nil pointer dereference") {
		t.Fatalf("nil dereference was not recovered: %s", out)
	}
}

func TestDataSurvivesRestartWithoutClose(t *testing.T) {
	requireLibrary(t)
	dir := t.TempDir()
	out, err := runChild(t, "write", dir)
	if err != nil || !strings.Contains(out, "written") {
		t.Fatalf("writer: %v: %s", err, out)
	}
	s, err := embedded.Open(context.Background(), embedded.DefaultConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	applied, err := s.Migrate(context.Background())
	if err != nil || len(applied) != 0 {
		t.Fatalf("Migrate after restart applied %v, %v; want nothing", applied, err)
	}
	var rows []struct {
		N int `json:"n"`
	}
	q := store.Query{Name: "count", SQL: "SELECT count() AS n FROM mcpdrift.events WHERE tenant = 'persist'"}
	if err := s.Query(context.Background(), q, nil, &rows); err != nil {
		t.Fatal(err)
	}
	if rows[0].N != 1234 {
		t.Fatalf("after restart %d events, want 1234", rows[0].N)
	}
}

// TestReplayAfterRestartIsStoredOnce: a batch that the process which ran
// the migrations wrote, written again under its token by the next process
// (the spool's replay after a crash), is stored once in every table. It
// failed while migration 12 left the views it changed with MODIFY QUERY as
// the migrating process held them, not as a restart loads them (their
// inserts' deduplication keys differed across the restart).
func TestReplayAfterRestartIsStoredOnce(t *testing.T) {
	requireLibrary(t)
	dir := t.TempDir()
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second).UnixNano()
	out, err := runChild(t, "write-token", dir, "MCPDRIFT_CHILD_BASE="+strconv.FormatInt(base, 10))
	if err != nil || !strings.Contains(out, "written") {
		t.Fatalf("writer: %v: %s", err, out)
	}
	ctx := context.Background()
	s, err := embedded.Open(ctx, embedded.DefaultConfig(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, replayedBatch(base)); err != nil {
		t.Fatal(err)
	}
	for table, agg := range map[string]string{
		"events": "count()", "recent_calls": "count()", "calls_1h": "sum(calls)", "calls_1d": "sum(calls)",
		"usage_1h": "sum(calls)", "usage_1d": "sum(calls)", "adapted_1h": "sum(calls) * 3", "rejected_1h": "sum(calls) * 3",
		"calls_1h_sources": "sum(calls_listed + calls_inferred) * 2",
	} {
		from := table
		if table == "calls_1h_sources" {
			from = "calls_1h"
		}
		var rows []struct {
			N uint64 `json:"n"`
		}
		q := store.Query{Name: "replayed_" + table, SQL: "SELECT toUInt64(" + agg + ") AS n FROM mcpdrift." + from + " WHERE tenant = 'replayed'"}
		if err := s.Query(ctx, q, nil, &rows); err != nil {
			t.Fatal(err)
		}
		if rows[0].N != 300 {
			t.Errorf("%s counts %d after the batch was replayed by the next process, want 300", table, rows[0].N)
		}
	}
}
