package clickhouse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// flushes records what a fake flush function was sent, and fails on
// demand.
type flushes struct {
	mu       sync.Mutex
	sent     []string // "token rows tenants"
	inFlight atomic.Int32
	maxSeen  atomic.Int32
	fail     func(c *chunk, attempt int) error
	attempts map[string]int
	delay    time.Duration
}

func (f *flushes) flush(_ context.Context, c *chunk) error {
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxSeen.Load()
		if n <= m || f.maxSeen.CompareAndSwap(m, n) {
			break
		}
	}
	time.Sleep(f.delay)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attempts == nil {
		f.attempts = map[string]int{}
	}
	key := fmt.Sprintf("%s/%d", c.token, c.rows)
	f.attempts[key]++
	if f.fail != nil {
		if err := f.fail(c, f.attempts[key]); err != nil {
			return err
		}
	}
	tenants := map[string]bool{}
	rows := 0
	for _, p := range c.parts {
		tenants[p.tenant] = true
		rows += len(p.events)
	}
	if rows != c.rows {
		return fmt.Errorf("chunk counts %d rows, holds %d", c.rows, rows)
	}
	f.sent = append(f.sent, fmt.Sprintf("%q %d %d", shownToken(c.token), c.rows, len(tenants)))
	return nil
}

// shownToken shows a unique token (store.UniqueToken) as "unique" and
// records it, so that a test can check that no two chunks share one.
func shownToken(token string) string {
	if !strings.HasPrefix(token, "untokened:") {
		return token
	}
	seenMu.Lock()
	defer seenMu.Unlock()
	if seenTokens[token] {
		return "DUPLICATE " + token
	}
	seenTokens[token] = true
	return "unique"
}

var (
	seenMu     sync.Mutex
	seenTokens = map[string]bool{}
)

func (f *flushes) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := append([]string(nil), f.sent...)
	sort.Strings(out)
	return out
}

func testInsertConfig() InsertConfig {
	return InsertConfig{MaxRows: 100, MinRows: 30, MaxDelay: 50 * time.Millisecond, Senders: 2, Attempts: 3, Backoff: time.Millisecond, Timeout: 5 * time.Second}
}

func events(n int) []otelschema.Event { return make([]otelschema.Event, n) }

func TestSplit(t *testing.T) {
	f := func(n int, token string, want ...string) {
		t.Helper()
		var got []string
		for _, c := range split(store.Batch{Token: token, Events: events(n)}, 100) {
			got = append(got, fmt.Sprintf("%s:%d", shownToken(c.token), c.rows))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("split(%d, %q) = %v, want %v", n, token, got, want)
		}
	}
	f(1, "t", "t:1")
	f(100, "t", "t:100")
	f(101, "t", "t/1:100", "t/2:1")
	f(250, "t", "t/1:100", "t/2:100", "t/3:50")
	f(250, "", "unique:100", "unique:100", "unique:50")
	if c := split(store.Batch{Events: events(1)}, 10)[0]; c.parts[0].tenant != store.DefaultTenant {
		t.Errorf("an empty tenant became %q, want %q", c.parts[0].tenant, store.DefaultTenant)
	}
}

func TestSenderTokenBatchesAreSentAlone(t *testing.T) {
	var f flushes
	s := newSender(testInsertConfig(), f.flush, isTransient)
	defer s.close()
	ctx := context.Background()
	if err := s.write(ctx, store.Batch{Tenant: "a", Token: "tok", Events: events(5)}); err != nil {
		t.Fatal(err)
	}
	if err := s.write(ctx, store.Batch{Tenant: "a", Token: "big", Events: events(250)}); err != nil {
		t.Fatal(err)
	}
	want := []string{`"big/1" 100 1`, `"big/2" 100 1`, `"big/3" 50 1`, `"tok" 5 1`}
	if got := f.log(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent %v, want %v", got, want)
	}
}

