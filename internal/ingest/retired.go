package ingest

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
)

//go:embed adapter_windows.sql
var adapterWindowsSQL string

// WithAdapterWindows has the server restore, when it starts, the adapters'
// declared window ends from the adapters table of database through q, so
// that a restart does not forget an adapter retired before it. Without it
// the server knows only the adapter events it receives.
func WithAdapterWindows(q store.Querier, database string) Option {
	return func(s *Server) { s.windowsFrom, s.windowsDB = q, database }
}

// retirement counts the calls made through an adapter after the end of
// its compatibility window, as the adapter's latest declaration
// (dev.mcpdrift.adapter.window_end) states it: an adapter used again after
// being declared retired. It learns the windows from the adapter events
// the batchers write, and from the store at start-up.
type retirement struct {
	calls atomic.Uint64 // calls after their adapter's window end

	mu      sync.Mutex
	windows map[adapterKey]adapterWindow
}

type adapterKey struct{ tenant, id string }

// adapterWindow is an adapter's latest declaration: its window end (Unix
// seconds), when it was declared (Unix nanoseconds), and whether a call
// after the end was logged.
type adapterWindow struct {
	end, declared int64
	logged        bool
}

// declare records the window end of adapter id of tenant declared at
// declared, unless a later declaration is known. An end of 0 declares no
// end.
func (r *retirement) declareLocked(k adapterKey, end, declared int64) {
	if r.windows == nil {
		r.windows = map[adapterKey]adapterWindow{}
	}
	w, ok := r.windows[k]
	if ok && w.declared > declared {
		return
	}
	r.windows[k] = adapterWindow{end: end, declared: declared, logged: ok && w.logged && w.end == end}
}

// observe counts the calls of tenant's events made through an adapter
// after its window end, the windows the events declare included. It is
// called once per batch written; it takes its lock only for a batch that
// holds adapter events or calls through an adapter.
func (r *retirement) observe(tenant string, events []otelschema.Event, logger *slog.Logger) {
	adapted := false
	for i := range events {
		if events[i].AdapterID != "" {
			adapted = true
			break
		}
	}
	if !adapted {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range events {
		if e := &events[i]; e.Name == otelschema.EventAdapter && e.AdapterID != "" {
			r.declareLocked(adapterKey{tenant, e.AdapterID}, e.AdapterWindowEnd, e.Time)
		}
	}
	for i := range events {
		e := &events[i]
		if e.Name != otelschema.EventCall || e.AdapterID == "" {
			continue
		}
		k := adapterKey{tenant, e.AdapterID}
		w, ok := r.windows[k]
		if !ok || w.end <= 0 || e.Time <= w.end*int64(time.Second) {
			continue
		}
		r.calls.Add(1)
		if !w.logged {
			// Once per adapter and declaration: a state change.
			w.logged = true
			r.windows[k] = w
			logger.Warn("adapter used after the end of its declared compatibility window",
				"tenant", tenant, "adapter", e.AdapterID, "window_end", time.Unix(w.end, 0).UTC())
		}
	}
}

// restore reads the declared windows from the store.
func (r *retirement) restore(ctx context.Context, q store.Querier, database string) (int, error) {
	t, err := template.New("adapter_windows.sql").Option("missingkey=error").Parse(adapterWindowsSQL)
	if err != nil {
		return 0, fmt.Errorf("cannot parse adapter_windows.sql: %w", err)
	}
	var sql bytes.Buffer
	if err := t.Execute(&sql, struct{ Database string }{database}); err != nil {
		return 0, fmt.Errorf("cannot render adapter_windows.sql: %w", err)
	}
	var rows []struct {
		Tenant     string `json:"tenant"`
		AdapterID  string `json:"adapter_id"`
		WindowEnd  int64  `json:"window_end_s"`
		DeclaredAt int64  `json:"declared_at_ns"`
	}
	if err := q.Query(ctx, store.Query{Name: "adapter_windows", SQL: sql.String()}, store.Params{}, &rows); err != nil {
		return 0, fmt.Errorf("cannot read the adapters' windows: %w", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, row := range rows {
		r.declareLocked(adapterKey{row.Tenant, row.AdapterID}, row.WindowEnd, row.DeclaredAt)
	}
	return len(rows), nil
}

// restoreTimeout bounds the restore of the windows, which delays the
// start: a store that cannot answer within it answers later, and the
// windows are learned from the events meanwhile.
const restoreTimeout = 5 * time.Second

// restoreAdapterWindows restores the windows at start-up, if
// WithAdapterWindows asked for it; a store that cannot answer yet is
// logged, not fatal: ingest then learns the windows from the events.
func (s *Server) restoreAdapterWindows(ctx context.Context) {
	if s.windowsFrom == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, min(s.cfg.WriteTimeout, restoreTimeout))
	defer cancel()
	n, err := s.stats.retired.restore(ctx, s.windowsFrom, s.windowsDB)
	if err != nil {
		s.logger.Warn("adapter windows not restored: calls through adapters retired before this start are counted once their adapter is declared again", "error", err)
		return
	}
	s.logger.Info("adapter windows restored", "adapters", n)
}
