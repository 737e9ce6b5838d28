package drifttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/toolchange"
	"github.com/mcpdrift/mcpdrift/otelschema/mcpgo"
)

// ClientName is the name both passes give their MCP client in initialize.
const ClientName = "mcpdrift-drifttest"

// ErrHostNotAllowed is returned by Target.Check for a server URL whose
// host is not one the user allowed.
var ErrHostNotAllowed = errors.New("host not allowed")

// Target is the server under test: an MCP endpoint over streamable HTTP,
// or a command that speaks MCP over its stdin and stdout. Exactly one is
// set.
type Target struct {
	// URL is the streamable HTTP endpoint, such as
	// http://127.0.0.1:3000/mcp.
	URL string
	// Command is the command and its arguments, started once per session.
	Command []string
	// HTTPClient sends the HTTP requests; nil means one with a one-minute
	// timeout.
	HTTPClient *http.Client
}

// String names the target in reports.
func (t Target) String() string {
	if t.URL != "" {
		return t.URL
	}
	return strings.Join(t.Command, " ")
}

// Check refuses a target before anything is sent: a URL must be http or
// https and its host one of allowed (a host name, or host:port), matched
// ignoring case. A command is run as given.
func (t Target) Check(allowed []string) error {
	switch {
	case t.URL != "" && len(t.Command) > 0:
		return errors.New("both a server URL and a server command: name one")
	case t.URL == "" && len(t.Command) == 0:
		return errors.New("no server: name a URL or a command")
	case t.URL == "":
		return nil
	}
	u, err := url.Parse(t.URL)
	if err != nil {
		return fmt.Errorf("cannot parse the server URL %q: %w", t.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("the server URL %q is not an http or https URL", t.URL)
	}
	host := u.Hostname()
	for _, a := range allowed {
		a = strings.TrimSpace(a)
		if strings.EqualFold(a, host) || strings.EqualFold(a, u.Host) {
			return nil
		}
	}
	if len(allowed) == 0 {
		return fmt.Errorf("%w: %s is not allowed (no -allow-host given); drifttest sends real calls, so name the test server's host", ErrHostNotAllowed, host)
	}
	return fmt.Errorf("%w: %s is not among the allowed hosts %s; drifttest sends real calls, so it only calls hosts named in -allow-host",
		ErrHostNotAllowed, host, strings.Join(allowed, ", "))
}

// connect opens a session with a client named ClientName@version.
func (t Target) connect(ctx context.Context, version string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: version}, nil)
	var tr mcp.Transport
	if t.URL != "" {
		hc := t.HTTPClient
		if hc == nil {
			hc = &http.Client{Timeout: time.Minute}
		}
		tr = &mcp.StreamableClientTransport{Endpoint: t.URL, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}
	} else {
		tr = &mcp.CommandTransport{Command: exec.Command(t.Command[0], t.Command[1:]...)}
	}
	cs, err := client.Connect(ctx, tr, nil)
	if err != nil {
		return nil, fmt.Errorf("cannot connect to the MCP server %s: %w", t, err)
	}
	return cs, nil
}

// List lists the tools the server advertises now, every page, in a session
// of its own, as one tools/list result document.
func (t Target) List(ctx context.Context, version string) ([]byte, toolchange.List, error) {
	cs, err := t.connect(ctx, version)
	if err != nil {
		return nil, toolchange.List{}, err
	}
	defer cs.Close()
	tools := []*mcp.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, toolchange.List{}, fmt.Errorf("cannot list the tools of %s (after %d): %w", t, len(tools), err)
		}
		tools = append(tools, tool)
	}
	doc, err := json.Marshal(mcp.ListToolsResult{Tools: tools})
	if err != nil {
		return nil, toolchange.List{}, fmt.Errorf("cannot encode the %d tools of %s: %w", len(tools), t, err)
	}
	l, err := toolchange.Decode(doc)
	if err != nil {
		return nil, toolchange.List{}, fmt.Errorf("the tools of %s: %w", t, err)
	}
	return doc, l, nil
}

