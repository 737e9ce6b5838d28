// Package faulttest holds the ingester's fault tests: real processes (the
// ingestd helper, built by the test: the ingester with a spool over the
// embedded store) killed with SIGKILL under load, a store outage, a full
// spool disk; loopback only, each bounded in time. They prove that every
// event whose export was acknowledged is stored exactly once, rollups
// included, and report the figures with t.Logf.
package faulttest

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/testing/loopback"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/ingest"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

var helper string // path of the built ingestd

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "faulttest")
	if err != nil {
		panic(err)
	}
	helper = filepath.Join(dir, "ingestd")
	code := func() int {
		defer os.RemoveAll(dir)
		if out, err := exec.Command("go", "build", "-o", helper, "./ingestd").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "cannot build ingestd: %v\n%s", err, out)
			return 1
		}
		return m.Run()
	}()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// requireLibrary skips when libchdb is absent, unless the environment asks
// for the real engine.
func requireLibrary(t *testing.T) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	if testing.Short() {
		t.Skip("fault tests run real processes for seconds")
	}
}

// proc is one ingestd process.
type proc struct {
	cmd           *exec.Cmd
	http, control string
	exited        chan struct{}
	stderr        *bytes.Buffer
}

// env is the directories and fixed addresses that ingestd restarts with.
type env struct {
	t                       *testing.T
	data, spool             string
	httpAddr, ctlAddr, grpc string
	extra                   []string
}

func newEnv(t *testing.T, extra ...string) *env {
	dir := t.TempDir()
	if keep := os.Getenv("MCPDRIFT_FAULT_KEEP"); keep != "" {
		// Kept for a post-mortem.
		dir = filepath.Join(keep, t.Name())
		_ = os.RemoveAll(dir)
		t.Logf("data kept in %s", dir)
	}
	return &env{t: t, data: filepath.Join(dir, "data"), spool: filepath.Join(dir, "spool"),
		httpAddr: loopback.Addr(t), ctlAddr: loopback.Addr(t), grpc: loopback.Addr(t), extra: extra}
}

// start runs ingestd and waits until it listens.
func (e *env) start() *proc {
	e.t.Helper()
	args := append([]string{"-data.dir", e.data, "-ingest.spool.dir", e.spool,
		"-otlp.http.listen", e.httpAddr, "-otlp.grpc.listen", e.grpc, "-control.listen", e.ctlAddr}, e.extra...)
	cmd := exec.Command(helper, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{}), stderr: new(bytes.Buffer)}
	cmd.Stderr = &lockedWriter{w: p.stderr}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	ready := make(chan map[string]string, 1)
	go func() {
		var addrs map[string]string
		if json.NewDecoder(bufio.NewReader(out)).Decode(&addrs) == nil {
			ready <- addrs
		}
		close(ready)
	}()
	select {
	case a, ok := <-ready:
		if !ok {
			<-p.exited
			e.t.Fatalf("ingestd exited before listening: %s", p.stderr)
		}
		p.http, p.control = a["http"], a["control"]
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-p.exited
		e.t.Fatalf("ingestd did not listen within 30 s: %s", p.stderr)
	}
	e.t.Cleanup(func() { p.kill() })
	return p
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

// stop shuts ingestd down gracefully, and logs its peak RSS.
func (p *proc) stop(t *testing.T) {
	t.Helper()
	if n, err := peakRSS(p.cmd.Process.Pid); err == nil {
		t.Logf("ingestd peak RSS %d MiB", n>>20)
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.kill()
		t.Fatalf("ingestd did not stop within 30 s: %s", p.stderr)
	}
}

