package mcpgo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpdrift/mcpdrift/internal/argschema"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Bounds of the per-session bookkeeping.
const (
	// defaultKeepDefinitions is ClientOptions.KeepDefinitions' default.
	defaultKeepDefinitions = 64
	// defaultRefreshTimeout is ClientOptions.RefreshTimeout's default.
	defaultRefreshTimeout = 30 * time.Second
	// maxListChains is how many of the caller's own multi-page lists a
	// session follows at once; the oldest is dropped beyond it.
	maxListChains = 8
	// maxListPages stops a refresh whose server keeps returning cursors.
	maxListPages = 10000
)

// definition is one tool definition a session listed, at one revision. Its
// input schema is compiled once, when a planned call first needs it.
type definition struct {
	tool     *mcp.Tool
	revision string

	once   sync.Once
	schema *argschema.Schema
	err    error
}

// compiled returns the definition's input schema, compiled by argschema:
// the validator the server middleware and the release check use.
func (d *definition) compiled() (*argschema.Schema, error) {
	d.once.Do(func() {
		d.schema, d.err = argschema.Compile(d.tool.InputSchema)
		if d.err != nil {
			d.err = fmt.Errorf("cannot compile the input schema of %s revision %s: %w", d.tool.Name, Short(d.revision), d.err)
		}
	})
	return d.schema, d.err
}

// retired remembers the definitions a refresh replaced or removed, newest
// last, so that a call planned against one is still associated with the
// schema that produced it. It holds at most max entries.
type retired struct {
	max  int
	defs []*definition
}

// add remembers d, forgetting the oldest definition beyond the bound.
func (r *retired) add(d *definition) {
	r.defs = slices.DeleteFunc(r.defs, func(x *definition) bool { return x.tool.Name == d.tool.Name && x.revision == d.revision })
	if len(r.defs) >= r.max {
		r.defs = slices.Delete(r.defs, 0, len(r.defs)-r.max+1)
	}
	r.defs = append(r.defs, d)
}

// find returns the remembered definition of tool at revision.
func (r *retired) find(tool, revision string) *definition {
	for i := len(r.defs) - 1; i >= 0; i-- {
		if d := r.defs[i]; d.tool.Name == tool && d.revision == revision {
			return d
		}
	}
	return nil
}

// listing accumulates the pages of one tools/list, so that the snapshot is
// swapped once, when the last page is in.
type listing struct {
	// gen is the number of list_changed notifications the session had
	// received when the list started: a swap answers those, not later ones.
	gen uint64
	// next is the cursor of the page expected next.
	next  string
	tools []*mcp.Tool
}

// ownListKey marks the context of the tools/list requests Refresh sends:
// the sending middleware leaves their pages to Refresh.
type ownListKey struct{}

// definition returns the session's definition of tool at revision: the
// current one, else a retired one; nil when neither is remembered. s.mu is
// held.
func (s *clientSession) definition(tool, revision string) *definition {
	if d := s.current[tool]; d != nil && d.revision == revision {
		return d
	}
	return s.retired.find(tool, revision)
}

// stale reports whether a list_changed has not yet been answered by a
// complete list. s.mu is held.
func (s *clientSession) stale() bool { return s.synced < s.notified }

// Refresh lists the session's tools, every page, and swaps the session's
// snapshot once the last page is in: a planned call never sees half of a
// multi-page list. It emits the refresh events (one per tool whose
// revision changed, or one without a tool when none did; one with
// refresh_result = failed when a page cannot be listed, the snapshot then
// unchanged). The automatic refresh after notifications/tools/list_changed
// runs it; callers that set ClientOptions.ManualRefresh call it, or
// ClientSession.ListTools page by page, themselves.
func (d *Client) Refresh(ctx context.Context, cs *mcp.ClientSession) error {
	return d.refresh(ctx, cs, false)
}

