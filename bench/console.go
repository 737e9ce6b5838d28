package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/mcpdrift/mcpdrift/apiv1"
	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// targetConsoleMs is the design's target for the console: each page
// interactive within 1 s on the bench's 10M-event store.
const targetConsoleMs = 1000.0

// ConsoleTiming is one page of the console timed in Chromium: from the
// navigation (or, for the release check, the press of "Check") until every
// table and chart of the page shows its answer.
type ConsoleTiming struct {
	Page string `json:"page"`
	// URL is the page's path and query, the load's window in it.
	URL string `json:"url"`
	// Requests is the API requests one visit sent, Want the page's tables
	// and charts: one request each.
	Requests int `json:"api_requests"`
	Want     int `json:"want_requests"`
	// Latency is over the measured visits; its CPU is this process's
	// (the API and chDB), not the browser's.
	Latency Latency `json:"latency"`
	// API is, over the same visits, the longest of each visit's API
	// requests as the browser timed it (from sending the request to the
	// answer's last byte): the part of the wait the API is answerable
	// for, its requests running at once.
	API Latency `json:"api_longest_request"`
	// Retries is the visits run again because Chromium lost the page's
	// JavaScript context between the navigation and the first poll (a
	// race of the DevTools protocol, not of the page).
	Retries int `json:"retries,omitempty"`
}

// consolePage is a page the console suite opens.
type consolePage struct {
	name, path string
	extra      url.Values
	// want is the page's tables and charts.
	want int
	// check is true for the release check: the visit pastes two lists
	// and presses "Check".
	check bool
}

// chromiumPath is the browser the console suite drives: $CHROMIUM, or
// chromium on the PATH (`make chromium` installs Debian's).
func chromiumPath() (string, error) {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p, nil
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		return "", fmt.Errorf("no chromium for the console suite (make chromium installs it, or set CHROMIUM): %w", err)
	}
	return p, nil
}

// consoleSettled is true once every section of the page has its answer:
// what the console's browser test waits for too.
const consoleSettled = `document.querySelector('main').children.length > 0 && !document.querySelector('main .loading')`

