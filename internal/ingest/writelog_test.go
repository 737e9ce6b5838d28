package ingest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// recordingHandler keeps the records logged through it.
type recordingHandler struct {
	mu      sync.Mutex
	records []string
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler            { return h }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", r.Level, r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "failed_writes" || a.Key == "events" || a.Key == "unavailable" {
			fmt.Fprintf(&b, " %s=%v", a.Key, a.Value)
		}
		return true
	})
	h.mu.Lock()
	h.records = append(h.records, b.String())
	h.mu.Unlock()
	return nil
}

// failingWriter fails while fail is set.
type failingWriter struct{ fail error }

func (f *failingWriter) Write(context.Context, store.Batch) error { return f.fail }

// TestWriteFailuresAreLoggedRateLimited: a run of failed store writes is
// logged once per interval with the count in between, and the recovery
// once.
func TestWriteFailuresAreLoggedRateLimited(t *testing.T) {
	h := &recordingHandler{}
	w := &failingWriter{fail: fmt.Errorf("cannot insert: %w: connection refused", store.ErrUnavailable)}
	l := newLoggedWriter(w, slog.New(h))
	now := time.Unix(0, 0)
	l.now = func() time.Time { return now }
	batch := store.Batch{Events: make([]otelschema.Event, 10)}
	write := func(n int, step time.Duration) {
		for range n {
			_ = l.Write(context.Background(), batch)
			now = now.Add(step)
		}
	}
	write(5, time.Second)  // one line, then 4 suppressed within 10 s
	write(10, time.Second) // the next line at 10 s, with the 6 writes since
	w.fail = nil
	write(1, time.Second)
	write(1, time.Second) // no line: nothing failed
	w.fail = errors.New("timeout")
	write(1, time.Second)
	want := []string{
		"WARN store write failed failed_writes=1 events=10 unavailable=true",
		"WARN store write failed failed_writes=10 events=100 unavailable=true",
		"INFO store writes succeed again failed_writes=15",
		"WARN store write failed failed_writes=1 events=10 unavailable=false",
	}
	if fmt.Sprint(h.records) != fmt.Sprint(want) {
		t.Errorf("logged\n%s\nwant\n%s", strings.Join(h.records, "\n"), strings.Join(want, "\n"))
	}
}
