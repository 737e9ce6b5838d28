package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mcpdrift/mcpdrift/internal/api"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
)

// TestConsoleDriftTest runs the drift test from the release check page in
// Chromium, against a serve started with -api.drifttest.allow-host
// 127.0.0.1 and the example server's release 2 with -fault no-adapter:
// the dry run shows the calls the API plans, none answered; the run shows
// the API's verdicts, failures first; a shared link re-runs a dry run with
// the deployed list, and never a real run, which it only offers.
func TestConsoleDriftTest(t *testing.T) {
	requireChDB(t)
	exe := chromium(t)
	bin := filepath.Join(t.TempDir(), "driftserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/driftserver").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/driftserver: %v: %s", err, out)
	}
	c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
	if err := c.Parse([]string{"-data.dir", t.TempDir(), "-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0",
		"-api.listen", "127.0.0.1:0", "-log.level", "error", "-api.drifttest.allow-host", "127.0.0.1"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	proc, err := app.Start(context.Background(), c, "v-test", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Shutdown() })
	f := &fleet{base: "http://" + proc.API().Addr()}
	grpc := proc.Ingester().GRPCAddr().String()
	// prod advertises release 1 to the registry: the deployed old list.
	startDriftserver(t, bin, "-release", "1", "-environment", "prod", "-otlp", grpc)
	endpoint := serveDriftserver(t, bin, "-release", "2", "-fault", "no-adapter")
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		var services apiclient.ServicesBody
		f.get(t, "", "/api/v1/deployed/services", nil, &services)
		if fmt.Sprint(summary(services)) == "[driftserver prod 5 0]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry holds %v after a minute", summary(services))
		}
	}
	oldList, err := os.ReadFile("../../examples/driftserver/old.json")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	f.from, f.to = now.AddDate(0, 0, -7).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)
	b := newBrowser(t, exe, f)
	p := b.p

	b.open("/check", nil)
	if hosts := eval[string](b, `document.querySelector('main [data-k=drift_hosts]').textContent`); !strings.HasPrefix(hosts, "This server may call 127.0.0.1; at most 6 calls per tool") {
		t.Errorf("the drift test's settings: %q", hosts)
	}
	// shown reads the drift test's table as "tool pass verdict answer".
	shown := func() []string {
		var out []string
		for _, r := range b.rows("Drift test") {
			out = append(out, strings.Join([]string{r["tool"], r["pass"], r["verdict"], r["answer"]}, " "))
		}
		return out
	}
	// want is the API's answer to the same request, failures first.
	want := func(dryRun bool) (api.DriftTestBody, []string) {
		t.Helper()
		body := postDrift(t, f, map[string]any{"server": endpoint, "old": json.RawMessage(oldList), "dry_run": dryRun, "max_calls": 6})
		var fails, passes []string
		for _, r := range body.Report.Results {
			verdict, answer := "—", "not sent"
			if r.Verdict != "" {
				verdict = string(r.Verdict)
			}
			if a := r.Answer; a != nil {
				switch code, _ := a.Structured["error_code"].(string); {
				case a.Error != "":
					answer = "error: " + a.Error
				case a.IsError && code != "":
					answer = code
				case a.IsError:
					answer = "error: " + a.Text
				default:
					answer = "success"
				}
			}
			line := strings.Join([]string{r.Tool, string(r.Pass), verdict, answer}, " ")
			if r.Verdict != "" && !r.Verdict.Pass() {
				fails = append(fails, line)
			} else {
				passes = append(passes, line)
			}
		}
		return body, append(fails, passes...)
	}
	press := func(step, button string) {
		t.Helper()
		b.visit(step, []string{"POST /api/v1/drifttest"},
			chromedp.Evaluate[chromedp.Void](`document.querySelector('main [data-k=drift_pass]') && document.querySelector('main [data-k=drift_pass]').remove()`),
			chromedp.SetValue(`main textarea[name=old]`, string(oldList)), chromedp.SetValue(`main input[name=drift_server]`, endpoint),
			chromedp.Click(`main form.drift button[name=`+button+`]`), chromedp.Poll[chromedp.Void](`document.querySelector('main [data-k=drift_pass]')`))
	}

	press("dry run", "dry")
	planned, wantRows := want(true)
	if got := shown(); len(got) != 24 || len(planned.Report.Results) != 24 || strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("dry run shows:\n%s\nthe API plans:\n%s", strings.Join(got, "\n"), strings.Join(wantRows, "\n"))
	}
	if head := eval[string](b, `document.querySelector('main [data-k=drift_pass]').textContent`); head != "dry run: 24 calls to 4 tools of "+endpoint+", none sent" {
		t.Errorf("dry run says %q", head)
	}
	b.screenshot("drifttest-dry-run")
	p.check(t, "dry run")

	press("run", "run")
	ran, wantRows := want(false)
	got := shown()
	if ran.Pass || ran.Failures != 6 || strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
		t.Errorf("the run shows:\n%s\nthe API answers (pass %v, %d failures):\n%s", strings.Join(got, "\n"), ran.Pass, ran.Failures, strings.Join(wantRows, "\n"))
	}
	if len(got) > 6 && (!strings.HasPrefix(got[0], "deploy_preview declared success_without_adapter") || strings.Contains(got[6], "success_without_adapter")) {
		t.Errorf("the failures are not first: %q", got)
	}
	if head := eval[string](b, `document.querySelector('main [data-k=drift_pass]').textContent`); head != "fail: 6 of 24 old calls broke the seed's rules" {
		t.Errorf("the run says %q", head)
	}
	loc := eval[string](b, `location.search`)
	if q, _ := url.ParseQuery(strings.TrimPrefix(loc, "?")); q.Get("drift") != "run" || q.Get("drift_server") != endpoint || q.Get("max_calls") != "6" {
		t.Errorf("the URL %q does not hold the drift test", loc)
	}
	b.screenshot("drifttest-run")
	b.keyboard("drift test")
	p.check(t, "run")

	// A shared link of a real run sends nothing: it says so and waits.
	deployed := url.Values{"old": {"deployed"}, "service": {"driftserver"}, "environment": {"prod"}, "drift_server": {endpoint}}
	link := url.Values{"drift": {"run"}}
	for k, v := range deployed {
		link[k] = v
	}
	b.visit("link to a run", []string{"GET /api/v1/drifttest", "GET /api/v1/deployed/services"},
		chromedp.Navigate(f.base+"/check?"+link.Encode()), chromedp.Poll[chromedp.Void](`document.querySelector('main [data-k=drift_hosts]')`))
	if note := eval[string](b, `(document.querySelector('main [data-k=drift_link]') || {}).textContent || ''`); !strings.Contains(note, "a link never starts one") ||
		eval[bool](b, `!!document.querySelector('main [data-k=drift_pass]')`) {
		t.Errorf("a link to a real run shows %q, and results: %v", note, eval[bool](b, `!!document.querySelector('main [data-k=drift_pass]')`))
	}
	p.check(t, "link to a run")
	// A link to a dry run with the deployed list runs it again.
	link.Set("drift", "dry")
	b.visit("link to a dry run", []string{"GET /api/v1/drifttest", "GET /api/v1/deployed/services", "POST /api/v1/drifttest"},
		chromedp.Navigate(f.base+"/check?"+link.Encode()), chromedp.Poll[chromedp.Void](`document.querySelector('main [data-k=drift_pass]')`))
	if head := eval[string](b, `document.querySelector('main [data-k=drift_pass]').textContent`); head != "dry run: 24 calls to 4 tools of "+endpoint+", none sent" {
		t.Errorf("a link to a dry run says %q", head)
	}
	if got := shown(); strings.Join(got, "\n") != strings.Join(func() []string { _, r := want(true); return r }(), "\n") {
		t.Errorf("a link to a dry run with the deployed list shows:\n%s", strings.Join(got, "\n"))
	}
	b.screenshot("drifttest-link")
	p.check(t, "link to a dry run")
}

// serveDriftserver starts the example server over HTTP on loopback with
// args and returns its endpoint; it stops with the test.
func serveDriftserver(t *testing.T, bin string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"-listen", "127.0.0.1:0"}, args...)...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("driftserver %v: %v", args, err)
	}
	return strings.TrimPrefix(strings.TrimSpace(line), "serving ")
}

// postDrift asks the API for the drift test of body.
func postDrift(t *testing.T, f *fleet, body map[string]any) api.DriftTestBody {
	t.Helper()
	req, _ := json.Marshal(body)
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Post(f.base+"/api/v1/drifttest", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	var b api.DriftTestBody
	if err := json.Unmarshal(out, &b); resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("POST /api/v1/drifttest: %d %s", resp.StatusCode, out)
	}
	return b
}
