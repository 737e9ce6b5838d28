package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// The engine serves one data path per process: the package's tests share
// one embedded store, opened on first use and closed by TestMain, and keep
// their rows apart by run id.
var (
	storeOnce   sync.Once
	sharedStore *embedded.Store
	storeDir    string
	storeErr    error
)

// openStore returns the shared embedded store, migrated. It skips when
// libchdb is missing, unless MCPDRIFT_REQUIRE_CHDB=1.
func openStore(t *testing.T) *embedded.Store {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") == "1" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB=1: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	storeOnce.Do(func() {
		ctx := context.Background()
		if storeDir, storeErr = os.MkdirTemp("", "mcpdrift-ingest-"); storeErr != nil {
			return
		}
		if sharedStore, storeErr = embedded.Open(ctx, embedded.DefaultConfig(storeDir)); storeErr != nil {
			return
		}
		_, storeErr = sharedStore.Migrate(ctx)
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return sharedStore
}

// closeStore closes the shared store, if a test opened it, and removes its
// directory.
func closeStore() {
	if sharedStore != nil {
		if err := sharedStore.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the embedded store:", err)
		}
	}
	if storeDir != "" {
		_ = os.RemoveAll(storeDir)
	}
}

// errExporter is the real OTLP exporter, remembering the errors its exports
// return — partial successes among them, which the SDK reports as errors.
type errExporter struct {
	sdklog.Exporter
	mu   sync.Mutex
	errs []error
}

func (e *errExporter) Export(ctx context.Context, records []sdklog.Record) error {
	err := e.Exporter.Export(ctx, records)
	if err != nil {
		e.mu.Lock()
		e.errs = append(e.errs, err)
		e.mu.Unlock()
	}
	return err
}

// legacyName returns the name of an earlier release that reads as name.
func legacyName(t *testing.T, name string) string {
	t.Helper()
	for _, old := range otelschema.LegacyNames() {
		if now, _ := otelschema.CurrentName(old); now == name {
			return old
		}
	}
	t.Fatalf("%s has no name of an earlier release", name)
	return ""
}

// emitDrift emits, through the OpenTelemetry Go SDK, 40 valid drift events
// tagged with run, 5 invalid ones and 2 plain logs, then flushes. With
// legacy set, every event and attribute of mcpdrift's own is sent under
// its name of an earlier release (mcp.drift.*).
func emitDrift(t *testing.T, exp sdklog.Exporter, run string, legacy bool) {
	t.Helper()
	ctx := context.Background()
	lp := sdklog.NewLoggerProvider(
		sdklog.WithProcessor(sdklog.NewBatchProcessor(exp, sdklog.WithExportInterval(time.Hour))),
		sdklog.WithResource(resource.NewSchemaless(
			attribute.String("service.name", "ticket-mcp"),
			attribute.String("service.version", "2.3.0"),
			attribute.String("deployment.environment.name", "test"),
		)),
	)
	logger := lp.Logger("github.com/mcpdrift/mcpdrift/internal/ingest/e2e")
	now := time.Now()
	seq := 0
	n := func(name string) string {
		if legacy && strings.HasPrefix(name, otelschema.EventNamePrefix) {
			return legacyName(t, name)
		}
		return name
	}
	str := func(k, v string) attribute.KeyValue { return attribute.String(n(k), v) }
	emit := func(e otelschema.EventName, kvs ...attribute.KeyValue) {
		seq++
		var r log.Record
		r.SetEventName(n(e.String()))
		r.SetTimestamp(now.Add(time.Duration(seq) * time.Millisecond))
		r.AddAttributes(str(otelschema.AttrRunID, run), attribute.String(otelschema.AttrRequestID, fmt.Sprint(seq)))
		r.AddAttributes(kvs...)
		logger.Emit(ctx, r)
	}
	tool := attribute.String(otelschema.AttrToolName, "create_ticket")
	for range 15 {
		emit(otelschema.EventCall, tool, str(otelschema.AttrOutcome, "current"), str(otelschema.AttrRevisionServer, "7"))
	}
	for range 6 {
		emit(otelschema.EventCall, tool, str(otelschema.AttrOutcome, "normalized"),
			str(otelschema.AttrAdapterID, "ticket-v6-to-v7"), str(otelschema.AttrRevisionClient, "6"))
	}
	for range 4 {
		emit(otelschema.EventCall, tool, str(otelschema.AttrOutcome, "rejected_stale"),
			str(otelschema.AttrErrorCode, "STALE_TOOL_SCHEMA"), attribute.Bool(n(otelschema.AttrSideEffectStarted), false))
	}
	for range 6 {
		emit(otelschema.EventRefresh, tool, str(otelschema.AttrRevisionBefore, "6"), str(otelschema.AttrRevisionAfter, "7"))
	}
	for range 5 {
		emit(otelschema.EventRepair, tool, str(otelschema.AttrRepairAction, "refresh_retry"),
			attribute.Bool(n(otelschema.AttrRepairAutomatic), true), str(otelschema.AttrRepairResult, "success"))
	}
	for range 4 {
		emit(otelschema.EventAdapter, tool, str(otelschema.AttrAdapterID, "ticket-v6-to-v7"),
			str(otelschema.AttrChangeClass, "bounded_migration"))
	}
	// Invalid: an unknown outcome, a missing tool name.
	for range 3 {
		emit(otelschema.EventCall, tool, str(otelschema.AttrOutcome, "sideways"))
	}
	for range 2 {
		emit(otelschema.EventCall, str(otelschema.AttrOutcome, "current"))
	}
	// Not drift events: ignored.
	for range 2 {
		var r log.Record
		r.SetBody(attribute.StringValue("cache warmed"))
		logger.Emit(ctx, r)
	}
	fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := lp.ForceFlush(fctx); err != nil && !strings.Contains(err.Error(), "partial success") {
		t.Fatalf("ForceFlush: %v", err)
	}
	if err := lp.Shutdown(fctx); err != nil && !strings.Contains(err.Error(), "partial success") {
		t.Fatalf("Shutdown of the logger provider: %v", err)
	}
}