func TestSenderMergesSmallBatchesWithoutToken(t *testing.T) {
	var f flushes
	cfg := testInsertConfig()
	cfg.MaxDelay = time.Hour // only the row count can release the chunk
	s := newSender(cfg, f.flush, isTransient)
	defer s.close()
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for i, tenant := range []string{"a", "b", "c"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- s.write(context.Background(), store.Batch{Tenant: tenant, Events: events(10 + i)}) // 10+11+12 ≥ 30
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got, want := f.log(), []string{`"unique" 33 3`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent %v, want one merged insert %v", got, want)
	}
}

func TestSenderReleasesSmallBatchAfterDelay(t *testing.T) {
	var f flushes
	s := newSender(testInsertConfig(), f.flush, isTransient)
	defer s.close()
	start := time.Now()
	if err := s.write(context.Background(), store.Batch{Tenant: "a", Events: events(3)}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 40*time.Millisecond {
		t.Errorf("a small batch was sent after %v, before MaxDelay", waited)
	}
	if got, want := f.log(), []string{`"unique" 3 1`}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent %v, want %v", got, want)
	}
	// A batch of MinRows or more without a token is sent at once.
	start = time.Now()
	if err := s.write(context.Background(), store.Batch{Tenant: "a", Events: events(30)}); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited > time.Second {
		t.Errorf("a full batch waited %v", waited)
	}
}

func TestSenderRetriesTransientErrorsWithTheSameToken(t *testing.T) {
	f := flushes{fail: func(c *chunk, attempt int) error {
		if attempt < 3 {
			return fmt.Errorf("read: %w", io.ErrUnexpectedEOF)
		}
		return nil
	}}
	s := newSender(testInsertConfig(), f.flush, isTransient)
	defer s.close()
	if err := s.write(context.Background(), store.Batch{Token: "tok", Events: events(5)}); err != nil {
		t.Fatalf("a transient error that clears on the third attempt failed the write: %v", err)
	}
	if f.attempts["tok/5"] != 3 {
		t.Errorf("attempts = %v, want 3 with token tok", f.attempts)
	}
}

func TestSenderGivesUp(t *testing.T) {
	f := flushes{fail: func(*chunk, int) error { return &clickhouse.Exception{Code: 252, Message: "too many parts"} }}
	s := newSender(testInsertConfig(), f.flush, isTransient)
	defer s.close()
	err := s.write(context.Background(), store.Batch{Token: "tok", Events: events(5)})
	if err == nil || f.attempts["tok/5"] != 3 {
		t.Fatalf("err = %v after %v attempts, want an error after 3", err, f.attempts)
	}
}

func TestSenderDoesNotRetryPermanentErrors(t *testing.T) {
	f := flushes{fail: func(*chunk, int) error { return &clickhouse.Exception{Code: 53, Message: "type mismatch"} }}
	s := newSender(testInsertConfig(), f.flush, isTransient)
	defer s.close()
	if err := s.write(context.Background(), store.Batch{Token: "tok", Events: events(5)}); err == nil || f.attempts["tok/5"] != 1 {
		t.Fatalf("err = %v after %v attempts, want one attempt", err, f.attempts)
	}
}

func TestSenderRetryStopsWithContext(t *testing.T) {
	cfg := testInsertConfig()
	cfg.Backoff = time.Hour
	f := flushes{fail: func(*chunk, int) error { return io.EOF }}
	s := newSender(cfg, f.flush, isTransient)
	defer s.close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := s.write(ctx, store.Batch{Token: "tok", Events: events(5)}); !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want the insert error and the deadline", err)
	}
}

func TestSenderBoundsConcurrency(t *testing.T) {
	f := flushes{delay: 5 * time.Millisecond}
	s := newSender(testInsertConfig(), f.flush, isTransient)
	defer s.close()
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := s.write(context.Background(), store.Batch{Token: fmt.Sprint(i), Events: events(350)}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if got := f.maxSeen.Load(); got > 2 || got < 1 {
		t.Errorf("%d inserts ran at once, want at most Senders = 2", got)
	}
	if got := len(f.log()); got != 8*4 {
		t.Errorf("%d inserts, want 32", got)
	}
}

func TestSenderCloseFlushesPending(t *testing.T) {
	var f flushes
	cfg := testInsertConfig()
	cfg.MaxDelay = time.Hour
	s := newSender(cfg, f.flush, isTransient)
	done := make(chan error, 1)
	go func() { done <- s.write(context.Background(), store.Batch{Events: events(3)}) }()
	for {
		s.mu.Lock()
		p := s.pending
		s.mu.Unlock()
		if p != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := f.log(); len(got) != 1 {
		t.Errorf("sent %v, want the pending batch", got)
	}
	if err := s.write(context.Background(), store.Batch{Events: events(3)}); !errors.Is(err, store.ErrClosed) {
		t.Errorf("write after close = %v, want ErrClosed", err)
	}
}

func TestErrorClasses(t *testing.T) {
	for _, c := range []struct {
		err                  error
		transient, permanent bool
	}{
		{io.EOF, true, false},
		{fmt.Errorf("x: %w", io.ErrUnexpectedEOF), true, false},
		{&clickhouse.Exception{Code: 252}, true, false},
		{&clickhouse.Exception{Code: 319}, true, false},
		{&clickhouse.Exception{Code: 53}, false, true},
		{&clickhouse.Exception{Code: 27}, false, true},
		{&clickhouse.Exception{Code: 60}, false, false}, // UNKNOWN_TABLE: not migrated yet
		{context.Canceled, false, false},
		{errors.New("other"), false, false},
	} {
		if got := isTransient(c.err); got != c.transient {
			t.Errorf("isTransient(%v) = %v", c.err, got)
		}
		if got := isPermanent(c.err); got != c.permanent {
			t.Errorf("isPermanent(%v) = %v", c.err, got)
		}
	}
}
