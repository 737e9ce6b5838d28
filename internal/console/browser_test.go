package console_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/apiclient"
	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
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

// chromium is the browser's path: $CHROMIUM, or chromium on the PATH
// (scripts/install-chromium.sh installs Debian's). Without one the test
// skips, unless MCPDRIFT_REQUIRE_CHROMIUM is set.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHROMIUM") != "" {
			t.Fatalf("no chromium (scripts/install-chromium.sh installs it): %v", err)
		}
		t.Skip("no chromium: scripts/install-chromium.sh installs it")
	}
	return p
}

// fleet is a serve with tokens and the simulator's events.
type fleet struct {
	base        string // http://host:port
	read, audit string // tokens
	from, to    string // the window, RFC 3339
	window      url.Values
	ledger      simulate.Ledger
	ingestToken string
}

func startFleet(t *testing.T) *fleet {
	t.Helper()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.jsonl")
	token := func(scopes ...auth.Scope) string {
		tok, rec, err := auth.Generate("acme", scopes, "console test")
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.Append(tokens, rec); err != nil {
			t.Fatal(err)
		}
		return tok
	}
	f := &fleet{ingestToken: token(auth.ScopeIngest), read: token(auth.ScopeRead), audit: token(auth.ScopeRead, auth.ScopeAudit)}
	c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
	if err := c.Parse([]string{"-data.dir", filepath.Join(dir, "data"), "-otlp.grpc.listen", "127.0.0.1:0", "-otlp.http.listen", "127.0.0.1:0",
		"-api.listen", "127.0.0.1:0", "-log.level", "warn", "-auth.tokens-file", tokens,
		// On, so that the release check's drift test form is off for want
		// of the token's scope alone.
		"-api.drifttest.allow-host", "127.0.0.1"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	p, err := app.Start(context.Background(), c, "v-test", io.Discard, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Shutdown() })
	f.base = "http://" + p.API().Addr()

	cfg := simulate.DefaultConfig()
	cfg.Seed, cfg.Events, cfg.ViolationRate, cfg.AuditArgs = 6, 8000, 0.3, true
	cfg.Endpoint, cfg.Insecure = p.Ingester().GRPCAddr().String(), true
	cfg.Headers = map[string]string{"Authorization": "Bearer " + f.ingestToken}
	l, err := simulate.Run(context.Background(), cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	f.ledger = l
	// Stored, not only acknowledged: the process's own metrics say when.
	var stored string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(f.base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for line := range strings.Lines(string(body)) {
			if v, ok := strings.CutPrefix(line, "mcpdrift_ingest_events_stored_total "); ok {
				stored = strings.TrimSpace(v)
			}
		}
		if stored == strconv.FormatInt(l.Events, 10) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s of %d events stored after 30 s", stored, l.Events)
		}
	}
	// A fixed window that holds the whole run: the browser and the test
	// read the same figures.
	f.from = l.Start.Add(-time.Hour).UTC().Format(time.RFC3339)
	f.to = l.End.Add(2 * time.Hour).UTC().Format(time.RFC3339)
	f.window = url.Values{"from": {f.from}, "to": {f.to}}
	t.Logf("simulated %d events over [%s, %s)", l.Events, f.from, f.to)
	return f
}

// get reads an API endpoint with token into dest.
func (f *fleet) get(t *testing.T, token, path string, params url.Values, dest any) {
	t.Helper()
	q := url.Values{}
	for k, v := range f.window {
		q[k] = v
	}
	for k, v := range params {
		q[k] = v
	}
	req, _ := http.NewRequest(http.MethodGet, f.base+path+"?"+q.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", req.URL, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, dest); err != nil {
		t.Fatalf("GET %s: %v", req.URL, err)
	}
}

// problems records what a person would see go wrong in the browser's
// developer tools: console errors, exceptions, failed requests and
// answers of 400 and more.
type problems struct {
	mu   sync.Mutex
	seen []string
	// api are the API requests the page sent since the last requests.
	api []string
}

// requests returns the paths of the API requests since the last call.
func (p *problems) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := p.api
	p.api = nil
	return r
}