func (p *proc) fault(t *testing.T, mode string) {
	t.Helper()
	resp, err := http.Post("http://"+p.control+"/fault?mode="+mode, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func (p *proc) stats() (ingest.Stats, error) {
	var st ingest.Stats
	resp, err := http.Get("http://" + p.control + "/stats")
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// stored is what ingestd -count reports.
type stored struct {
	Counts map[string]int `json:"counts"`
	Sums   struct {
		Events  int64 `json:"events"`
		Audit   int64 `json:"audit"`
		Recent  int64 `json:"recent_calls"`
		Calls1h int64 `json:"calls_1h"`
		Calls1d int64 `json:"calls_1d"`
		Usage1h int64 `json:"usage_1h"`
		Usage1d int64 `json:"usage_1d"`
	} `json:"sums"`
}

func (e *env) count() stored {
	e.t.Helper()
	out, err := exec.Command(helper, "-data.dir", e.data, "-count").Output()
	if err != nil {
		e.t.Fatalf("ingestd -count: %v", err)
	}
	var s stored
	if err := json.Unmarshal(out, &s); err != nil {
		e.t.Fatal(err)
	}
	return s
}

// export is one OTLP/HTTP logs request of call events, identified by their
// request ids; its body is built once, so every retry is identical.
type export struct {
	ids  []string
	body []byte
}

func newExport(worker, seq, n int) export { return newExportAt(worker, seq, n, time.Now()) }

// newExportAt is newExport with its events timed at.
func newExportAt(worker, seq, n int, at time.Time) export {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr(otelschema.AttrServiceName, "fault-mcp")
	sl := rl.ScopeLogs().AppendEmpty()
	now := pcommon.NewTimestampFromTime(at)
	ex := export{}
	for i := range n {
		id := fmt.Sprintf("w%d-e%d-%d", worker, seq, i)
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(now)
		lr.SetEventName(otelschema.EventCall.String())
		a := lr.Attributes()
		a.PutStr(otelschema.AttrToolName, fmt.Sprint("tool-", i%7))
		a.PutStr(otelschema.AttrOutcome, "normalized")
		a.PutStr(otelschema.AttrRequestID, id)
		a.PutStr(otelschema.AttrSessionID, fmt.Sprint("s-", worker))
		ex.ids = append(ex.ids, id)
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		panic(err)
	}
	ex.body = body
	return ex
}

// result is the outcome of one attempt.
type result struct {
	status     int
	retryAfter string
	latency    time.Duration
	err        error
}

var client = &http.Client{Timeout: 20 * time.Second}

func send(ctx context.Context, addr string, ex export) result {
	start := time.Now()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/v1/logs", bytes.NewReader(ex.body))
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := client.Do(req)
	if err != nil {
		return result{err: err, latency: time.Since(start)}
	}
	defer resp.Body.Close()
	_, _ = bytes.NewBuffer(nil).ReadFrom(resp.Body)
	return result{status: resp.StatusCode, retryAfter: resp.Header.Get("Retry-After"), latency: time.Since(start)}
}

// load is a set of workers sending exports, each retried as an OTLP
// exporter does until it is acknowledged or the load is over.
type load struct {
	addr     string
	perReq   int
	mu       sync.Mutex
	acked    []string // request ids of acknowledged events
	lat      []time.Duration
	statuses map[int]int
	noRetry  int // refusals without Retry-After
	attempts atomic.Int64
	sent     atomic.Int64 // events in distinct exports sent
	errs     atomic.Int64 // transport errors (process down)
}

// run sends from workers until stop is closed, then finishes the exports
// in flight (bounded by ctx).
func (l *load) run(ctx context.Context, workers int, stop <-chan struct{}, retry bool) {
	l.statuses = map[int]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				ex := newExport(w, seq, l.perReq)
				l.sent.Add(int64(len(ex.ids)))
				for {
					l.attempts.Add(1)
					r := send(ctx, l.addr, ex)
					l.record(r)
					if r.err == nil && r.status == http.StatusOK {
						l.mu.Lock()
						l.acked = append(l.acked, ex.ids...)
						l.mu.Unlock()
						break
					}
					if !retry || ctx.Err() != nil {
						break
					}
					time.Sleep(20*time.Millisecond + rand.N(30*time.Millisecond))
				}
			}
		})
	}
	wg.Wait()
}

// sendAcked sends n exports of worker one after the other; each must be
// acknowledged.
func (l *load) sendAcked(ctx context.Context, t *testing.T, worker, n int) {
	t.Helper()
	for seq := range n {
		ex := newExport(worker, seq, l.perReq)
		l.sent.Add(int64(len(ex.ids)))
		r := send(ctx, l.addr, ex)
		l.record(r)
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("export %d of worker %d: status %d, %v", seq, worker, r.status, r.err)
		}
		l.mu.Lock()
		l.acked = append(l.acked, ex.ids...)
		l.mu.Unlock()
	}
}