func (d *Client) refresh(ctx context.Context, cs *mcp.ClientSession, auto bool) error {
	s := d.session(cs)
	s.mu.Lock()
	l := &listing{gen: s.notified}
	s.mu.Unlock()
	ctx = context.WithValue(ctx, ownListKey{}, true)
	seen := map[string]bool{}
	for page := 1; ; page++ {
		var params *mcp.ListToolsParams
		if l.next != "" {
			params = &mcp.ListToolsParams{Cursor: l.next}
		}
		res, err := cs.ListTools(ctx, params)
		if err == nil && page > maxListPages {
			err = fmt.Errorf("the server returned more than %d pages", maxListPages)
		}
		if err == nil && res.NextCursor != "" && seen[res.NextCursor] {
			err = fmt.Errorf("the server returned cursor %q twice", res.NextCursor)
		}
		if err != nil {
			// A session closed under an automatic refresh is not a failed
			// refresh: nothing can be planned on it any more.
			if !auto || !errors.Is(err, mcp.ErrConnectionClosed) {
				d.refreshFailed(ctx, cs)
			}
			return fmt.Errorf("cannot list the tools of session %q (page %d, %d tools so far): %w", cs.ID(), page, len(l.tools), err)
		}
		l.tools = append(l.tools, res.Tools...)
		if res.NextCursor == "" {
			break
		}
		seen[res.NextCursor] = true
		l.next = res.NextCursor
	}
	d.swap(ctx, cs, l)
	return nil
}

// listPage follows the caller's own tools/list pages: a list is swapped in
// when its last page arrives, provided every page since its first was
// seen; a failed page is a failed refresh. It returns what next returned.
func (d *Client) listPage(ctx context.Context, cs *mcp.ClientSession, next mcp.MethodHandler, q *mcp.ListToolsParams) (mcp.Result, error) {
	if own, _ := ctx.Value(ownListKey{}).(bool); own {
		return next(ctx, methodListTools, &mcp.ClientRequest[mcp.Params]{Session: cs, Params: q})
	}
	// The notifications a list answers are those received before its
	// first page was asked for.
	s := d.session(cs)
	s.mu.Lock()
	gen := s.notified
	s.mu.Unlock()
	res, err := next(ctx, methodListTools, &mcp.ClientRequest[mcp.Params]{Session: cs, Params: q})
	lr, _ := res.(*mcp.ListToolsResult)
	if err != nil || lr == nil {
		d.refreshFailed(ctx, cs)
		return res, err
	}
	s.mu.Lock()
	var l *listing
	if q.Cursor == "" {
		l = &listing{gen: gen}
	} else if i := slices.IndexFunc(s.chains, func(c *listing) bool { return c.next == q.Cursor }); i >= 0 {
		l = s.chains[i]
		s.chains = slices.Delete(s.chains, i, i+1)
	}
	if l == nil {
		// A page of a list not followed from its first page: the snapshot
		// waits for a whole list.
		s.mu.Unlock()
		return res, err
	}
	l.tools = append(l.tools, lr.Tools...)
	if lr.NextCursor != "" {
		l.next = lr.NextCursor
		if len(s.chains) >= maxListChains {
			s.chains = slices.Delete(s.chains, 0, 1)
		}
		s.chains = append(s.chains, l)
		s.mu.Unlock()
		return res, err
	}
	s.mu.Unlock()
	d.swap(ctx, cs, l)
	return res, err
}

// refreshFailed emits the event of a tools/list that failed (the error
// itself goes to the caller: events carry no free text). The snapshot is
// unchanged, and a stale session stays stale, so that the next refresh —
// automatic: the next planned call or notification — tries again.
func (d *Client) refreshFailed(ctx context.Context, cs *mcp.ClientSession) {
	now := d.em.now()
	e, s := d.base(cs, otelschema.EventRefresh, now)
	e.method = methodListTools
	e.refreshResult = otelschema.RefreshResultFailed
	s.mu.Lock()
	if !s.notifiedAt.IsZero() {
		e.lag, e.hasLag = now.Sub(s.notifiedAt), true
	}
	s.mu.Unlock()
	d.em.emit(ctx, &e, false)
}