func (p *problems) listen(ev any) {
	var s string
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if u, err := url.Parse(e.Request.URL); err == nil && strings.HasPrefix(u.Path, "/api/") {
			p.mu.Lock()
			p.api = append(p.api, e.Request.Method+" "+u.Path)
			p.mu.Unlock()
		}
	case *runtime.EventExceptionThrown:
		s = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil {
			s += " " + e.ExceptionDetails.Exception.Description
		}
	case *runtime.EventConsoleAPICalled:
		if string(e.Type) == "error" || string(e.Type) == "warning" {
			s = "console " + string(e.Type)
			for _, a := range e.Args {
				s += " " + string(a.Value) + a.Description
			}
		}
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			s = "log error: " + e.Entry.Text + " " + e.Entry.URL
		}
	case *network.EventLoadingFailed:
		s = "request failed: " + e.ErrorText
	case *network.EventResponseReceived:
		if e.Response.Status >= 400 {
			s = fmt.Sprintf("status %d: %s", e.Response.Status, e.Response.URL)
		}
	}
	if s != "" {
		p.mu.Lock()
		p.seen = append(p.seen, s)
		p.mu.Unlock()
	}
}

// check fails t for each problem seen since the last check that names
// none of expected, and for each of expected that no problem names.
func (p *problems) check(t *testing.T, step string, expected ...string) {
	t.Helper()
	p.mu.Lock()
	seen := p.seen
	p.seen = nil
	p.mu.Unlock()
	found := make([]bool, len(expected))
	for _, s := range seen {
		ok := false
		for i, e := range expected {
			if strings.Contains(s, e) {
				ok, found[i] = true, true
			}
		}
		if !ok {
			t.Errorf("%s: %s", step, s)
		}
	}
	for i, e := range expected {
		if !found[i] {
			t.Errorf("%s: expected a problem naming %q, saw %q", step, e, seen)
		}
	}
}

type browser struct {
	t    *testing.T
	ctx  context.Context
	f    *fleet
	p    *problems
	shot string
}

func (b *browser) do(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("%s: %v", step, err)
	}
}

func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// settled waits until every section of the page has its answer.
const settled = `document.querySelector('main').children.length > 0 && !document.querySelector('main .loading')`

// open navigates to path (with the fleet's window) and waits for the page.
func (b *browser) open(path string, extra url.Values) {
	b.t.Helper()
	q := url.Values{"from": {b.f.from}, "to": {b.f.to}}
	for k, v := range extra {
		q[k] = v
	}
	b.do("open "+path, chromedp.Navigate(b.f.base+path+"?"+q.Encode()), chromedp.Poll[chromedp.Void](settled))
}

// visit runs actions that lead to a page, waits until it has settled,
// logs how long that took, and checks the API requests it sent: one per
// table and chart.
func (b *browser) visit(page string, want []string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	b.p.requests()
	start := time.Now()
	b.do(page, append(actions, chromedp.Poll[chromedp.Void](settled))...)
	b.t.Logf("%s: interactive in %s", page, time.Since(start).Round(time.Millisecond))
	got := b.p.requests()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		b.t.Errorf("%s: API requests %q, want %q", page, got, want)
	}
}

// screenshot saves the page as name.png under the test's directory.
func (b *browser) screenshot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatal(err)
	}
	p := filepath.Join(b.shot, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot of %s: %s", name, p)
}

// cellJS defines cell(e): the figure an element shows — its time's
// datetime, the whole value behind a shortened one (data-full), or its
// text.
const cellJS = `var cell = e => e.querySelector('time') ? e.querySelector('time').getAttribute('datetime') :
	e.dataset.full || (e.firstElementChild && e.firstElementChild.dataset.full && e.children.length === 1 ? e.firstElementChild.dataset.full : e.textContent);`

// rows reads the table captioned caption: per row, each cell's data-k to
// the figure it shows (see cellJS).
func (b *browser) rows(caption string) []map[string]string {
	b.t.Helper()
	return eval[[]map[string]string](b, cellJS+`[...document.querySelectorAll('main table')].filter(t => t.caption && t.caption.textContent === `+strconv.Quote(caption)+`)
		.flatMap(t => [...t.querySelectorAll('tr')].filter(tr => tr.querySelector('td')).map(tr => Object.fromEntries(
		[...tr.querySelectorAll('td[data-k]')].map(td => [td.dataset.k, cell(td)]))))`)
}