func (l *load) record(r result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.err != nil {
		l.errs.Add(1)
		return
	}
	l.statuses[r.status]++
	l.lat = append(l.lat, r.latency)
	if r.status != http.StatusOK && r.retryAfter == "" {
		l.noRetry++
	}
}

func (l *load) latencies() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.lat) == 0 {
		return "none"
	}
	s := slices.Clone(l.lat)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))].Round(time.Millisecond) }
	return fmt.Sprintf("p50 %s, p99 %s, max %s over %d answers", q(0.5), q(0.99), s[len(s)-1].Round(time.Millisecond), len(s))
}

// check asserts that every acknowledged event is stored exactly once and
// that the rollups count each stored event once; it returns the figures.
func check(t *testing.T, l *load, s stored) (dups, missing int) {
	t.Helper()
	for _, id := range l.acked {
		switch n := s.Counts[id]; {
		case n == 0:
			missing++
		case n > 1:
			dups += n - 1
		}
	}
	var total int64
	for _, n := range s.Counts {
		total += int64(n)
	}
	if missing > 0 || dups > 0 {
		t.Errorf("of %d acknowledged events, %d are missing and %d stored more than once", len(l.acked), missing, dups)
	}
	t.Logf("stored per table: events %d, audited %d, recent_calls %d, calls_1h %d, calls_1d %d, usage_1h %d, usage_1d %d",
		s.Sums.Events, s.Sums.Audit, s.Sums.Recent, s.Sums.Calls1h, s.Sums.Calls1d, s.Sums.Usage1h, s.Sums.Usage1d)
	if s.Sums.Events != total || s.Sums.Audit != total || s.Sums.Recent != total || s.Sums.Calls1h != total || s.Sums.Calls1d != total ||
		s.Sums.Usage1h != total || s.Sums.Usage1d != total {
		t.Errorf("events %d, audit %d, recent_calls %d, calls_1h %d, calls_1d %d, usage_1h %d, usage_1d %d: every table should count the %d events once",
			s.Sums.Events, s.Sums.Audit, s.Sums.Recent, s.Sums.Calls1h, s.Sums.Calls1d, s.Sums.Usage1h, s.Sums.Usage1d, total)
	}
	return dups, missing
}

// TestKill9UnderLoad kills ingestd with SIGKILL at random moments of a
// sustained load, restarts it each time, and proves that every event whose
// export was acknowledged is stored exactly once.
func TestKill9UnderLoad(t *testing.T) {
	requireLibrary(t)
	// stored: batches are written to the store and acknowledged, or
	// spooled when the store is slow; spooled: every batch is
	// acknowledged once spooled, and the replayer writes groups of
	// records, so that kills land in the middle of group inserts too.
	for _, ack := range []string{"stored", "spooled"} {
		t.Run(ack, func(t *testing.T) { kill9UnderLoad(t, ack) })
	}
}

