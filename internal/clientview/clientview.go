// Package clientview releases the client views that the store holds back.
//
// A CLIENT span of tools/call is the client's view of a call that the
// server may report too (otelschema.ClientView). The server's span is the
// authoritative one, so events_mv leaves client views out of events and
// client_views_mv keeps them in client_views (schema version 19). The
// Releaser inserts into events_in, as the call's only record, every client
// view held longer than the hold time whose call has no server span in
// events: a call seen from both sides counts once, the server's; one seen
// from the client alone counts after the hold.
//
// Releases are periods of the store's clock, Interval long. Of the
// processes that run a Releaser on one store (serve, every api replica),
// one claims each period, through the store (client_view_claims), and
// releases the views held since the last release, up to the hold. A
// release is idempotent: a view already released is not released again,
// so a release cut short is simply run again by the next period's owner.
// Its INSERT reads the schema epoch first, as every writer does, so that
// it never runs while a migration changes the views.
package clientview

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// Config is when client views are released.
type Config struct {
	// Hold is how long a client view waits for its server span: longer
	// than the two exporters' batching and the pipelines between them
	// and the store.
	Hold time.Duration
	// Interval is the length of a release period.
	Interval time.Duration
	// MaxWindow bounds the held_at range one release covers, so that a
	// release after a long pause catches up in steps.
	MaxWindow time.Duration
}

// DefaultConfig returns the defaults: a 5-minute hold, a release a minute.
func DefaultConfig() Config {
	return Config{Hold: 5 * time.Minute, Interval: time.Minute, MaxWindow: time.Hour}
}

// RegisterFlags registers the flags of c.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	fs.DurationVar(&c.Hold, "client-views.hold", c.Hold,
		"how long a call seen only from the client's side (a CLIENT span) waits for the server's span of the call before it counts alone")
	fs.DurationVar(&c.Interval, "client-views.interval", c.Interval, "how often held client views are released")
}

// Validate reports the first invalid setting by the name of its flag.
func (c Config) Validate() error {
	if c.Hold <= 0 {
		return fmt.Errorf("invalid -client-views.hold %s: want a positive duration", c.Hold)
	}
	if c.Interval < time.Second {
		return fmt.Errorf("invalid -client-views.interval %s: want a second or more", c.Interval)
	}
	return nil
}

// Releaser releases the client views held in one store's database.
type Releaser struct {
	db    schema.Execer
	cfg   Config
	owner string
	log   *slog.Logger
	guard schema.WriteGuard
	sql   *strings.Replacer
	// released counts the client views this process released; runs the
	// releases it ran.
	released, runs atomic.Uint64
}

//go:embed *.sql
var files embed.FS

