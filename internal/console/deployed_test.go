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
	"slices"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
)

// TestConsoleDeployed runs the release check against what is deployed, in
// Chromium: the example server (examples/driftserver, instrumented with
// otelschema/mcpgo) advertises release 1 to a serve from prod, and
// releases 1 and 2 at once from eu (a deploy in progress). The page lists
// the services the registry holds as the API does, checks
// examples/tools-list/new.json against prod's list with the API's
// verdicts, downloads the API's Markdown, shows eu's tools mid-deploy as
// the API names them, restores the choice from a shared link, and shows
// the API's 400 for a service the registry does not know as a message.
func TestConsoleDeployed(t *testing.T) {
	requireChDB(t)
	exe := chromium(t)
	bin := filepath.Join(t.TempDir(), "driftserver")
	if out, err := exec.Command("go", "build", "-o", bin, "../../examples/driftserver").CombinedOutput(); err != nil {
		t.Fatalf("go build examples/driftserver: %v: %s", err, out)
	}
	c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
	if err := c.Parse([]string{"-data.dir", t.TempDir(), "-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0",
		"-api.listen", "127.0.0.1:0", "-log.level", "error"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	proc, err := app.Start(context.Background(), c, "v-test", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proc.Shutdown() })
	f := &fleet{base: "http://" + proc.API().Addr()}
	grpc := proc.Ingester().GRPCAddr().String()
	// prod's list carries a cache hint, eu's none.
	for _, s := range []struct {
		release, env string
		hint         []string
	}{{"1", "prod", []string{"-list-ttl", "48h", "-list-cache-scope", "shared"}}, {"1", "eu", nil}, {"2", "eu", nil}} {
		startDriftserver(t, bin, append([]string{"-release", s.release, "-environment", s.env, "-otlp", grpc}, s.hint...)...)
	}
	// The registry, once every advertisement is stored: prod's five
	// tools, eu's three changed tools mid-deploy.
	var services apiclient.ServicesBody
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
		services = apiclient.ServicesBody{}
		f.get(t, "", "/api/v1/deployed/services", nil, &services)
		if fmt.Sprint(summary(services)) == "[driftserver eu 5 3 driftserver prod 5 0]" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the registry holds %v after a minute", summary(services))
		}
	}

	// A fixed window, in the URL: the page and the test weigh the check
	// over the same one (f.window stays empty: the registry's endpoints
	// take no window).
	now := time.Now().UTC().Truncate(time.Second)
	f.from, f.to = now.AddDate(0, 0, -7).Format(time.RFC3339), now.Add(time.Hour).Format(time.RFC3339)
	b := newBrowser(t, exe, f)
	p := b.p
	b.open("/check", nil)
	b.visit("deployed", []string{"GET /api/v1/deployed/services"}, choose(`main select[name=source]`, "deployed"),
		chromedp.Poll[chromedp.Void](`location.search.includes('old=deployed')`))
	shown := b.rows("Services")
	if len(shown) != len(services.Services) {
		t.Fatalf("%d services shown, the API has %d", len(shown), len(services.Services))
	}
	for i, s := range services.Services {
		mid := "—"
		if len(s.MidDeploy) > 0 {
			var m []string
			for _, d := range s.MidDeploy {
				m = append(m, d.Tool+" ("+strings.Join(d.Revisions, ", ")+")")
			}
			mid = strings.Join(m, "; ")
		}
		want := map[string]string{"service": s.Service, "environment": s.Environment, "tools": fmt.Sprint(s.Tools),
			"at": s.At.Format(time.RFC3339Nano), "mid_deploy": mid}
		for k, v := range want {
			if shown[i][k] != v {
				t.Errorf("service %d %s: shown %q, API %q", i, k, shown[i][k], v)
			}
		}
	}
	b.keyboard("deployed")
	p.check(t, "deployed")

	newList, err := os.ReadFile("../../examples/tools-list/new.json")
	if err != nil {
		t.Fatal(err)
	}
	// check runs the page's check of new.json against service and
	// environment, and compares what it shows with the API's answer.
	check := func(service, env string) apiclient.CheckBody {
		t.Helper()
		b.visit("check against "+env, []string{"POST /api/v1/check"},
			choose(`main select[name=deployed]`, fmt.Sprintf("[%q,%q]", service, env)),
			chromedp.SetValue(`main textarea[name=new]`, string(newList)),
			chromedp.Evaluate[chromedp.Void](`document.querySelector('main [data-k=pass]') && document.querySelector('main [data-k=pass]').remove()`),
			chromedp.Click(`main form button[type=submit]`), chromedp.Poll[chromedp.Void](`document.querySelector('main [data-k=pass]')`))
		if loc := eval[string](b, `location.search`); !strings.Contains(loc, "service="+service) || !strings.Contains(loc, "environment="+env) {
			t.Errorf("the URL %q does not hold the choice", loc)
		}
		var body apiclient.CheckBody
		if err := json.Unmarshal(postCheck(t, f, service, env, newList, "application/json"), &body); err != nil {
			t.Fatal(err)
		}
		if body.Deployed == nil {
			t.Fatal("the API's check has no deployed list")
		}
		got := b.rows("Changes")
		if len(got) != len(body.Tools) || len(got) == 0 {
			t.Fatalf("%d changes shown, the API has %d", len(got), len(body.Tools))
		}
		for i, c := range body.Tools {
			if got[i]["tool"] != c.Tool || got[i]["status"] != string(c.Status) || got[i]["verdict"] != string(c.Verdict) || got[i]["old_revision"] != orDash(c.OldRevision) {
				t.Errorf("change %d: shown %v, API %s %s %s old revision %s", i, got[i], c.Tool, c.Status, c.Verdict, c.OldRevision)
			}
		}
		if line := eval[string](b, `document.querySelector('main [data-k=deployed]').textContent`); !strings.HasPrefix(line, "Old list: what "+service+" advertises now in "+env) {
			t.Errorf("the old list is said to be %q", line)
		}
		var mids []string
		for _, m := range body.Deployed.MidDeploy {
			mids = append(mids, m.Tool+" "+strings.Join(m.Revisions, ","))
		}
		if shown := eval[[]string](b, `[...document.querySelectorAll('main ul.mid-deploy [data-k=mid_deploy]')].map(e => e.dataset.full)`); fmt.Sprint(shown) != fmt.Sprint(mids) {
			t.Errorf("mid-deploy shown %q, API %q", shown, mids)
		}
		return body
	}

	prod := check("driftserver", "prod")
	if prod.Pass || len(prod.Deployed.MidDeploy) != 0 {
		t.Errorf("against prod: pass %v, mid-deploy %v; want a failing check and no deploy in progress", prod.Pass, prod.Deployed.MidDeploy)
	}
	// The Markdown, downloaded: mcpdrift check -deployed's comment, as
	// the API answers it.
	want := postCheck(t, f, "driftserver", "prod", newList, "text/markdown")
	if !bytes.HasPrefix(want, []byte("Old list: what `driftserver` advertises now in `prod`")) {
		t.Errorf("the API's Markdown starts %.80q", want)
	}
	downloads := t.TempDir()
	if _, err := cdp.Call(b.ctx, chromedp.FromContext(b.ctx).Browser, cdpbrowser.SetDownloadBehavior,
		cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
		t.Fatal(err)
	}
	b.do("download", chromedp.Click(`main button[type=button]`))
	var saved []byte
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if saved, err = os.ReadFile(filepath.Join(downloads, "mcpdrift-check.md")); err == nil && len(saved) > 0 {
			break
		}
	}
	if !bytes.Equal(saved, want) {
		t.Errorf("downloaded %.300q, want the API's Markdown %.300q", saved, want)
	}
	b.screenshot("check-deployed")
	p.check(t, "check against prod")

	eu := check("driftserver", "eu")
	if len(eu.Deployed.MidDeploy) != 3 {
		t.Errorf("eu: mid-deploy %v, want its three changed tools", eu.Deployed.MidDeploy)
	}
	b.screenshot("check-mid-deploy")
	b.keyboard("check mid-deploy")
	p.check(t, "check against eu")

	// A shared link restores the choice.
	b.open("/check", url.Values{"old": {"deployed"}, "service": {"driftserver"}, "environment": {"eu"}})
	if v := eval[string](b, `document.querySelector('main select[name=source]').value + ' ' + document.querySelector('main select[name=deployed]').value`); v != `deployed ["driftserver","eu"]` {
		t.Errorf("the link opens the page with %s", v)
	}
	p.check(t, "link")

	// A service the registry does not know: the API's 400, as a message.
	b.open("/check", url.Values{"old": {"deployed"}, "service": {"nobody"}})
	b.do("unknown service", chromedp.SetValue(`main textarea[name=new]`, string(newList)), chromedp.Click(`main form button[type=submit]`),
		chromedp.Poll[chromedp.Void](`document.querySelector('main .state.error')`))
	msg := eval[string](b, `document.querySelector('main .state.error').textContent`)
	if want := `Error in service: service "nobody" has advertised no tool definition (dev.mcpdrift.advertised) in the registry`; msg != want {
		t.Errorf("an unknown service shows %q, want %q", msg, want)
	}
	if n := eval[int](b, `document.querySelectorAll('main table').length`); n != 1 {
		t.Errorf("%d tables after the error, want the services only", n)
	}
	b.screenshot("check-unknown-service")
	p.check(t, "unknown service", "status 400", "400 (Bad Request)")

	// The tool page's advertised revisions, as the registry answers them:
	// each revision's algorithm and cache hint. Hand-computed: eu has
	// revisions 1 and 2, prod 1 with the hint of 48 h shared; all three
	// are declared names.
	b.visit("tool deploy_preview", []string{"GET /api/v1/reports/stale-usage/series", "GET /api/v1/reports/stale-usage",
		"GET /api/v1/reports/repairs", "GET /api/v1/reports/propagation", "GET /api/v1/tools/deploy_preview/revisions"},
		chromedp.Navigate(f.base+"/tools/deploy_preview?"+url.Values{"from": {f.from}, "to": {f.to}, "service": {"driftserver"}}.Encode()))
	var hist apiv1.RevisionsBody
	f.get(t, "", "/api/v1/tools/deploy_preview/revisions", url.Values{"service": {"driftserver"}}, &hist)
	var fromAPI []string
	for _, h := range hist.Histories {
		for _, r := range h.Revisions {
			ttl := "—"
			if r.ListTTLMs > 0 {
				ttl = strings.TrimSpace(fmt.Sprint(r.ListTTLMs, " ", r.ListCacheScope))
			}
			fromAPI = append(fromAPI, strings.Join([]string{h.Service, h.Environment, r.Revision, r.Algorithm, ttl}, " "))
		}
	}
	var got []string
	for _, r := range b.rows("Advertised revisions") {
		got = append(got, strings.Join([]string{r["service"], r["environment"], r["revision"], r["algorithm"], r["list_ttl"]}, " "))
	}
	if hand := []string{"driftserver eu 1 declared —", "driftserver eu 2 declared —", "driftserver prod 1 declared 172800000 shared"}; !slices.Equal(fromAPI, hand) || !slices.Equal(got, fromAPI) {
		t.Errorf("advertised revisions shown %q, API %q, want %q", got, fromAPI, hand)
	}
	if shown := eval[string](b, `[...document.querySelectorAll('main td[data-k=list_ttl]')].map(e => e.textContent).join('|')`); shown != "—|—|48.0 h shared" {
		t.Errorf("list TTL cells read %q", shown)
	}
	b.screenshot("tool-revisions")
	p.check(t, "tool deploy_preview")
}

