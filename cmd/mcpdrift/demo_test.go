package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/internal/testing/ledgercheck"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// requireChDB skips without libchdb, unless MCPDRIFT_REQUIRE_CHDB is set.
func requireChDB(t *testing.T) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// TestReportsEqualLedger is the end-to-end check: the real binary serves
// on loopback, the simulator sends it a drifting fleet over OTLP/gRPC, and
// the reports read back through the CLI and the API add up exactly to the
// simulator's own ledger of what it sent. Then, with the server stopped,
// `mcpdrift report` reads the same data directory directly.
func TestReportsEqualLedger(t *testing.T) {
	requireChDB(t)
	began := time.Now()
	bin := filepath.Join(t.TempDir(), "mcpdrift")
	build(t, bin, ".")
	dataDir := t.TempDir()
	srv := startServe(t, bin, dataDir)
	t.Logf("built and started in %s", time.Since(began).Round(time.Millisecond))

	ledgerPath := filepath.Join(t.TempDir(), "ledger.json")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "simulate", "-otlp.endpoint", srv.grpc, "-sim.events", "20000",
		"-sim.seed", "6", "-sim.violation-rate", "0.3", "-ledger.out", ledgerPath, "-log.level", "warn").CombinedOutput()
	if err != nil {
		t.Fatalf("simulate: %v: %s", err, out)
	}
	waitStored(t, srv.api)
	var ledger simulate.Ledger
	if err := json.Unmarshal([]byte(readFile(t, ledgerPath)), &ledger); err != nil {
		t.Fatal(err)
	}
	if x := ledger.Export; x == nil || x.Exported != ledger.Events || x.Rejected != 0 || x.Failed != 0 {
		t.Fatalf("export %+v of %d events", ledger.Export, ledger.Events)
	}
	t.Logf("simulated %d events in %.2fs", ledger.Events, ledger.Export.Seconds)

	// The window holds the whole run, follow-ups stamped after its end
	// included.
	window := []string{"-from", ledger.Start.Add(-time.Minute).Format(time.RFC3339),
		"-to", ledger.End.Add(time.Hour).Format(time.RFC3339), "-api", "http://" + srv.api, "-format", "json"}
	fetch := func(dest any, name string, params map[string]string) error {
		args := append([]string{"report", name}, window...)
		for k, v := range params {
			args = append(args, "-"+k, v)
		}
		code, out, errOut := mcpdrift(t, args...)
		if code != 0 {
			return fmt.Errorf("report %s: exit %d: %s", name, code, errOut)
		}
		return json.Unmarshal([]byte(out), dest)
	}
	res, diffs, err := ledgercheck.Compare(ledger, fetch)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range diffs {
		t.Error(d)
	}
	// Seed 6 at this rate injects every kind and makes every repair: a
	// comparison that covers them all.
	if len(res.Violations) != 4 || len(ledger.Repairs) != 4 {
		t.Errorf("the run injected violations %v and repairs %v: pick a seed with all four of each", res.Violations, ledger.Repairs)
	}
	t.Logf("compared: calls of %d tools by outcome, %d adapters' normalised calls, repairs %v, violations %v over %d pages",
		res.Tools, res.Adapters, ledger.Repairs, res.Violations, res.Pages)
	stale, retire := res.StaleUsage, res.AdapterRetirement

	// The gate agrees with the report for the busiest adapter.
	var busiest apiv1.AdapterRow
	for _, r := range retire {
		if r.Calls > busiest.Calls {
			busiest = r
		}
	}
	code, md, errOut := mcpdrift(t, "gate", "adapter", busiest.AdapterID, "-window", "30d", "-api", "http://"+srv.api)
	if code != 1 || !strings.Contains(md, "cannot be retired yet: blocked") {
		t.Errorf("gate on %s (%d calls): exit %d: %s%s", busiest.AdapterID, busiest.Calls, code, md, errOut)
	}

	// With the server stopped, report reads the data directory itself, and
	// finds the same figures.
	srv.stop(t)
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(defaultAPI, "http://"), time.Second); err == nil {
		conn.Close()
		t.Logf("something answers at %s: the data-directory fallback is not exercised", defaultAPI)
		return
	}
	cmd := exec.CommandContext(ctx, bin, "report", "stale-usage", "-data.dir", dataDir, "-format", "json",
		"-from", ledger.Start.Add(-time.Minute).Format(time.RFC3339), "-to", ledger.End.Add(time.Hour).Format(time.RFC3339))
	cmd.Env = append(os.Environ(), "MCPDRIFT_API=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	direct, err := cmd.Output()
	if err != nil {
		t.Fatalf("report on the data directory: %v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "reading "+dataDir+" directly") {
		t.Errorf("report did not say it reads the data directory: %s", stderr.String())
	}
	var again apiv1.ReportBody[apiv1.StaleUsageRow]
	if err := json.Unmarshal(direct, &again); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Rows, stale) {
		t.Errorf("the data directory read directly gives other rows than the API did")

	}
	t.Logf("end to end in %s", time.Since(began).Round(time.Millisecond))
}

// TestDemoScript runs scripts/demo.sh, as `make demo` does, with a small
// run on free ports, and checks that it prints the report and leaves no
// server and no data behind.
func TestDemoScript(t *testing.T) {
	requireChDB(t)
	binDir := t.TempDir()
	build(t, filepath.Join(binDir, "mcpdrift"), ".")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// The addresses are free when picked but the script binds them later:
	// another test process may take one in between. The server then exits
	// with "address already in use", and the demo is run again on new ones.
	var out []byte
	for attempt := 1; ; attempt++ {
		cmd := exec.CommandContext(ctx, "../../scripts/demo.sh")
		cmd.Env = append(os.Environ(), "BIN="+binDir, "DEMO_EVENTS=3000", "MCPDRIFT_API=",
			"DEMO_API="+freeAddr(t), "DEMO_GRPC="+freeAddr(t), "DEMO_HTTP="+freeAddr(t))
		var err error
		out, err = cmd.CombinedOutput()
		if err == nil {
			break
		}
		if attempt < 3 && strings.Contains(string(out), "address already in use") {
			t.Logf("demo.sh, attempt %d: a picked address was taken before the server bound it; again on new ones", attempt)
			continue
		}
		t.Fatalf("demo.sh: %v: %s", err, out)
	}
	for _, want := range []string{"Adapter retirement, ", "Verdict", "blocked", "demo: stopping the server"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	m := regexp.MustCompile(`running on (\S+)/data`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("demo did not say where its data is:\n%s", out)
	}
	if _, err := os.Stat(m[1]); !os.IsNotExist(err) {
		t.Errorf("demo left %s behind: %v", m[1], err)
	}
}

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	u, err := url.Parse(closedAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