// New returns a Releaser of database's client views, read and written
// through the database's tables (the Distributed ones on a cluster).
func New(db schema.Execer, database string, cfg Config, log *slog.Logger) *Releaser {
	if cfg.MaxWindow <= 0 {
		cfg.MaxWindow = DefaultConfig().MaxWindow
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	return &Releaser{
		db:    db,
		cfg:   cfg,
		owner: "clientview-" + hex.EncodeToString(id[:]),
		log:   log,
		guard: schema.WriteGuard{Querier: db, Database: database},
		sql: strings.NewReplacer(
			"{{.Claims}}", database+".client_view_claims",
			"{{.ClientViews}}", database+".client_views",
			"{{.Events}}", database+".events",
			"{{.EventsIn}}", database+".events_in",
			"{{.Columns}}", store.InsertColumns,
			"{{.Select}}", selectList(),
		),
	}
}

// selectList is the SELECT list of a release: client_views' columns in
// the order of store.InsertColumns, client_view set to alone.
func selectList() string {
	cols := []string{"c." + store.TenantColumn}
	for _, c := range store.EventColumns {
		if c.Name == "client_view" {
			cols = append(cols, "'"+otelschema.ClientViewAlone.String()+"'")
			continue
		}
		cols = append(cols, "c."+c.Name)
	}
	return strings.Join(cols, ", ")
}

// statement returns the statement of name.sql, its identifiers filled in
// (names the code builds, never input) and token as its deduplication
// token.
func (r *Releaser) statement(name, token string) string {
	b, err := files.ReadFile(name + ".sql")
	if err != nil {
		panic(fmt.Sprintf("clientview: no statement %s.sql: %v", name, err)) // embedded: cannot happen
	}
	return strings.NewReplacer("{{.Token}}", token).Replace(r.sql.Replace(string(b)))
}

// Result is what one release did.
type Result struct {
	// Claimed is false when another process owns the period, or when
	// there was nothing to release: the other fields are then zero.
	Claimed bool
	// From and To bound the held_at of the views it considered: (From, To].
	From, To time.Time
	// Held is how many views were held in that range; Released how many
	// of them it counted alone (the others had a server span, or had been
	// released already).
	Held, Released uint64
}

// Run releases once per Interval until ctx ends, logging what it could not
// do: a release that fails is run again by a later period.
func (r *Releaser) Run(ctx context.Context) {
	t := time.NewTicker(r.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A release ends within its period, before the next one's
		// owner may start.
		rctx, cancel := context.WithTimeout(ctx, r.cfg.Interval)
		res, err := r.Release(rctx)
		cancel()
		switch {
		case err != nil && !errors.Is(err, context.Canceled):
			r.log.Warn("client views not released; the next period will", "error", err)
		case res.Released > 0:
			r.log.Debug("client views released", "from", res.From, "to", res.To, "held", res.Held, "released", res.Released)
		}
	}
}

// Released returns how many client views this process released, and how
// many releases it ran.
func (r *Releaser) Released() (views, runs uint64) { return r.released.Load(), r.runs.Load() }

// state is the release period by the store's clock.
type state struct {
	Now        time.Time `json:"now"`
	Epoch      uint64    `json:"epoch"`
	ReleasedTo time.Time `json:"released_to"`
	FirstHeld  time.Time `json:"first_held"`
}

// Release runs the release of the current period if this process claims
// it.
func (r *Releaser) Release(ctx context.Context) (Result, error) {
	var st []state
	if err := r.db.Query(ctx, store.Query{Name: "client_views_state", SQL: r.statement("state", "")},
		store.Params{}.Int("interval_ms", r.cfg.Interval.Milliseconds()), &st); err != nil {
		return Result{}, fmt.Errorf("cannot read the client views' release state: %w", err)
	}
	if len(st) != 1 {
		return Result{}, fmt.Errorf("cannot read the client views' release state: %d rows, want 1", len(st))
	}
	s := st[0]
	if s.FirstHeld.Unix() <= 0 {
		return Result{}, nil // no view waits
	}
	// The range starts past the last release, at the first view held
	// since: a first release, or one after a pause, skips the empty
	// stretch rather than stepping through it.
	from := s.ReleasedTo
	if first := s.FirstHeld.Add(-time.Millisecond); first.After(from) {
		from = first
	}
	to := s.Now.Add(-r.cfg.Hold)
	if to.Sub(from) > r.cfg.MaxWindow {
		to = from.Add(r.cfg.MaxWindow)
	}
	if !to.After(from) {
		return Result{}, nil
	}
	if ok, err := r.claim(ctx, s.Epoch); err != nil || !ok {
		return Result{}, err
	}
	res, err := r.release(ctx, from, to)
	if err != nil {
		return res, err
	}
	done := store.Params{}.Int("epoch", int64(s.Epoch)).String("owner", r.owner).Time("to", to)
	if err := r.db.Exec(ctx, r.statement("done", ""), done); err != nil {
		return res, fmt.Errorf("cannot record the release of client views up to %s: %w", to.Format(time.RFC3339Nano), err)
	}
	r.runs.Add(1)
	return res, nil
}

// release releases the client views held in (from, to].
func (r *Releaser) release(ctx context.Context, from, to time.Time) (Result, error) {
	res := Result{Claimed: true, From: from, To: to}
	window := store.Params{}.Time("from", from).Time("to", to)
	var w []struct {
		Held      uint64    `json:"held"`
		FirstTime time.Time `json:"first_time"`
		LastTime  time.Time `json:"last_time"`
	}
	if err := r.db.Query(ctx, store.Query{Name: "client_views_window", SQL: r.statement("window", "")}, window, &w); err != nil {
		return res, fmt.Errorf("cannot read the client views held from %s to %s: %w", from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), err)
	}
	if len(w) != 1 || w[0].Held == 0 {
		return res, nil
	}
	res.Held = w[0].Held
	p := window.Time("first", w[0].FirstTime).Time("last", w[0].LastTime)
	before, err := r.countAlone(ctx, p)
	if err != nil {
		return res, err
	}
	// The INSERT starts right after the epoch is read, within
	// schema.WriteGap.
	if _, err := r.guard.Begin(ctx); err != nil {
		return res, fmt.Errorf("cannot release client views: %w", err)
	}
	if err := r.db.Exec(ctx, r.statement("release", ""), p); err != nil {
		return res, fmt.Errorf("cannot release the %d client views held from %s to %s: %w",
			res.Held, from.Format(time.RFC3339Nano), to.Format(time.RFC3339Nano), err)
	}
	after, err := r.countAlone(ctx, p)
	if err != nil {
		return res, err
	}
	if after > before {
		res.Released = after - before
	}
	r.released.Add(res.Released)
	return res, nil
}

// claim claims period epoch, and reports whether this process owns it.
func (r *Releaser) claim(ctx context.Context, epoch uint64) (bool, error) {
	token := "client-views-" + strconv.FormatUint(epoch, 10)
	p := store.Params{}.Int("epoch", int64(epoch)).String("owner", r.owner)
	if err := r.db.Exec(ctx, r.statement("claim", token), p); err != nil {
		return false, fmt.Errorf("cannot claim the release period %d of client views: %w", epoch, err)
	}
	var rows []struct {
		Owner string `json:"owner"`
	}
	if err := r.db.Query(ctx, store.Query{Name: "client_views_owner", SQL: r.statement("owner", "")}, p, &rows); err != nil {
		return false, fmt.Errorf("cannot read the owner of the release period %d of client views: %w", epoch, err)
	}
	return len(rows) == 1 && rows[0].Owner == r.owner, nil
}

// countAlone counts the client views released with event times in the
// window's [first, last], in every tenant.
func (r *Releaser) countAlone(ctx context.Context, p store.Params) (uint64, error) {
	var rows []struct {
		N uint64 `json:"n"`
	}
	if err := r.db.Query(ctx, store.Query{Name: "client_views_alone", SQL: r.statement("alone", "")}, p, &rows); err != nil {
		return 0, fmt.Errorf("cannot count the released client views: %w", err)
	}
	if len(rows) != 1 {
		return 0, nil
	}
	return rows[0].N, nil
}
