package ingest

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// writeLogEvery bounds how often failing store writes are logged.
const writeLogEvery = 10 * time.Second

// loggedWriter is a batcher's store writer: it logs failed writes, at most
// one line per writeLogEvery with the failures since the last line, and
// the first success after failures. The failures are also counted in the
// ingester's metrics; this is what an operator reads in the logs.
type loggedWriter struct {
	w     store.Writer
	nw    nativeWriter // w, when it takes Native blocks; nil otherwise
	log   *slog.Logger
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex
	failing   bool
	since     time.Time // the first failure since the last success
	lastLog   time.Time
	failed    int // failures since the last line
	failedAll int // failures since the last success
	events    int // events in the writes that failed since the last line
}

func newLoggedWriter(w store.Writer, log *slog.Logger) *loggedWriter {
	nw, _ := w.(nativeWriter)
	return &loggedWriter{w: w, nw: nw, log: log, every: writeLogEvery, now: time.Now}
}

// nativeWriter is a store that takes an insert already encoded as a
// Native block, as both stores do: the replayer transcodes spooled
// records into one (spool.Transcoder) rather than decoding them to
// events that the store encodes again. WriteNative stores blk's rows
// under token as Write stores a batch of the same events under it.
type nativeWriter interface {
	WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error
}

// WriteNative writes through nw, logged as Write is; only called when nw
// is set.
func (l *loggedWriter) WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error {
	err := l.nw.WriteNative(ctx, token, blk)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return err
	}
	l.note(err, blk.Rows())
	return err
}

// Write implements store.Writer.
func (l *loggedWriter) Write(ctx context.Context, b store.Batch) error {
	err := l.w.Write(ctx, b)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// Cut short by its caller (a slow write left to the spool, a
		// shutdown): the caller logs what it does about it.
		return err
	}
	l.note(err, len(b.Events))
	return err
}

func (l *loggedWriter) note(err error, events int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if err == nil {
		if l.failing {
			l.log.Info("store writes succeed again", "failed_writes", l.failedAll, "failing_for", now.Sub(l.since).Round(time.Millisecond))
		}
		l.failing, l.failed, l.failedAll, l.events = false, 0, 0, 0
		return
	}
	if l.failedAll == 0 {
		l.since = now
	}
	l.failed++
	l.failedAll++
	l.events += events
	if l.failing && now.Sub(l.lastLog) < l.every {
		return
	}
	level := slog.LevelWarn
	if errors.Is(err, store.ErrPermanent) {
		level = slog.LevelError
	}
	l.log.Log(context.Background(), level, "store write failed", "error", err, "failed_writes", l.failed, "events", l.events,
		"permanent", errors.Is(err, store.ErrPermanent), "unavailable", errors.Is(err, store.ErrUnavailable), "next_log_in", l.every)
	l.failing, l.lastLog, l.failed, l.events = true, now, 0, 0
}
