package app_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

// written records the batches an ingester writes.
type written struct {
	mu     sync.Mutex
	events []otelschema.Event
}

func (w *written) Write(_ context.Context, b store.Batch) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.events = append(w.events, b.Events...)
	return nil
}

// TestNewIngester: the ingester NewIngester builds redacts as the
// commands' does, and only Config.NoRedaction leaves redaction out; a role
// without an ingester is refused.
func TestNewIngester(t *testing.T) {
	const secret = "hunter2-secret-value"
	if _, err := app.NewIngester(app.DefaultConfig(app.RoleAPI, "api", app.NewServerStore()), &written{}, io.Discard); err == nil {
		t.Error("NewIngester for the api role: no error")
	}
	// One simulated call, its arguments holding a password.
	cfg := simulate.DefaultConfig()
	cfg.Start = time.Now().Add(-cfg.Span)
	g, err := simulate.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rec simulate.Record
	for g.Next(&rec) && rec.Event.ArgsRaw == "" {
	}
	e := rec.Event
	e.ArgsRaw, e.ArgsNormalized = `{"password":"`+secret+`"}`, ""
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	otelschema.EncodeResource(&e, rl.Resource())
	otelschema.EncodeLogRecord(&e, rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty())
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}

	for _, off := range []bool{false, true} {
		c := app.DefaultConfig(app.RoleIngest, "ingest", app.NewServerStore())
		if err := c.Parse([]string{"-store.dsn=clickhouse://127.0.0.1:9000", "-ingest.spool.dir=off",
			"-otlp.grpc.listen=127.0.0.1:0", "-otlp.http.listen=127.0.0.1:0", "-log.level=error"}, io.Discard); err != nil {
			t.Fatal(err)
		}
		c.NoRedaction = off
		w := &written{}
		in, err := app.NewIngester(c, w, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if err := in.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Post("http://"+in.HTTPAddr().String()+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := in.Shutdown(ctx); err != nil {
			t.Error(err)
		}
		cancel()
		if resp.StatusCode != http.StatusOK || len(w.events) != 1 {
			t.Fatalf("NoRedaction %v: status %d, %d events written, want 200 and 1", off, resp.StatusCode, len(w.events))
		}
		if got := w.events[0].ArgsRaw; strings.Contains(got, secret) != off {
			t.Errorf("NoRedaction %v: arguments written as %s", off, got)
		}
	}
}