func kill9UnderLoad(t *testing.T, ack string) {
	e := newEnv(t, "-ingest.spool.after", "300ms", "-ingest.ack", ack)
	p := e.start()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l := &load{addr: e.httpAddr, perReq: 50}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { l.run(ctx, 8, stop, true); close(done) }()

	const kills = 5
	for i := range kills {
		time.Sleep(400*time.Millisecond + rand.N(1200*time.Millisecond))
		p.kill()
		p = e.start()
		t.Logf("kill %d of %d: restarted", i+1, kills)
	}
	time.Sleep(time.Second)
	close(stop)
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("exports still unacknowledged at the deadline")
	}
	// The last process replays what the killed ones spooled.
	start := time.Now()
	st := waitDrained(ctx, t, p)
	t.Logf("spool drained in %s after the load", time.Since(start).Round(time.Millisecond))
	p.stop(t)
	s := e.count()
	dups, missing := check(t, l, s)
	if missing > 0 {
		// Tell lost from durable but not yet replayed.
		sp, err := spool.Open(spool.Config{Dir: e.spool, MaxBytes: 1 << 40, SegmentBytes: 1 << 20}, nil)
		if err == nil {
			var n int
			_ = sp.Scan(func(r spool.Record) error { n += len(r.Events); return nil })
			sp.Close()
			t.Logf("of the %d missing events, %d are still in the spool (durable, not replayed); ingestd log:\n%s", missing, n, tail(p.stderr.String(), 3000))
		}
	}
	var stored int
	for _, n := range s.Counts {
		stored += n
	}
	t.Logf("kill -9 ×%d: events sent %d, acknowledged %d, stored %d (distinct %d), duplicates %d, missing %d; attempts %d, transport errors %d, answers %v; last process: dedup hits %d, spooled %d, replayed %d",
		kills, l.sent.Load(), len(l.acked), stored, len(s.Counts), dups, missing, l.attempts.Load(), l.errs.Load(), l.statuses,
		st.DedupHits, st.Spool.SpooledEvents, st.Spool.ReplayedEvents)
}

