package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/internal/redact"
	"github.com/mcpdrift/mcpdrift/otelschema"
	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// Floors is the engine's own cost of storing the rows the ingest runs
// store: run (c)'s floors.
type Floors struct {
	// Raw is the insert into a copy of the events table that no view
	// reads; Views the insert into events_in, every view included.
	Raw   *Phase `json:"raw_table"`
	Views *Phase `json:"all_views"`
	// Inserts is the INSERTs of each, of at most Block events, each one
	// Native block, or blocks of SubBlock events when it is positive
	// (-floor.block-events).
	Inserts  int `json:"inserts"`
	Block    int `json:"block_events"`
	SubBlock int `json:"sub_block_events,omitempty"`
	// Views counts the materialised views the second insert feeds.
	ViewCount int `json:"views"`
}

// runFloors measures the floors of run (c) in a fresh embedded store. The
// requests are decoded and redacted as serve does (its decode limits, its
// redaction rules unless the run turns redaction off), Native-encoded as
// the store encodes its inserts, in files of cfg.InsertEvents events (the
// most run (c)'s ingester groups into one insert), before
// anything is measured; then the engine inserts each file itself (INSERT …
// SELECT FROM file(…, 'Native')), with no Go code between the blocks and
// the tables: first into a copy of the events table with no view, then
// into events_in with every view. CPU is the process's from the first
// insert of each until it is idle again (background merges included).
func runFloors(ctx context.Context, cfg Config, rs *requestSet, tmp string, rep *Report) error {
	c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
	if err := c.Parse([]string{"-data.dir=" + filepath.Join(tmp, "unused")}, os.Stderr); err != nil {
		return err
	}
	var red *redact.Redactor
	if cfg.Redact {
		var err error
		if red, err = c.Redact.Build(); err != nil {
			return err
		}
	}
	files, err := writeNativeFiles(filepath.Join(tmp, "floor"), rs, cfg.InsertEvents, cfg.FloorBlock, otelschema.Decoder{Limits: c.Ingest.Limits}, red)
	if err != nil {
		return err
	}
	defer func() {
		for _, f := range files {
			os.Remove(f)
		}
	}()

	dir, err := os.MkdirTemp(cfg.TempDir, "mcpdrift-bench-floor-")
	if err != nil {
		return fmt.Errorf("cannot create store directory: %w", err)
	}
	defer os.RemoveAll(dir)
	st, db, err := openStore(ctx, dir, rep)
	if err != nil {
		return err
	}
	defer st.Close()
	var views []struct {
		N int `json:"n"`
	}
	q := store.Query{Name: "bench_floor_views", SQL: "SELECT count() AS n FROM system.tables WHERE database = {db:String} AND engine = 'MaterializedView'"}
	if err := st.Query(ctx, q, store.Params{}.String("db", db), &views); err != nil || len(views) != 1 {
		return errors.Join(fmt.Errorf("cannot count the views"), err)
	}
	if err := st.Exec(ctx, "CREATE TABLE "+db+".floor_events AS "+db+".events", nil); err != nil {
		return fmt.Errorf("cannot create the raw table's copy: %w", err)
	}
	// The events table holds every column of events_in (the call's
	// arguments too, since version 15: the audit reads them there), so the
	// raw table is the same rows, each stored once, with no view.
	raw := strings.Trim(store.InsertColumns, "()")
	f := &Floors{Inserts: len(files), Block: cfg.InsertEvents, SubBlock: cfg.FloorBlock, ViewCount: views[0].N}
	insertAll := func(sql string) (*Phase, error) {
		t0 := time.Now()
		var settle time.Duration
		u, err := measure(func() error {
			for _, file := range files {
				if err := st.Exec(ctx, sql, store.Params{}.String("file", file)); err != nil {
					return fmt.Errorf("cannot insert %s: %w", filepath.Base(file), err)
				}
			}
			t1 := time.Now()
			waitIdle(ctx)
			settle = time.Since(t1)
			return ctx.Err()
		})
		if err != nil {
			return nil, err
		}
		p := phaseOf(usage{CPU: u.CPU, SysCPU: u.SysCPU, Wall: time.Since(t0) - settle, GoCPU: u.GoCPU, Faults: u.Faults, GoFaults: u.GoFaults}, rs.total, nil)
		p.Settle = settle.Seconds()
		return p, nil
	}
	if f.Raw, err = insertAll("INSERT INTO " + db + ".floor_events (" + raw + ") SELECT " + raw +
		" FROM file({file:String}, 'Native') SETTINGS optimize_on_insert = 0"); err != nil {
		return fmt.Errorf("raw table floor: %w", err)
	}
	if f.Views, err = insertAll("INSERT INTO " + db + ".events_in " + store.InsertColumns +
		" SELECT * FROM file({file:String}, 'Native') SETTINGS optimize_on_insert = 0"); err != nil {
		return fmt.Errorf("all-views floor: %w", err)
	}
	for _, t := range []string{"floor_events", "events"} {
		var n []struct {
			N uint64 `json:"n"`
		}
		q := store.Query{Name: "bench_floor_count", SQL: "SELECT count() AS n FROM " + db + "." + t}
		if err := st.Query(ctx, q, nil, &n); err != nil || len(n) != 1 {
			return errors.Join(fmt.Errorf("cannot count %s", t), err)
		}
		if n[0].N != uint64(rs.total) {
			return fmt.Errorf("floor: %s holds %d events, %d were inserted", t, n[0].N, rs.total)
		}
	}
	rep.Floors = f
	return nil
}

// writeNativeFiles decodes the requests with dec, redacts the events with
// red when it is not nil, and writes them as Native blocks to files
// prefix-N.native, which it returns: as the ingester groups spooled
// batches, whole requests, at most block events in a file unless one
// request holds more. A file is one Native block, as the store sends an
// insert, or, with sub > 0, consecutive blocks of sub events.
func writeNativeFiles(prefix string, rs *requestSet, block, sub int, dec otelschema.Decoder, red *redact.Redactor) ([]string, error) {
	var (
		files  []string
		events []otelschema.Event
		blk    chwire.NativeBlock
	)
	flush := func() error {
		if len(events) == 0 {
			return nil
		}
		if red != nil {
			red.Events(events)
		}
		name := fmt.Sprintf("%s-%d.native", prefix, len(files))
		out, err := os.Create(name)
		if err != nil {
			return fmt.Errorf("cannot create %s: %w", name, err)
		}
		files = append(files, name)
		per := len(events)
		if sub > 0 {
			per = sub
		}
		for lo := 0; lo < len(events); lo += per {
			blk.Encode(store.DefaultTenant, events[lo:min(lo+per, len(events))])
			for _, c := range blk.Chunks() {
				if _, err := out.Write(c); err != nil {
					out.Close()
					return fmt.Errorf("cannot write %s: %w", name, err)
				}
			}
		}
		events = events[:0]
		return out.Close()
	}
	var next []otelschema.Event
	for i, b := range rs.reqs {
		var err error
		if next, _, err = dec.DecodeLogsProto(b, next[:0]); err != nil {
			return files, fmt.Errorf("cannot decode request %d of %d bytes: %w", i, len(b), err)
		}
		if len(events)+len(next) > block {
			if err := flush(); err != nil {
				return files, err
			}
		}
		events = append(events, next...)
	}
	return files, flush()
}