// swap replaces the session's snapshot with a complete list, in one step,
// and emits the refresh events: one per tool whose revision changed
// (revision.before empty for a new tool, revision.after empty for a
// removed one), or one without a tool when none did. Definitions that
// leave the snapshot are retired, not forgotten.
func (d *Client) swap(ctx context.Context, cs *mcp.ClientSession, l *listing) {
	now := d.em.now()
	e, s := d.base(cs, otelschema.EventRefresh, now)
	e.method = methodListTools
	e.refreshResult = otelschema.RefreshResultOK
	type diff struct{ tool, before, after string }
	var diffs []diff
	revs := make([]string, len(l.tools)) // digests, computed outside the lock
	for i, t := range l.tools {
		if t != nil {
			revs[i] = advertised(t)
		}
	}

	s.mu.Lock()
	if !s.notifiedAt.IsZero() {
		e.lag, e.hasLag = now.Sub(s.notifiedAt), true
	}
	next := make(map[string]*definition, len(l.tools))
	for i, t := range l.tools {
		if t == nil {
			continue
		}
		rev := revs[i]
		def := s.definition(t.Name, rev)
		if def == nil {
			def = &definition{tool: t, revision: rev}
		}
		next[t.Name] = def
	}
	for name, old := range s.current {
		if def := next[name]; def == nil || def != old {
			s.retired.add(old)
		}
	}
	for name, def := range next {
		before := ""
		if old := s.current[name]; old != nil {
			before = old.revision
		}
		if before != def.revision {
			diffs = append(diffs, diff{name, before, def.revision})
		}
	}
	for name, old := range s.current {
		if next[name] == nil {
			diffs = append(diffs, diff{name, old.revision, ""})
		}
	}
	s.current, s.listed = next, true
	s.synced = max(s.synced, l.gen)
	if !s.stale() {
		s.notifiedAt = time.Time{}
	}
	s.mu.Unlock()

	if len(diffs) == 0 {
		d.em.emit(ctx, &e, false)
		return
	}
	slices.SortFunc(diffs, func(a, b diff) int { return strings.Compare(a.tool, b.tool) })
	for _, df := range diffs {
		ev := e
		ev.tool, ev.revBefore, ev.revAfter = df.tool, df.before, df.after
		d.em.emit(ctx, &ev, false)
	}
}

// noticed records a received list_changed, before the SDK handles it, so
// that a planned call sent from then on waits for the refresh that answers
// it. It returns the function that starts the automatic refresh, to be
// called once the SDK has handled the notification (it drops its cached
// lists then); nil when the refresh is manual or one is already under way
// (that one lists again when it ends, as the session is still stale).
//
// A refresh that a planned call starts while the SDK is still dispatching
// the notification may read the SDK's cached list, not yet dropped: only
// on protocol 2026-07-28, from a server that opts into list caching
// (ttlMs), and only within that dispatch.
func (d *Client) noticed(cs *mcp.ClientSession, at time.Time) func() {
	s := d.session(cs)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notified++
	if s.notifiedAt.IsZero() {
		s.notifiedAt = at
	}
	if d.manual || s.refreshDone != nil {
		return nil
	}
	done := make(chan struct{})
	s.refreshDone = done
	return func() { go d.refreshLoop(cs, s, done) }
}

// startRefresh starts the automatic refresh of a stale session unless one
// is under way, and returns a channel closed when the refresh ends.
func (d *Client) startRefresh(cs *mcp.ClientSession, s *clientSession) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refreshDone != nil {
		return s.refreshDone
	}
	done := make(chan struct{})
	if !s.stale() {
		close(done)
		return done
	}
	s.refreshDone = done
	go d.refreshLoop(cs, s, done)
	return done
}

// refreshLoop is the automatic refresh: it lists until the session is no
// longer stale or a list fails, then closes done.
//
// It runs on its own goroutine, never inside the SDK's notification
// dispatch: the SDK hands a session's incoming notifications to one
// goroutine, one at a time, so a tools/list sent from there would hold up
// every notification behind it (progress, cancellations) for a round trip,
// and wait forever on a server that needs an answer from the client
// before it lists.
func (d *Client) refreshLoop(cs *mcp.ClientSession, s *clientSession, done chan struct{}) {
	for {
		ctx, cancel := context.WithTimeout(context.Background(), d.refreshTimeout)
		err := d.refresh(ctx, cs, true)
		cancel()
		s.mu.Lock()
		// A notification received while the list was under way is answered
		// by another list; a failed refresh is retried by the next trigger
		// (a planned call, a notification), not in a loop against a failing
		// server.
		if err == nil && s.stale() {
			s.mu.Unlock()
			continue
		}
		s.refreshDone = nil
		s.mu.Unlock()
		close(done)
		return
	}
}

// awaitRefresh waits, before a planned call is checked, for the automatic
// refresh of a stale session (starting one when the last one failed), so
// that the call is validated against the list the notification announced.
// When the refresh fails, the call is checked against the snapshot held.
func (d *Client) awaitRefresh(ctx context.Context, cs *mcp.ClientSession, s *clientSession) error {
	if d.manual {
		return nil
	}
	s.mu.Lock()
	stale := s.stale()
	s.mu.Unlock()
	if !stale {
		return nil
	}
	select {
	case <-d.startRefresh(cs, s):
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cannot wait for the tools/list refresh of session %q: %w", cs.ID(), ctx.Err())
	}
}
