package simulate

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// Ledger is the exact account of the events a run emitted, so that an
// end-to-end test (or a person) can compare report totals with it. Maps are
// keyed by wire values: event names, tool names, outcomes, adapter ids,
// repair actions, violation names.
type Ledger struct {
	// Seed and the simulated Start and End of the run's clock.
	Seed  uint64    `json:"seed"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`

	// Events is the number of events emitted.
	Events int64 `json:"events"`
	// ByEvent counts events by event name.
	ByEvent map[string]int64 `json:"by_event"`
	// Calls counts call events by tool, then outcome.
	Calls map[string]map[string]int64 `json:"calls"`
	// Outcomes counts call events by outcome.
	Outcomes map[string]int64 `json:"outcomes"`
	// Normalized counts calls with outcome normalized by adapter id.
	Normalized map[string]int64 `json:"normalized"`
	// Adapters counts adapter registry declarations by adapter id.
	Adapters map[string]int64 `json:"adapters"`
	// Repairs counts repair events by action.
	Repairs map[string]int64 `json:"repairs"`
	// Violations counts the injected safety violations by kind (see
	// Violation).
	Violations map[string]int64 `json:"violations"`

	// ListChangedSent and ListChangedReceived split the list_changed
	// events between servers (sent) and clients (received).
	ListChangedSent     int64 `json:"list_changed_sent"`
	ListChangedReceived int64 `json:"list_changed_received"`
	// Refreshes and RefreshesFailed count refresh events, and those whose
	// result was failed.
	Refreshes       int64 `json:"refreshes"`
	RefreshesFailed int64 `json:"refreshes_failed"`
	// Retries counts call events that retry another (retry.of set);
	// RetriesAfter splits them by the outcome of the call each retries
	// (retry.after), "" when the retry does not say.
	Retries      int64            `json:"retries"`
	RetriesAfter map[string]int64 `json:"retries_after"`
	// AutomaticRepairs counts repair events with repair.automatic true.
	AutomaticRepairs int64 `json:"automatic_repairs"`

	// Sessions is the distinct sessions (runs, on protocol 2026-07-28)
	// with at least one event; StatelessRuns those without a session id.
	Sessions      int64 `json:"sessions"`
	StatelessRuns int64 `json:"stateless_runs"`
	// Clients is the distinct client name@version combinations seen.
	Clients int64 `json:"clients"`

	// Export is what the OTLP exporters reported; set by Run only.
	Export *ExportStats `json:"export,omitempty"`
}

// ExportStats are what Run's OTLP exporters reported.
type ExportStats struct {
	// Protocol and Endpoint the run exported to.
	Protocol string `json:"protocol"`
	Endpoint string `json:"endpoint"`
	// Providers is the number of LoggerProviders: one per simulated
	// service resource (a server build, a client version).
	Providers int `json:"providers"`
	// Exported is the records in exports the receiver acknowledged,
	// Rejected those it refused through partial success, Failed those in
	// exports that failed for good.
	Exported int64 `json:"exported"`
	Rejected int64 `json:"rejected"`
	Failed   int64 `json:"failed"`
	// Seconds is the real time the run took, the final flush included,
	// FlushSeconds that flush, EventsPerSecond the run's overall rate.
	Seconds         float64 `json:"seconds"`
	FlushSeconds    float64 `json:"flush_seconds"`
	EventsPerSecond float64 `json:"events_per_second"`
}

func newLedger(cfg Config) Ledger {
	return Ledger{
		Seed:       cfg.Seed,
		Start:      cfg.Start.UTC(),
		End:        cfg.Start.Add(cfg.Span).UTC(),
		ByEvent:    map[string]int64{},
		Calls:      map[string]map[string]int64{},
		Outcomes:   map[string]int64{},
		Normalized: map[string]int64{},
		Adapters:   map[string]int64{},
		Repairs:    map[string]int64{},
		Violations: map[string]int64{},

		RetriesAfter: map[string]int64{},
	}
}

// add counts r, delta times (-1 takes it back).
func (l *Ledger) add(r *Record, delta int64) {
	e := &r.Event
	l.Events += delta
	l.ByEvent[e.Name.String()] += delta
	switch e.Name {
	case otelschema.EventCall:
		byOutcome := l.Calls[e.Tool]
		if byOutcome == nil {
			byOutcome = map[string]int64{}
			l.Calls[e.Tool] = byOutcome
		}
		byOutcome[e.Outcome.String()] += delta
		l.Outcomes[e.Outcome.String()] += delta
		if e.Outcome == otelschema.OutcomeNormalized {
			l.Normalized[e.AdapterID] += delta
		}
		if e.RetryOf != "" {
			l.Retries += delta
			l.RetriesAfter[e.RetryAfter.String()] += delta
		}
	case otelschema.EventAdapter:
		l.Adapters[e.AdapterID] += delta
	case otelschema.EventRepair:
		l.Repairs[e.RepairAction.String()] += delta
		if e.RepairAutomatic {
			l.AutomaticRepairs += delta
		}
	case otelschema.EventListChanged:
		if r.Client {
			l.ListChangedReceived += delta
		} else {
			l.ListChangedSent += delta
		}
	case otelschema.EventRefresh:
		l.Refreshes += delta
		if e.RefreshResult == otelschema.RefreshResultFailed {
			l.RefreshesFailed += delta
		}
	}
	if r.Violation != ViolationNone {
		l.Violations[r.Violation.String()] += delta
	}
}

// clone returns a deep copy.
func (l Ledger) clone() Ledger {
	c := l
	c.ByEvent = maps.Clone(l.ByEvent)
	c.Calls = make(map[string]map[string]int64, len(l.Calls))
	for tool, m := range l.Calls {
		c.Calls[tool] = maps.Clone(m)
	}
	c.Outcomes = maps.Clone(l.Outcomes)
	c.Normalized = maps.Clone(l.Normalized)
	c.Adapters = maps.Clone(l.Adapters)
	c.Repairs = maps.Clone(l.Repairs)
	c.Violations = maps.Clone(l.Violations)
	if l.Export != nil {
		x := *l.Export
		c.Export = &x
	}
	return c
}

// WriteJSON writes the ledger as indented JSON, map keys sorted.
func (l Ledger) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(l); err != nil {
		return fmt.Errorf("cannot write ledger: %w", err)
	}
	return nil
}