// waitDrained waits until p's spool is empty and returns its stats.
func waitDrained(ctx context.Context, t *testing.T, p *proc) ingest.Stats {
	t.Helper()
	for {
		st, err := p.stats()
		if err == nil && st.Spool.Records == 0 {
			return st
		}
		if ctx.Err() != nil {
			t.Fatalf("spool not drained: %+v", st.Spool)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// TestStoreOutage makes the store fail, then hang, under load: ingestd
// spools and acknowledges, then drains the spool once the store is back.
func TestStoreOutage(t *testing.T) {
	requireLibrary(t)
	// stored: batches are spooled once the store fails or hangs, and
	// written directly again once it is back; spooled: every batch is
	// spooled, and the replayer retries its group until the store is back.
	for _, ack := range []string{"stored", "spooled"} {
		t.Run(ack, func(t *testing.T) { storeOutage(t, ack) })
	}
}

func storeOutage(t *testing.T, ack string) {
	e := newEnv(t, "-ingest.spool.after", "200ms", "-ingest.ack", ack)
	p := e.start()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := &load{addr: e.httpAddr, perReq: 50}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { l.run(ctx, 4, stop, true); close(done) }()

	var maxSpool atomic.Int64
	var maxRecords atomic.Int64
	pollDone := make(chan struct{})
	pollStop := make(chan struct{})
	go func() {
		defer close(pollDone)
		for {
			select {
			case <-pollStop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if st, err := p.stats(); err == nil {
				if st.Spool.Bytes > maxSpool.Load() {
					maxSpool.Store(st.Spool.Bytes)
				}
				if st.Spool.Records > maxRecords.Load() {
					maxRecords.Store(st.Spool.Records)
				}
			}
		}
	}()
	phase := func(mode string, d time.Duration) {
		p.fault(t, mode)
		l.mu.Lock()
		l.lat = l.lat[:0]
		l.mu.Unlock()
		time.Sleep(d)
		t.Logf("store %-4s for %s: export latency %s", mode, d, l.latencies())
	}
	phase("ok", time.Second)
	phase("fail", 3*time.Second)
	phase("hang", 3*time.Second)
	recovered := time.Now()
	phase("ok", time.Second)
	close(stop)
	<-done
	// The spool drains.
	var st ingest.Stats
	for {
		var err error
		st, err = p.stats()
		if err == nil && st.Spool.Records == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("spool not drained: %+v", st.Spool)
		}
		time.Sleep(20 * time.Millisecond)
	}
	drained := time.Since(recovered)
	close(pollStop)
	<-pollDone
	p.stop(t)
	s := e.count()
	dups, missing := check(t, l, s)
	if st.Spool.Spooled == 0 {
		t.Error("nothing was spooled during the outage")
	}
	if l.noRetry > 0 {
		t.Errorf("%d refusals without Retry-After", l.noRetry)
	}
	t.Logf("outage: events sent %d, acknowledged %d, stored %d, duplicates %d, missing %d; answers %v; spool peak %d bytes / %d records, spooled %d batches (%d events), replayed %d, drained %s after recovery",
		l.sent.Load(), len(l.acked), len(s.Counts), dups, missing, l.statuses, maxSpool.Load(), maxRecords.Load(),
		st.Spool.Spooled, st.Spool.SpooledEvents, st.Spool.Replayed, drained.Round(time.Millisecond))
}

// TestSpoolDiskFull puts the spool on a 1 MiB tmpfs with the store down:
// once the disk is full ingestd answers 503 with Retry-After and never
// acknowledges what it could not persist.
func TestSpoolDiskFull(t *testing.T) {
	requireLibrary(t)
	e := newEnv(t, "-ingest.spool.segment-bytes", "262144", "-ingest.spool.max-bytes", "67108864")
	if err := os.MkdirAll(e.spool, 0o750); err != nil {
		t.Fatal(err)
	}
	how := "a 1 MiB tmpfs (ENOSPC)"
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", e.spool).CombinedOutput(); err != nil {
		// Not root: the spool's own size limit stands in for the disk.
		how = fmt.Sprintf("a 1 MiB spool limit (tmpfs unavailable: %s)", bytes.TrimSpace(out))
		e.extra = []string{"-ingest.spool.segment-bytes", "262144", "-ingest.spool.max-bytes", "1048576"}
	} else {
		t.Cleanup(func() { _ = exec.Command("umount", e.spool).Run() })
	}
	p := e.start()
	p.fault(t, "fail")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := &load{addr: e.httpAddr, perReq: 200}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { l.run(ctx, 4, stop, false); close(done) }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		l.mu.Lock()
		full := l.statuses[http.StatusServiceUnavailable]
		l.mu.Unlock()
		if full >= 20 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	close(stop)
	<-done
	full, _ := p.stats()
	if l.statuses[http.StatusServiceUnavailable] == 0 || full.Refused.SpoolFull == 0 {
		t.Fatalf("no 503 once the spool is full: answers %v, refused %+v", l.statuses, full.Refused)
	}
	if l.noRetry > 0 {
		t.Errorf("%d refusals without Retry-After", l.noRetry)
	}
	// The store comes back: what was acknowledged is stored, nothing else.
	p.fault(t, "ok")
	for {
		st, err := p.stats()
		if err == nil && st.Spool.Records == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("spool not drained")
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.stop(t)
	s := e.count()
	dups, missing := check(t, l, s)
	if len(s.Counts) != len(l.acked) {
		t.Errorf("stored %d events, acknowledged %d: an unacknowledged export was stored", len(s.Counts), len(l.acked))
	}
	t.Logf("spool on %s: events sent %d, acknowledged %d, stored %d, duplicates %d, missing %d; answers %v; spool peak %d bytes, append failures %d, refused as full %d",
		how, l.sent.Load(), len(l.acked), len(s.Counts), dups, missing, l.statuses, full.Spool.Bytes, full.Spool.Errors, full.Refused.SpoolFull)
}

// TestIdleRestartThenKill is the deterministic repro of a lost spool: a
// clean restart on a wholly replayed spool, exports acknowledged once
// spooled while the store is down, then kill -9 before any is replayed.
// The next process must replay and store every one of them.
func TestIdleRestartThenKill(t *testing.T) {
	requireLibrary(t)
	e := newEnv(t, "-ingest.ack", "spooled")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := &load{addr: e.httpAddr, perReq: 50, statuses: map[int]int{}}

	p := e.start()
	l.sendAcked(ctx, t, 0, 20)
	waitDrained(ctx, t, p)
	p.stop(t)

	p = e.start()
	p.fault(t, "fail")
	l.sendAcked(ctx, t, 1, 20)
	st, err := p.stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Spool.Records == 0 {
		t.Fatalf("the second round is not in the spool: %+v", st.Spool)
	}
	p.kill()

	p = e.start()
	waitDrained(ctx, t, p)
	p.stop(t)
	s := e.count()
	dups, missing := check(t, l, s)
	t.Logf("idle restart, then kill -9 with %d spooled records: acknowledged %d, stored %d, duplicates %d, missing %d",
		st.Spool.Records, len(l.acked), len(s.Counts), dups, missing)
}

// TestSpoolDiskFullRecovers fills the spool's disk (a 1 MiB tmpfs, with a
// ballast file) while the store fails: exports are refused with 503. Then
// the disk is given room and the store comes back: exports must be
// acknowledged again without a restart, and stored.
func TestSpoolDiskFullRecovers(t *testing.T) {
	requireLibrary(t)
	// Acknowledged once spooled, as serve and ingest run by default: every
	// export goes through the spool.
	e := newEnv(t, "-ingest.ack", "spooled", "-ingest.spool.segment-bytes", "65536", "-ingest.spool.max-bytes", "67108864")
	if err := os.MkdirAll(e.spool, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", e.spool).CombinedOutput(); err != nil {
		t.Skipf("a tmpfs is needed (root): %s", bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", e.spool).Run() })
	ballast := filepath.Join(e.spool, "ballast")
	// Fill the disk, leaving no room for a segment.
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+ballast, "bs=64k").CombinedOutput(); err == nil {
		t.Fatalf("dd filled more than 1 MiB: %s", out)
	}
	p := e.start()
	p.fault(t, "fail")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l := &load{addr: e.httpAddr, perReq: 50, statuses: map[int]int{}}
	refused := 0
	for seq := 0; seq < 20 && refused == 0; seq++ {
		r := send(ctx, l.addr, newExport(0, seq, l.perReq))
		if r.status == http.StatusServiceUnavailable {
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no export refused with the spool's disk full and the store failing")
	}
	// Room again, the store back: without a restart, exports are taken.
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	p.fault(t, "ok")
	var ok bool
	began := time.Now()
	for seq := 100; time.Since(began) < 20*time.Second; seq++ {
		ex := newExport(1, seq, l.perReq)
		r := send(ctx, l.addr, ex)
		if r.err == nil && r.status == http.StatusOK {
			l.acked = append(l.acked, ex.ids...)
			ok = true
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !ok {
		t.Fatalf("exports still refused %s after the disk had room and the store was back", time.Since(began).Round(time.Millisecond))
	}
	t.Logf("acknowledged again %s after the disk had room and the store was back", time.Since(began).Round(time.Millisecond))
	waitDrained(ctx, t, p)
	p.stop(t)
	s := e.count()
	check(t, l, s)
}

// TestConcurrentIdenticalExports sends one export 8 times at once, as an
// exporter retrying on a timeout while its first try still runs would:
// every copy is acknowledged, and its events are stored once.
func TestConcurrentIdenticalExports(t *testing.T) {
	requireLibrary(t)
	for _, ack := range []string{"stored", "spooled"} {
		t.Run(ack, func(t *testing.T) {
			e := newEnv(t, "-ingest.ack", ack, "-ingest.batch.max-delay", "200ms")
			p := e.start()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			l := &load{addr: e.httpAddr, perReq: 20, statuses: map[int]int{}}
			for round := range 5 {
				ex := newExport(0, round, l.perReq)
				l.sent.Add(int64(len(ex.ids)))
				var wg sync.WaitGroup
				results := make([]result, 8)
				for i := range results {
					wg.Go(func() { results[i] = send(ctx, l.addr, ex) })
				}
				wg.Wait()
				for i, r := range results {
					l.record(r)
					if r.err != nil || r.status != http.StatusOK {
						t.Fatalf("round %d, copy %d: status %d, %v", round, i, r.status, r.err)
					}
				}
				l.acked = append(l.acked, ex.ids...)
			}
			waitDrained(ctx, t, p)
			st, _ := p.stats()
			p.stop(t)
			s := e.count()
			dups, missing := check(t, l, s)
			stored := 0
			for _, n := range s.Counts {
				stored += n
			}
			t.Logf("%s: 5 exports of %d events, each sent 8 times at once: acknowledged %d copies, stored %d events (distinct %d), duplicates %d, missing %d, dedup hits %d",
				ack, l.perReq, l.statuses[http.StatusOK], stored, len(s.Counts), dups, missing, st.DedupHits)
		})
	}
}

// TestStoreDiskFull puts the embedded store's data directory on a tmpfs
// and fills it: inserts fail for want of space, exports are acknowledged
// once spooled (the spool is on another disk), the failures are logged;
// once the disk has room again the spool is replayed without a restart
// and every acknowledged event is stored once, in every table.
func TestStoreDiskFull(t *testing.T) {
	requireLibrary(t)
	e := newEnv(t, "-ingest.ack", "spooled")
	if err := os.MkdirAll(e.data, 0o750); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256m", "tmpfs", e.data).CombinedOutput(); err != nil {
		t.Skipf("a tmpfs is needed (root): %s", bytes.TrimSpace(out))
	}
	t.Cleanup(func() { _ = exec.Command("umount", e.data).Run() })
	p := e.start()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	l := &load{addr: e.httpAddr, perReq: 200, statuses: map[int]int{}}
	l.sendAcked(ctx, t, 0, 10)
	waitDrained(ctx, t, p)
	ballast := filepath.Join(e.data, "ballast")
	if out, err := exec.Command("dd", "if=/dev/zero", "of="+ballast, "bs=1M").CombinedOutput(); err == nil {
		t.Fatalf("dd filled more than the tmpfs: %s", out)
	}
	l.sendAcked(ctx, t, 1, 20)
	deadline := time.Now().Add(20 * time.Second)
	var full ingest.Stats
	for {
		full, _ = p.stats()
		if full.WriteErrors > 0 && full.Spool.Records > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed store write with the store's disk full: %+v", full)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var logged string
	for _, line := range strings.Split(p.stderr.String(), "\n") {
		if strings.Contains(line, "store write failed") {
			logged = line
			break
		}
	}
	if logged == "" {
		t.Errorf("the failing writes are not logged:\n%s", tail(p.stderr.String(), 2000))
	}
	if logged != "" && !strings.Contains(logged, "NOT_ENOUGH_SPACE") && !strings.Contains(logged, "No space left") {
		t.Errorf("the failure logged is not the full disk: %s", logged)
	}
	t.Logf("logged: %.400s", logged)
	if err := os.Remove(ballast); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	st := waitDrained(ctx, t, p)
	drained := time.Since(began).Round(time.Millisecond)
	p.stop(t)
	s := e.count()
	dups, missing := check(t, l, s)
	t.Logf("store on a full 256 MiB tmpfs: acknowledged %d (spooled), failed writes %d, spool drained %s after the disk had room; stored %d, duplicates %d, missing %d; replayed %d",
		len(l.acked), full.WriteErrors, drained, len(s.Counts), dups, missing, st.Spool.ReplayedEvents)
}

// TestOldEventsRetriedAfterKill: exports of events timed an hour ago (a
// client sending from a queue of its own after an outage), older than the
// window whose ids the store lists at start-up, are stored; ingestd is
// killed and restarted, and the client sends them again, among new
// exports: each event is stored once.
func TestOldEventsRetriedAfterKill(t *testing.T) {
	requireLibrary(t)
	for _, ack := range []string{"stored", "spooled"} {
		t.Run(ack, func(t *testing.T) {
			e := newEnv(t, "-ingest.ack", ack)
			p := e.start()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			l := &load{addr: e.httpAddr, perReq: 50, statuses: map[int]int{}}
			old := time.Now().Add(-time.Hour)
			var exports []export
			for seq := range 20 {
				ex := newExportAt(0, seq, l.perReq, old)
				l.sent.Add(int64(len(ex.ids)))
				if r := send(ctx, l.addr, ex); r.err != nil || r.status != http.StatusOK {
					t.Fatalf("export %d: status %d, %v", seq, r.status, r.err)
				}
				exports = append(exports, ex)
				l.acked = append(l.acked, ex.ids...)
			}
			waitDrained(ctx, t, p)
			p.kill()

			p = e.start()
			var wg sync.WaitGroup
			for i, ex := range exports {
				fresh := newExport(1, i, l.perReq)
				l.sent.Add(int64(len(fresh.ids)))
				for _, x := range []export{ex, fresh} {
					wg.Go(func() {
						r := send(ctx, l.addr, x)
						l.record(r)
						if r.err != nil || r.status != http.StatusOK {
							t.Errorf("after the restart: status %d, %v", r.status, r.err)
							return
						}
						if x.ids[0] == fresh.ids[0] {
							l.mu.Lock()
							l.acked = append(l.acked, x.ids...)
							l.mu.Unlock()
						}
					})
				}
			}
			wg.Wait()
			st := waitDrained(ctx, t, p)
			p.stop(t)
			s := e.count()
			dups, missing := check(t, l, s)
			var stored int
			for _, n := range s.Counts {
				stored += n
			}
			t.Logf("%s: %d events timed 1 h ago stored, kill -9, sent again among %d new ones: acknowledged %d, stored %d (distinct %d), duplicates %d, missing %d; dedup hits %d",
				ack, len(exports)*l.perReq, len(exports)*l.perReq, len(l.acked), stored, len(s.Counts), dups, missing, st.DedupHits)
		})
	}
}

// floodBody is a gzipped OTLP/JSON logs request of one plain record whose
// body is a string of n bytes: small on the wire, n bytes once
// decompressed.
func floodBody(t *testing.T, n int) []byte {
	t.Helper()
	var raw bytes.Buffer
	raw.WriteString(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":{"stringValue":"`)
	raw.Write(bytes.Repeat([]byte("a"), n))
	raw.WriteString(`"}}]}]}]}`)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	if _, err := zw.Write(raw.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// vmHWM returns the peak resident memory of process pid, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	n, err := peakRSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// peakRSS reads a process's peak resident set (VmHWM) in bytes.
func peakRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &kb)
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// TestGzipFloodMemoryBound floods ingestd with 32 concurrent gzipped
// OTLP/JSON requests of 60 MiB each once decompressed (about 60 KiB on
// the wire), three rounds: the bytes held at once are bounded by
// -otlp.max-inflight-bytes (256 MiB by default), requests beyond it are
// refused with 503 and Retry-After, and the process's peak RSS grows by
// less than the documented bound, four times the budget (the Go heap may
// reach twice what is live before it is collected). Without the budget
// the same flood took the peak RSS up by 6.4 GiB.
func TestGzipFloodMemoryBound(t *testing.T) {
	requireLibrary(t)
	const (
		streams   = 32
		rounds    = 3
		bodyBytes = 60 << 20
		growth    = 4 * 256 << 20 // the bound asserted on the peak RSS's growth
	)
	e := newEnv(t)
	p := e.start()
	body := floodBody(t, bodyBytes)
	before := vmHWM(t, p.cmd.Process.Pid)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	statuses := map[int]int{}
	var mu sync.Mutex
	noRetry := 0
	for range rounds {
		var wg sync.WaitGroup
		for range streams {
			wg.Go(func() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+e.httpAddr+"/v1/logs", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Content-Encoding", "gzip")
				resp, err := client.Do(req)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					statuses[0]++
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				statuses[resp.StatusCode]++
				if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
					noRetry++
				}
			})
		}
		wg.Wait()
	}
	peak := vmHWM(t, p.cmd.Process.Pid)
	st, _ := p.stats()
	p.stop(t)
	t.Logf("gzip flood: %d rounds of %d concurrent requests of %d KiB on the wire, %d MiB decompressed: answers %v; refused for the in-flight budget %d; peak RSS %d MiB, %d MiB before (growth %d MiB, bound %d MiB)",
		rounds, streams, len(body)>>10, bodyBytes>>20, statuses, st.Refused.Inflight, peak>>20, before>>20, (peak-before)>>20, growth>>20)
	if statuses[http.StatusOK] == 0 || statuses[http.StatusServiceUnavailable] == 0 || st.Refused.Inflight == 0 {
		t.Errorf("answers %v: want some requests taken and some refused for the in-flight budget", statuses)
	}
	if noRetry > 0 {
		t.Errorf("%d refusals without Retry-After", noRetry)
	}
	if peak-before > growth {
		t.Errorf("peak RSS grew by %d MiB, over the bound of %d MiB", (peak-before)>>20, growth>>20)
	}
}