// keyboard presses Tab through the page and fails for each visible
// control that focus never reaches: the open modal dialog's only, when
// one is open.
func (b *browser) keyboard(page string) {
	b.t.Helper()
	n := eval[int](b, `(() => { let i = 0; const scope = document.querySelector('dialog[open]') || document;
		for (const e of scope.querySelectorAll('a[href], button, input, select, textarea, summary')) {
		if (e.closest('dialog:not([open])') || e.hidden || e.disabled || !e.getClientRects().length) continue; e.dataset.kb = String(i++); } document.activeElement.blur(); return i; })()`)
	reached := map[string]bool{}
	for range n + 2 {
		b.do("tab", chromedp.KeyEvent(kb.Tab))
		reached[eval[string](b, `document.activeElement.dataset.kb || ''`)] = true
	}
	var missed []string
	for i := range n {
		if !reached[strconv.Itoa(i)] {
			missed = append(missed, eval[string](b, `document.querySelector('[data-kb="`+strconv.Itoa(i)+`"]').outerHTML.slice(0, 120)`))
		}
	}
	if len(missed) > 0 {
		b.t.Errorf("%s: Tab never reaches %d of %d controls: %q", page, len(missed), n, missed)
	}
}

func commas(n uint64) string {
	s := strconv.FormatUint(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// changeText is how the console shows the change between two revisions:
// class: summary, "none" for the class of no change, a dash when unknown.
func changeText(class, summary *string) string {
	if summary == nil {
		return "—"
	}
	c := "none"
	if class != nil && *class != "" {
		c = *class
	}
	return c + ": " + *summary
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func timeOr(t *time.Time) string {
	if t == nil {
		return "—"
	}
	return t.Format(time.RFC3339Nano)
}

// newBrowser starts Chromium for the test, recording its problems; it
// stops with the test.
func newBrowser(t *testing.T, exe string, f *fleet) *browser {
	t.Helper()
	shots := t.TempDir()
	if d := os.Getenv("MCPDRIFT_SCREENSHOTS"); d != "" {
		shots = d
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	t.Cleanup(cancel)
	p := &problems{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(p.listen))
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("cannot start %s: %v", exe, err)
	}
	return &browser{t: t, ctx: ctx, f: f, p: p, shot: shots}
}

// TestConsoleWithoutTokens: as after make run, a serve without tokens and
// without events: the console asks for no token and shows each page's
// empty state, with no problem in the browser.
func TestConsoleWithoutTokens(t *testing.T) {
	requireChDB(t)
	exe := chromium(t)
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
	b := newBrowser(t, exe, f)
	for _, page := range []string{"/", "/tools", "/tools/search", "/adapters/none", "/violations", "/audit", "/check?old=deployed"} {
		b.do("open "+page, chromedp.Navigate(f.base+page), chromedp.Poll[chromedp.Void](settled))
		if eval[bool](b, `document.getElementById('login').open || !document.getElementById('signout').hidden`) {
			t.Errorf("%s: the console asks for a token the API does not need", page)
		}
		if n := eval[int](b, `document.querySelectorAll('main .state.empty').length`); n == 0 {
			t.Errorf("%s: no empty state: %s", page, eval[string](b, `document.querySelector('main').innerText`))
		}
		if strings.HasPrefix(page, "/check") {
			// The drift test is off without -api.drifttest.allow-host:
			// the page says how to turn it on, its controls are off.
			if off := eval[string](b, `(document.querySelector('main [data-k=drift_off]') || {}).textContent || ''`); !strings.Contains(off, "-api.drifttest.allow-host") ||
				!eval[bool](b, `[...document.querySelectorAll('main form.drift input, main form.drift button')].every(e => e.disabled)`) {
				t.Errorf("%s: the drift test shows %q, or a control is on", page, off)
			}
		}
		b.p.check(t, page)
	}
	b.screenshot("no-tokens")
}

// TestConsole opens every page of the console in Chromium against a serve
// with tokens and the simulator's events, and compares what each shows
// with the API's answers for the same filters.
func TestConsole(t *testing.T) {
	requireChDB(t)
	exe := chromium(t)
	f := startFleet(t)
	b := newBrowser(t, exe, f)
	p := b.p

	// Tokens: none yet, then a wrong one, then a read token.
	b.open("/adapters", nil)
	b.do("token asked", chromedp.Poll[chromedp.Void](`document.getElementById('login').open`))
	b.screenshot("token")
	b.keyboard("token")
	// Escape closes the dialog; the page offers it again.
	b.do("escape", chromedp.KeyEvent(kb.Escape), chromedp.Poll[chromedp.Void](`!document.getElementById('login').open`),
		chromedp.Click(`main .state.error button`), chromedp.Poll[chromedp.Void](`document.getElementById('login').open`))
	b.do("wrong token", chromedp.SendKeys(`#login input[name=token]`, "not-a-token"), chromedp.Click(`#login button[type=submit]`),
		chromedp.Poll[chromedp.Void](`document.getElementById('login').open && document.getElementById('login-error').textContent.includes('refused')`))
	b.do("read token", chromedp.SendKeys(`#login input[name=token]`, f.read), chromedp.Click(`#login button[type=submit]`),
		chromedp.Poll[chromedp.Void](`!document.getElementById('login').open && document.querySelector('main table')`))
	p.check(t, "token flow", "status 401", "401 (Unauthorized)")
	if eval[string](b, `sessionStorage.getItem('mcpdrift.token')`) != f.read || eval[bool](b, `location.href.includes(`+strconv.Quote(f.read)+`)`) {
		t.Error("the token is not in sessionStorage, or it is in the URL")
	}

	t.Run("adapters", func(t *testing.T) {
		b.t = t
		compare := func(filters url.Values) apiv1.ReportBody[apiv1.AdapterRow] {
			t.Helper()
			var body apiv1.ReportBody[apiv1.AdapterRow]
			f.get(t, f.read, "/api/v1/reports/adapter-retirement", filters, &body)
			got := b.rows("Adapters")
			if len(got) != len(body.Rows) || len(got) == 0 {
				t.Fatalf("%v: %d adapters shown, the API has %d", filters, len(got), len(body.Rows))
			}
			for i, r := range body.Rows {
				share := "—"
				if r.ToolCalls > 0 {
					share = fmt.Sprintf("%.2f%%", r.Share*100)
				}
				var blocking []string
				for _, c := range r.BlockingClients {
					blocking = append(blocking, c.Client)
				}
				want := map[string]string{"adapter_id": r.AdapterID, "tool": r.Tool, "verdict": r.Verdict, "calls": commas(r.Calls),
					"share": share, "last_seen": timeOr(r.LastSeen), "reason": r.Reason, "blocking_clients": orDash(strings.Join(blocking, ", "))}
				for k, v := range want {
					if got[i][k] != v {
						t.Errorf("%v: adapter %s %s: shown %q, API %q", filters, r.AdapterID, k, got[i][k], v)
					}
				}
			}
			return body
		}
		body := compare(nil)
		// A client excluded in the filter form: the URL holds it, and the
		// figures are the API's without that client.
		var top string
		for _, r := range body.Rows {
			if len(r.BlockingClients) > 0 {
				top = r.BlockingClients[0].Client
				break
			}
		}
		if top == "" {
			t.Fatal("no adapter has a blocking client: the exclusion is not exercised")
		}
		b.visit("adapters without "+top, []string{"GET /api/v1/reports/adapter-retirement"},
			chromedp.SendKeys(`#filters input[name=exclude_client]`, top), chromedp.Click(`#filters button[type=submit]`),
			chromedp.Poll[chromedp.Void](`location.search.includes('exclude_client=')`))
		excluded := compare(url.Values{"exclude_client": {top}})
		if slices.EqualFunc(excluded.Rows, body.Rows, func(a, b apiv1.AdapterRow) bool { return a.Calls == b.Calls }) {
			t.Errorf("excluding %s changes no adapter's calls", top)
		}
		b.screenshot("adapters-excluded")
		b.do("filter back", chromedp.NavigateBack(), chromedp.Poll[chromedp.Void](`!location.search.includes('exclude_client=') && `+settled))
		if v := eval[string](b, `document.querySelector('#filters input[name=exclude_client]').value`); v != "" {
			t.Errorf("back: the exclusion field still holds %q", v)
		}
		compare(nil)
		b.screenshot("adapters")
		b.keyboard("adapters")
		p.check(t, "adapters")

		// The busiest adapter's page, reached by its link.
		busiest := body.Rows[0]
		for _, r := range body.Rows {
			if r.Calls > busiest.Calls {
				busiest = r
			}
		}
		b.visit("adapter "+busiest.AdapterID, []string{"GET /api/v1/reports/adapter-retirement", "GET /api/v1/reports/adapter-retirement/series"},
			chromedp.Click(`main a[href^="/adapters/`+url.PathEscape(busiest.AdapterID)+`?"]`),
			chromedp.Poll[chromedp.Void](`location.pathname.startsWith('/adapters/')`))
		var one apiv1.ReportBody[apiv1.AdapterRow]
		f.get(t, f.read, "/api/v1/reports/adapter-retirement", url.Values{"adapter": {busiest.AdapterID}, "top_clients": {"100"}}, &one)
		r := one.Rows[0]
		facts := eval[map[string]string](b, cellJS+`Object.fromEntries([...document.querySelectorAll('dd[data-k]')].map(d => [d.dataset.k, cell(d)]))`)
		for k, v := range map[string]string{"verdict": r.Verdict, "reason": r.Reason, "calls": commas(r.Calls), "would_be_rejected": commas(r.WouldBeRejected),
			"sessions": commas(r.Sessions), "max_privilege": orDash(r.MaxPrivilege), "last_seen": timeOr(r.LastSeen),
			"change": changeText(r.RegistryChangeClass, r.Change)} {
			if facts[k] != v {
				t.Errorf("adapter %s %s: shown %q, API %q", r.AdapterID, k, facts[k], v)
			}
		}
		blocking := b.rows("Blocking clients")
		if len(blocking) != len(r.BlockingClients) {
			t.Errorf("%d blocking clients shown, the API has %d", len(blocking), len(r.BlockingClients))
		}
		for i, c := range r.BlockingClients {
			if i < len(blocking) && (blocking[i]["client"] != c.Client || blocking[i]["calls"] != commas(c.Calls) || blocking[i]["max_privilege"] != orDash(c.MaxPrivilege)) {
				t.Errorf("blocking client %d: shown %v, API %+v", i, blocking[i], c)
			}
		}
		var series apiv1.SeriesBody[apiv1.AdapterPoint]
		f.get(t, f.read, "/api/v1/reports/adapter-retirement/series", url.Values{"step": {"1d"}, "group_by": {"adapter"}}, &series)
		var calls uint64
		for _, pt := range series.Rows {
			if pt.Adapter == busiest.AdapterID {
				calls += pt.Calls
			}
		}
		if shown := eval[string](b, `document.querySelector('#chart .chart').dataset.total`); shown != strconv.FormatUint(calls, 10) || calls != r.Calls {
			t.Errorf("calls per day sum to %s in the chart, %d in the series, %d in the report", shown, calls, r.Calls)
		}
		if gate := eval[string](b, `document.querySelector('pre[data-k=gate]').textContent`); !strings.HasPrefix(gate, "mcpdrift gate adapter "+busiest.AdapterID) {
			t.Errorf("gate command %q", gate)
		}
		b.screenshot("adapter")
		b.keyboard("adapter")
		p.check(t, "adapter")

		// Back: the list, with the window still in the URL.
		b.do("back", chromedp.NavigateBack(), chromedp.Poll[chromedp.Void](`location.pathname === '/adapters' && `+settled))
		if loc := eval[string](b, `location.search`); !strings.Contains(loc, url.QueryEscape(f.from)) {
			t.Errorf("back to %q: the window is lost", loc)
		}
		if n := len(b.rows("Adapters")); n != len(body.Rows) {
			t.Errorf("back: %d adapters shown", n)
		}
		p.check(t, "back")
	})

	t.Run("tools", func(t *testing.T) {
		b.t = t
		b.visit("tools", []string{"GET /api/v1/tools"},
			chromedp.Click(`nav a[data-nav=tools]`), chromedp.Poll[chromedp.Void](`location.pathname === '/tools'`))
		var body apiv1.ReportBody[apiv1.ToolRow]
		f.get(t, f.read, "/api/v1/tools", nil, &body)
		got := b.rows("Tools")
		if len(got) != len(body.Rows) || len(got) == 0 {
			t.Fatalf("%d tools shown, the API has %d", len(got), len(body.Rows))
		}
		for i, r := range body.Rows {
			want := map[string]string{"tool": r.Tool, "calls": commas(r.Calls), "client_revisions": orDash(strings.Join(r.ClientRevisions, ", ")),
				"server_revisions": orDash(strings.Join(r.ServerRevisions, ", ")), "first_seen": r.FirstSeen.Format(time.RFC3339Nano)}
			for k, v := range want {
				if got[i][k] != v {
					t.Errorf("tool %s %s: shown %q, API %q", r.Tool, k, got[i][k], v)
				}
			}
		}
		b.screenshot("tools")
		b.keyboard("tools")
		p.check(t, "tools")

		// The tool with the most revisions: the chart has the most layers.
		busiest := body.Rows[0]
		revisions := func(r apiv1.ToolRow) int { return len(r.ClientRevisions) + len(r.ServerRevisions) }
		for _, r := range body.Rows {
			if revisions(r) > revisions(busiest) || revisions(r) == revisions(busiest) && r.Calls > busiest.Calls {
				busiest = r
			}
		}
		b.visit("tool "+busiest.Tool, []string{"GET /api/v1/reports/stale-usage/series", "GET /api/v1/reports/stale-usage",
			"GET /api/v1/reports/repairs", "GET /api/v1/reports/propagation", "GET /api/v1/tools/" + busiest.Tool + "/revisions"},
			chromedp.Click(`main a[href^="/tools/`+url.PathEscape(busiest.Tool)+`?"]`),
			chromedp.Poll[chromedp.Void](`location.pathname.startsWith('/tools/')`))
		tool := url.Values{"tool": {busiest.Tool}}
		var stale apiv1.ReportBody[apiv1.StaleUsageRow]
		f.get(t, f.read, "/api/v1/reports/stale-usage", tool, &stale)
		shown := b.rows("Revisions")
		if len(shown) != len(stale.Rows) {
			t.Errorf("%d revision pairs shown, the API has %d", len(shown), len(stale.Rows))
		}
		for i, r := range stale.Rows {
			stale := "—"
			if r.Stale != nil {
				stale = map[bool]string{true: "yes", false: "no"}[*r.Stale]
			}
			if i < len(shown) && (shown[i]["calls"] != commas(r.Calls) || shown[i]["rejected"] != commas(r.Rejected) || shown[i]["revision_client"] != orDash(r.RevisionClient) ||
				shown[i]["change"] != changeText(r.ChangeClass, r.Change) || shown[i]["stale"] != stale) {
				t.Errorf("revisions %d: shown %v, API %+v", i, shown[i], r)
			}
		}
		// The simulator advertises no definition: the registry's table
		// says so (TestConsoleDeployed reads a registry that has some).
		if msg := eval[string](b, `[...document.querySelectorAll('main .state.empty')].map(e => e.textContent).join('|')`); !strings.Contains(msg, "No service has advertised this tool to the registry.") {
			t.Errorf("the advertised revisions read %q", msg)
		}
		var series apiv1.SeriesBody[apiv1.StaleUsagePoint]
		f.get(t, f.read, "/api/v1/reports/stale-usage/series", url.Values{"tool": {busiest.Tool}, "group_by": {"revision_client,revision_server"}}, &series)
		var sum uint64
		for _, pt := range series.Rows {
			sum += pt.Current + pt.Normalized + pt.Rejected + pt.Removed + pt.Failed
		}
		if total := eval[string](b, `document.querySelector('#chart .chart').dataset.total`); total != strconv.FormatUint(sum, 10) {
			t.Errorf("the chart stacks %s calls, the series %d", total, sum)
		}
		var repairs apiv1.ReportBody[apiv1.RepairRow]
		f.get(t, f.read, "/api/v1/reports/repairs", tool, &repairs)
		if shown := b.rows("Repairs"); len(shown) != len(repairs.Rows) {
			t.Errorf("%d repair rows shown, the API has %d", len(shown), len(repairs.Rows))
		} else {
			for i, r := range repairs.Rows {
				amp := "—"
				if r.Amplification != nil {
					amp = fmt.Sprintf("%.2f", *r.Amplification)
				}
				if shown[i]["rejections"] != commas(r.Rejections) || shown[i]["retry_calls"] != commas(r.RetryCalls) || shown[i]["amplification"] != amp {
					t.Errorf("repairs: shown %v, API %+v", shown[i], r)
				}
			}
		}
		var prop apiv1.ReportBody[apiv1.PropagationRow]
		f.get(t, f.read, "/api/v1/reports/propagation", tool, &prop)
		if shown := b.rows("Propagation"); len(shown) != len(prop.Rows) {
			t.Errorf("%d propagation rows shown, the API has %d", len(shown), len(prop.Rows))
		} else {
			for i, r := range prop.Rows {
				if shown[i]["notified_sessions"] != commas(r.NotifiedSessions) || shown[i]["never_refreshed"] != commas(r.NeverRefreshed) {
					t.Errorf("propagation: shown %v, API %+v", shown[i], r)
				}
			}
		}
		b.screenshot("tool")
		b.keyboard("tool")
		p.check(t, "tool")
	})

	t.Run("violations", func(t *testing.T) {
		b.t = t
		// Pages of 10, so that the run's violations take several.
		b.open("/violations", url.Values{"limit": {"10"}})
		var page1, page2 apiv1.ReportBody[apiv1.ViolationRow]
		f.get(t, f.read, "/api/v1/reports/violations", url.Values{"limit": {"10"}}, &page1)
		check := func(page apiv1.ReportBody[apiv1.ViolationRow]) {
			t.Helper()
			got := b.rows("Violations")
			if len(got) != len(page.Rows) {
				t.Fatalf("%d violations shown, the API has %d", len(got), len(page.Rows))
			}
			for i, r := range page.Rows {
				if got[i]["kind"] != r.Kind || got[i]["time"] != r.Time.Format(time.RFC3339Nano) || got[i]["tool"] != r.Tool {
					t.Errorf("violation %d: shown %v, API %+v", i, got[i], r)
				}
			}
		}
		check(page1)
		if page1.Next == "" {
			t.Fatalf("one page of %d violations: the pager is not exercised", len(page1.Rows))
		}
		b.screenshot("violations")
		b.keyboard("violations")
		b.visit("violations, page 2", []string{"GET /api/v1/reports/violations"},
			chromedp.Click(`nav.pager a:last-child`), chromedp.Poll[chromedp.Void](`location.search.includes('cursor=')`))
		f.get(t, f.read, "/api/v1/reports/violations", url.Values{"limit": {"10"}, "cursor": {page1.Next}}, &page2)
		check(page2)
		b.do("back to page 1", chromedp.NavigateBack(), chromedp.Poll[chromedp.Void](`!location.search.includes('cursor=') && `+settled))
		check(page1)
		p.check(t, "violations")
	})

	t.Run("audit", func(t *testing.T) {
		b.t = t
		// The read token is refused the audit.
		b.open("/audit", nil)
		if msg := eval[string](b, `(document.querySelector('main .forbidden') || {}).textContent || ''`); !strings.Contains(msg, "audit scope") {
			t.Errorf("audit with a read token shows %q", msg)
		}
		b.screenshot("audit-forbidden")
		p.check(t, "audit with a read token", "status 403", "403 (Forbidden)")
		// An audit token, entered after "Change token".
		b.do("audit token", chromedp.Click(`#signout`), chromedp.Poll[chromedp.Void](`document.getElementById('login').open`),
			chromedp.SendKeys(`#login input[name=token]`, f.audit), chromedp.Click(`#login button[type=submit]`),
			chromedp.Poll[chromedp.Void](`!document.getElementById('login').open && document.querySelector('main table') && `+settled))
		var all apiv1.ReportBody[apiv1.AuditRow]
		f.get(t, f.audit, "/api/v1/audit/calls", url.Values{"limit": {"50"}}, &all)
		got := b.rows("Audited calls")
		if len(got) != len(all.Rows) || len(got) == 0 {
			t.Fatalf("%d audited calls shown, the API has %d", len(got), len(all.Rows))
		}
		// A search by session, typed in its field.
		session := all.Rows[0].SessionID
		b.do("search", chromedp.SendKeys(`main input[name=session]`, session), chromedp.Click(`main form button[type=submit]`),
			chromedp.Poll[chromedp.Void](`location.search.includes('session=') && `+settled))
		var bySession apiv1.ReportBody[apiv1.AuditRow]
		f.get(t, f.audit, "/api/v1/audit/calls", url.Values{"limit": {"50"}, "session": {session}}, &bySession)
		got = b.rows("Audited calls")
		if len(got) != len(bySession.Rows) {
			t.Fatalf("%d calls of session %s shown, the API has %d", len(got), session, len(bySession.Rows))
		}
		for i, r := range bySession.Rows {
			if got[i]["session_id"] != r.SessionID || got[i]["tool"] != r.Tool || got[i]["time"] != r.Time.Format(time.RFC3339Nano) {
				t.Errorf("call %d: shown %v, API %+v", i, got[i], r)
			}
		}
		b.screenshot("audit")
		b.keyboard("audit")
		p.check(t, "audit")
	})

	t.Run("check", func(t *testing.T) {
		b.t = t
		b.open("/check", nil)
		// This token lacks the drifttest scope: the form says so.
		if off := eval[string](b, `(document.querySelector('main [data-k=drift_off]') || {}).textContent || ''`); !strings.Contains(off, "needs a token with the drifttest scope") {
			t.Errorf("the drift test with a token without its scope shows %q", off)
		}
		oldList, err := os.ReadFile("../../examples/tools-list/old.json")
		if err != nil {
			t.Fatal(err)
		}
		newList, err := os.ReadFile("../../examples/tools-list/new.json")
		if err != nil {
			t.Fatal(err)
		}
		b.do("paste", chromedp.SetValue(`main textarea[name=old]`, string(oldList)), chromedp.SetValue(`main textarea[name=new]`, string(newList)),
			chromedp.Click(`main form button[type=submit]`), chromedp.Poll[chromedp.Void](`document.querySelector('main [data-k=pass]')`))
		req, _ := json.Marshal(apiv1.CheckRequest{Old: oldList, New: newList})
		post := func(accept string) []byte {
			r, _ := http.NewRequest(http.MethodPost, f.base+"/api/v1/check?"+f.window.Encode(), bytes.NewReader(req))
			r.Header.Set("Authorization", "Bearer "+f.audit)
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
		var body apiclient.CheckBody
		if err := json.Unmarshal(post("application/json"), &body); err != nil {
			t.Fatal(err)
		}
		got := b.rows("Changes")
		if len(got) != len(body.Tools) {
			t.Fatalf("%d changes shown, the API has %d", len(got), len(body.Tools))
		}
		for i, c := range body.Tools {
			calls := "—"
			if c.Usage != nil {
				calls = commas(c.Usage.Calls)
			}
			if got[i]["tool"] != c.Tool || got[i]["status"] != string(c.Status) || got[i]["verdict"] != string(c.Verdict) || got[i]["calls"] != calls {
				t.Errorf("change %d: shown %v, API tool %s status %s verdict %s calls %s", i, got[i], c.Tool, c.Status, c.Verdict, calls)
			}
		}
		var want bytes.Buffer
		if err := body.Report().Markdown(&want); err != nil {
			t.Fatal(err)
		}
		if md := post("text/markdown"); !bytes.Equal(md, want.Bytes()) {
			t.Errorf("the check's Markdown differs from toolchange's:\n%s\nwant\n%s", md, want.Bytes())
		}
		// The Markdown, downloaded as a person would: the file equals the
		// API's answer.
		downloads := t.TempDir()
		if _, err := cdp.Call(b.ctx, chromedp.FromContext(b.ctx).Browser, cdpbrowser.SetDownloadBehavior,
			cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: downloads}); err != nil {
			t.Fatal(err)
		}
		b.do("download", chromedp.Click(`main button[type=button]`))
		file := filepath.Join(downloads, "mcpdrift-check.md")
		var saved []byte
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if saved, err = os.ReadFile(file); err == nil && len(saved) > 0 {
				break
			}
		}
		if !bytes.Equal(saved, want.Bytes()) {
			t.Errorf("downloaded %s: %.300q, want the API's Markdown", file, saved)
		}
		b.screenshot("check")
		b.keyboard("check")
		p.check(t, "check")
	})

	t.Run("empty and error", func(t *testing.T) {
		b.t = t
		var none apiv1.ReportBody[apiv1.ToolRow]
		f.get(t, f.read, "/api/v1/tools", url.Values{"service": {"no-such-service"}}, &none)
		b.open("/tools", url.Values{"service": {"no-such-service"}})
		if msg := eval[string](b, `(document.querySelector('main .state.empty') || {}).textContent || ''`); len(none.Rows) != 0 || msg == "" {
			t.Errorf("a service without calls: the API has %d rows, the page shows %q", len(none.Rows), msg)
		}
		b.screenshot("empty")
		p.check(t, "empty")
		b.open("/tools", url.Values{"from": {"soon"}})
		if msg := eval[string](b, `(document.querySelector('main .state.error') || {}).textContent || ''`); !strings.HasPrefix(msg, "Error in from: invalid time") {
			t.Errorf("an invalid from shows %q", msg)
		}
		b.screenshot("error")
		p.check(t, "error", "status 400", "400 (Bad Request)")
	})

	t.Run("not found", func(t *testing.T) {
		b.t = t
		b.do("open", chromedp.Navigate(f.base+"/no/such/page"), chromedp.Poll[chromedp.Void](`document.querySelector('h1')`))
		if h := eval[string](b, `document.querySelector('h1').textContent`); h != "Page not found" {
			t.Errorf("unknown path shows %q", h)
		}
		b.screenshot("not-found")
		p.check(t, "not found", "status 404", "404 (Not Found)")
	})
}