// measureConsole serves the console and the API over the reports load (the
// clock fixed at load.Clock) and times each page in Chromium:
// cfg.ReportWarmups unmeasured visits, then cfg.ReportRuns measured ones.
// It fails on a page whose visit sends another count of API requests than
// it has tables and charts, and on any console error, exception, failed
// request or answer of 400 and more.
func measureConsole(ctx context.Context, cfg Config, st *embedded.Store, db string, load *LoadResult, ledger *simulate.Ledger) ([]ConsoleTiming, error) {
	exe, err := chromiumPath()
	if err != nil {
		return nil, err
	}
	web, err := startHTTPReports(st, db, load, busiestTool(ledger), cfg.Logger)
	if err != nil {
		return nil, err
	}
	defer web.close()
	base := web.client.BaseURL

	// The adapter with the most calls, and the tool with the most.
	var adapters apiv1.ReportBody[apiv1.AdapterRow]
	body, err := web.client.Get(ctx, "/api/v1/reports/adapter-retirement", web.query)
	if err == nil {
		err = json.Unmarshal(body, &adapters)
	}
	if err != nil {
		return nil, fmt.Errorf("cannot list the adapters: %w", err)
	}
	if len(adapters.Rows) == 0 {
		return nil, errors.New("the load has no adapter to open")
	}
	adapter := slices.MaxFunc(adapters.Rows, func(a, b apiv1.AdapterRow) int { return cmp.Compare(a.Calls, b.Calls) }).AdapterID
	pages := []consolePage{
		{name: "adapters", path: "/adapters", want: 1},
		{name: "adapter", path: "/adapters/" + url.PathEscape(adapter), want: 2},
		{name: "tools", path: "/tools", want: 1},
		{name: "tool", path: "/tools/" + url.PathEscape(web.tool), want: 5},
		{name: "violations", path: "/violations", want: 1},
		{name: "audit", path: "/audit", want: 1},
		{name: "check", path: "/check", want: 1, check: true},
	}
	oldList, err := os.ReadFile(filepath.Join(moduleRoot(), "examples", "tools-list", "old.json"))
	if err != nil {
		return nil, err
	}
	newList, err := os.ReadFile(filepath.Join(moduleRoot(), "examples", "tools-list", "new.json"))
	if err != nil {
		return nil, err
	}

	actx, cancel := chromedp.NewExecAllocator(ctx, append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 900))...)
	defer cancel()
	w := &pageWatch{}
	bctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(w.listen))
	defer cancel()
	if err := chromedp.Do(bctx); err != nil {
		return nil, fmt.Errorf("cannot start %s: %w", exe, err)
	}
	do := func(actions ...chromedp.Action[chromedp.Void]) error {
		c, cancel := context.WithTimeout(bctx, time.Minute)
		defer cancel()
		return chromedp.Do(c, actions...)
	}

	var out []ConsoleTiming
	var errs []error
	for _, p := range pages {
		q := url.Values{apiv1.ParamFrom: {load.From.Format(time.RFC3339)}, "to": {load.To.Format(time.RFC3339)}}
		for k, v := range p.extra {
			q[k] = v
		}
		t := ConsoleTiming{Page: p.name, URL: p.path + "?" + q.Encode(), Want: p.want}
		var runs, apiRuns []run
		for k := 0; k < cfg.ReportWarmups+cfg.ReportRuns; k++ {
			if err := ctx.Err(); err != nil {
				return out, err
			}
			var d run
			if p.check {
				// The form is there at once; the figure is the answer.
				if err = do(chromedp.Navigate(base+t.URL), chromedp.Poll[chromedp.Void](consoleSettled),
					chromedp.SetValue(`main textarea[name=old]`, string(oldList)), chromedp.SetValue(`main textarea[name=new]`, string(newList))); err != nil {
					break
				}
				w.take()
				cpu0, t0 := processCPU(), time.Now()
				err = do(chromedp.Click(`main form button[type=submit]`), chromedp.Poll[chromedp.Void](`document.querySelector('main [data-k=pass]')`))
				d = run{wall: time.Since(t0), cpu: processCPU() - cpu0}
			} else {
				w.take()
				cpu0, t0 := processCPU(), time.Now()
				err = do(chromedp.Navigate(base+t.URL), chromedp.Poll[chromedp.Void](consoleSettled))
				d = run{wall: time.Since(t0), cpu: processCPU() - cpu0}
			}
			if err != nil && strings.Contains(err.Error(), "Cannot find context with specified id") && t.Retries < 3 {
				t.Retries++
				w.take()
				k--
				err = nil
				continue
			}
			if err != nil {
				break
			}
			requests, problems, longest := w.take()
			t.Requests = len(requests)
			if len(problems) > 0 {
				err = fmt.Errorf("%s", strings.Join(problems, "; "))
				break
			}
			if len(requests) != p.want {
				err = fmt.Errorf("%d API requests (%s), want %d: one per table and chart", len(requests), strings.Join(requests, ", "), p.want)
				break
			}
			if k >= cfg.ReportWarmups {
				runs = append(runs, d)
				apiRuns = append(apiRuns, run{wall: longest})
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("console page %s (%s): %w", p.name, t.URL, err))
			continue
		}
		t.Latency, t.API = latencyOf(runs, 0), latencyOf(apiRuns, 0)
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// pageWatch records, from the browser's events, the API requests a page
// sends and what a person would see go wrong in the developer tools.
type pageWatch struct {
	mu       sync.Mutex
	requests []string
	problems []string
	// sent holds when each API request in flight was sent; longest is
	// the longest answered since the last take.
	sent    map[network.RequestID]cdp.MonotonicTime
	longest time.Duration
}

func (w *pageWatch) listen(ev any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		if u, err := url.Parse(e.Request.URL); err == nil && strings.HasPrefix(u.Path, "/api/") {
			w.requests = append(w.requests, e.Request.Method+" "+u.Path)
			if w.sent == nil {
				w.sent = map[network.RequestID]cdp.MonotonicTime{}
			}
			w.sent[e.RequestID] = e.Timestamp
		}
	case *network.EventLoadingFinished:
		if t0, ok := w.sent[e.RequestID]; ok {
			// Monotonic seconds.
			w.longest = max(w.longest, time.Duration(float64(e.Timestamp-t0)*float64(time.Second)))
			delete(w.sent, e.RequestID)
		}
	case *network.EventLoadingFailed:
		delete(w.sent, e.RequestID)
		w.problems = append(w.problems, "request failed: "+e.ErrorText)
	case *network.EventResponseReceived:
		if e.Response.Status >= 400 {
			w.problems = append(w.problems, fmt.Sprintf("status %d: %s", e.Response.Status, e.Response.URL))
		}
	case *runtime.EventExceptionThrown:
		w.problems = append(w.problems, "exception: "+e.ExceptionDetails.Text)
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError {
			w.problems = append(w.problems, "console error")
		}
	}
}