// TestEndToEnd sends drift events with the OpenTelemetry SDK's own OTLP
// exporters, over gRPC and HTTP, to an ingester backed by the embedded
// store, and counts what the store holds; under the current names, and
// under the names of earlier releases, which store the same and are
// counted.
func TestEndToEnd(t *testing.T) {
	st := openStore(t)
	s := newServer(t, testConfig(), st, true)
	ctx := context.Background()

	for _, tc := range []struct {
		name string
		exp  func() (sdklog.Exporter, error)
	}{
		{"grpc", func() (sdklog.Exporter, error) {
			return otlploggrpc.New(ctx, otlploggrpc.WithEndpoint(s.GRPCAddr().String()), otlploggrpc.WithInsecure(),
				otlploggrpc.WithCompressor("gzip"), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false}))
		}},
		{"http", func() (sdklog.Exporter, error) {
			return otlploghttp.New(ctx, otlploghttp.WithEndpoint(s.HTTPAddr().String()), otlploghttp.WithInsecure(),
				otlploghttp.WithCompression(otlploghttp.GzipCompression), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
		}},
	} {
		for _, legacy := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/legacy=%v", tc.name, legacy), func(t *testing.T) {
				before := s.Stats()
				e, err := tc.exp()
				if err != nil {
					t.Fatal(err)
				}
				exp := &errExporter{Exporter: e}
				run := fmt.Sprintf("e2e-%s-%v", tc.name, legacy)
				emitDrift(t, exp, run, legacy)
				after := s.Stats()
				if got, want := after.LegacyNames["mcp.drift.outcome"]-before.LegacyNames["mcp.drift.outcome"], map[bool]uint64{true: 30}[legacy]; got != want {
					t.Errorf("mcp.drift.outcome counted %d times, want %d", got, want)
				}
				if got, want := after.LegacyNames["mcp.drift.call"]-before.LegacyNames["mcp.drift.call"], map[bool]uint64{true: 30}[legacy]; got != want {
					t.Errorf("mcp.drift.call counted %d times, want %d", got, want)
				}

				// The SDK saw the partial success: 5 rejected, and why.
				msg := errors.Join(exp.errs...)
				if msg == nil || !strings.Contains(msg.Error(), "5 of 47 log records rejected") || !strings.Contains(msg.Error(), "sideways") || !strings.Contains(msg.Error(), "gen_ai.tool.name") {
					t.Errorf("exporter errors %v: want a partial success of 5 naming the problems", msg)
				}
				if got := after.Rejected - before.Rejected; got != 5 {
					t.Errorf("Stats counted %d rejections, want 5", got)
				}
				if got := after.Accepted - before.Accepted; got != 40 {
					t.Errorf("Stats counted %d accepted, want 40", got)
				}
				if got := after.Ignored - before.Ignored; got != 2 {
					t.Errorf("Stats counted %d ignored, want 2", got)
				}

				type row struct {
					EventName string `json:"event_name"`
					Outcome   string `json:"outcome"`
					Tool      string `json:"tool"`
					N         uint64 `json:"n"`
				}
				var rows []row
				q := store.Query{Name: "e2e_counts", SQL: `SELECT toString(event_name) AS event_name, toString(outcome) AS outcome, tool, count() AS n
				FROM mcpdrift.events WHERE run_id = {run:String}
				GROUP BY event_name, outcome, tool ORDER BY event_name, outcome, tool`}
				if err := st.Query(ctx, q, store.Params{}.String("run", run), &rows); err != nil {
					t.Fatal(err)
				}
				got := map[string]uint64{}
				var total uint64
				for _, r := range rows {
					if r.Tool != "create_ticket" {
						t.Errorf("stored tool %q", r.Tool)
					}
					got[r.EventName+"/"+r.Outcome] += r.N
					total += r.N
				}
				want := map[string]uint64{
					"mcp.drift.call/current":        15,
					"mcp.drift.call/normalized":     6,
					"mcp.drift.call/rejected_stale": 4,
					"mcp.drift.refresh/":            6,
					"mcp.drift.repair/":             5,
					"mcp.drift.adapter/":            4,
				}
				if total != 40 || len(got) != len(want) {
					t.Fatalf("stored %d events %v, want 40: %v", total, got, want)
				}
				for k, n := range want {
					if got[k] != n {
						t.Errorf("stored %d %s, want %d", got[k], k, n)
					}
				}
			})
		}
	}
}