// Result is one call sent in one pass, and its judgement.
type Result struct {
	Call
	// Pass is how the client declared its snapshot.
	Pass Pass `json:"pass"`
	// RequestID is the id the declared pass sent under
	// mcpgo.MetaRequestID ("" in the stock pass, which sends no _meta).
	RequestID string `json:"request_id,omitempty"`
	// SessionID is the MCP session the call was sent in, "" over stdio.
	SessionID string `json:"session_id,omitempty"`
	// Answer is the server's answer; nil in a dry run.
	Answer *Answer `json:"answer,omitempty"`
	// Verdict and Reason judge it; empty in a dry run.
	Verdict Verdict `json:"verdict,omitempty"`
	Reason  string  `json:"reason,omitempty"`
	// Confirmed is what the server's call event, read back from
	// mcpdrift's audit, says of the call; nil when not read (no Audit,
	// or a stock call over stdio, which has no session id to find it by).
	Confirmed *Confirmation `json:"confirmed,omitempty"`
}

// Schedule orders calls into the results to send: for each argument
// object, the declared pass then the stock pass, at most maxPerTool
// results per tool in all (0: no bound). runID prefixes the request ids.
func Schedule(calls []Call, passes []Pass, maxPerTool int, runID string) []Result {
	var out []Result
	n := map[string]int{}
	for _, c := range calls {
		for _, p := range passes {
			if maxPerTool > 0 && n[c.Tool] >= maxPerTool {
				break
			}
			n[c.Tool]++
			r := Result{Call: c, Pass: p}
			if p == PassDeclared {
				r.RequestID = fmt.Sprintf("%s-%d", runID, len(out)+1)
			}
			out = append(out, r)
		}
	}
	return out
}

// Send sends each result's call in a session per pass, fills its answer
// and judges it; the declared pass sends runID under mcpgo.MetaRunID. A
// session that cannot be opened is an error: the test could not run; a
// call that fails is an answer (a vague error).
func Send(ctx context.Context, t Target, version, runID string, results []Result, timeout time.Duration) error {
	for _, p := range Passes {
		i := slices.IndexFunc(results, func(r Result) bool { return r.Pass == p })
		if i < 0 {
			continue
		}
		cs, err := t.connect(ctx, version)
		if err != nil {
			return fmt.Errorf("pass %s: %w", p, err)
		}
		for i := range results {
			r := &results[i]
			if r.Pass != p {
				continue
			}
			params := &mcp.CallToolParams{Name: r.Tool, Arguments: r.Arguments}
			if p == PassDeclared {
				params.Meta = mcp.Meta{mcpgo.MetaRevision: r.OldRevision, mcpgo.MetaRequestID: r.RequestID, mcpgo.MetaRunID: runID}
			}
			r.SessionID = cs.ID()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			res, err := cs.CallTool(cctx, params)
			cancel()
			a := answer(res, err)
			r.Answer = &a
			r.Verdict, r.Reason = Judge(r.Call, a)
		}
		cs.Close()
	}
	return nil
}

// maxText bounds the text of an answer kept in the report.
const maxText = 500

// answer reads a tools/call's result or error.
func answer(res *mcp.CallToolResult, err error) Answer {
	if err != nil {
		return Answer{Error: err.Error()}
	}
	if res == nil {
		return Answer{Error: "no result"}
	}
	a := Answer{IsError: res.IsError, Meta: res.Meta}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			a.Text = tc.Text
			if len(a.Text) > maxText {
				a.Text = a.Text[:maxText] + "…"
			}
			break
		}
	}
	if res.StructuredContent != nil {
		b, err := json.Marshal(res.StructuredContent)
		if err == nil {
			_ = json.Unmarshal(b, &a.Structured)
		}
	}
	return a
}