// take returns the requests and problems since the last take, and the
// longest of those requests answered.
func (w *pageWatch) take() (requests, problems []string, longest time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	requests, problems, longest = w.requests, w.problems, w.longest
	w.requests, w.problems, w.longest = nil, nil, 0
	return requests, problems, longest
}

// moduleRoot is the repository's root: the directory of go.mod above the
// working directory (the bench runs from the root, its test from bench/).
func moduleRoot() string {
	dir, _ := os.Getwd()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return dir
		}
	}
}

// consoleFigures derives the console suite's figures: each page's p50
// and p95 until interactive against the 1 s target, and its API requests
// against its tables and charts.
func (r *Report) consoleFigures(add func(Figure), met func(bool) *bool) {
	for _, t := range r.Console {
		label := fmt.Sprintf("(j) console %s page interactive in Chromium", t.Page)
		if t.Page == "check" {
			label = "(j) console release check answered in Chromium (two pasted lists)"
		}
		add(Figure{ID: "console." + t.Page + ".p50_ms", Label: label + ", p50", Value: t.Latency.P50Ms, Unit: "ms",
			Target: "≤ 1000 ms", Met: met(t.Latency.P50Ms <= targetConsoleMs)})
		add(Figure{ID: "console." + t.Page + ".p95_ms", Label: label + ", p95", Value: t.Latency.P95Ms, Unit: "ms",
			Target: "≤ 1000 ms", Met: met(t.Latency.P95Ms <= targetConsoleMs)})
		add(Figure{ID: "console." + t.Page + ".api_p50_ms", Label: fmt.Sprintf("(j) console %s page, its longest API request, p50", t.Page),
			Value: t.API.P50Ms, Unit: "ms"})
		add(Figure{ID: "console." + t.Page + ".api_requests", Label: fmt.Sprintf("(j) API requests of the console %s page", t.Page),
			Value: float64(t.Requests), Unit: "requests", Target: fmt.Sprintf("= %d (one per table and chart)", t.Want), Met: met(t.Requests == t.Want)})
	}
}

// consoleNote says how the console figures were taken.
func (r *Report) consoleNote(w io.Writer) {
	if len(r.Console) == 0 {
		return
	}
	fmt.Fprintf(w, "(j) the console over the reports load after OPTIMIZE FINAL, in Chromium 1280×900 on loopback, the clock fixed at the load's end:\n"+
		"    from navigation (the release check: from pressing Check) until every table and chart shows its answer; %d runs per page;\n"+
		"    its longest API request is as Chromium timed it, from sending to the answer's last byte (a page's requests run at once).\n",
		r.Console[0].Latency.Runs)
}