// summary lists each service as service, environment, tools and tools
// mid-deploy.
func summary(b apiclient.ServicesBody) []any {
	var out []any
	for _, s := range b.Services {
		out = append(out, s.Service, s.Environment, s.Tools, len(s.MidDeploy))
	}
	return out
}

// choose sets the select's value as a person picking an option does,
// with its change event.
func choose(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q;
		if (s.value !== %[2]q) throw new Error('no option ' + %[2]q); s.dispatchEvent(new Event('change', { bubbles: true })); })()`, sel, value))
}

// postCheck asks the API for the check of newList against what service
// advertises now in env, over the window of the page's URL.
func postCheck(t *testing.T, f *fleet, service, env string, newList []byte, accept string) []byte {
	t.Helper()
	req, _ := json.Marshal(apiv1.CheckRequest{New: newList})
	q := url.Values{"from": {f.from}, "to": {f.to}, "service": {service}, "environment": {env}}
	r, _ := http.NewRequest(http.MethodPost, f.base+"/api/v1/check?"+q.Encode(), bytes.NewReader(req))
	r.Header.Set("Accept", accept)
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /api/v1/check: %d %s", resp.StatusCode, out)
	}
	return out
}

// startDriftserver starts the example server over HTTP on loopback with
// args; it stops with the test.
func startDriftserver(t *testing.T, bin string, args ...string) {
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
	// The first line says it serves: its tools are advertised.
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("driftserver %v: %v", args, err)
	}
}
