package main

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/mcpdrift/mcpdrift/store"
)

// ViewCost is one materialised view's share of the ClickHouse server's
// work during the ingest role's run (c), from system.query_views_log: what
// the redesign of the rollups weighs each view by.
type ViewCost struct {
	View string `json:"view"`
	// Runs is the inserts the view ran on; CPU its pipeline's user +
	// system time, in seconds; Rows the rows it wrote.
	Runs uint64  `json:"runs"`
	CPU  float64 `json:"cpu_s"`
	Rows uint64  `json:"rows"`
}

//go:embed views.sql
var viewsSQL string

// viewCosts reads each view's cost from a server whose logs are flushed.
func viewCosts(ctx context.Context, q store.Querier) ([]ViewCost, error) {
	var rows []struct {
		View  string `json:"view"`
		Runs  uint64 `json:"runs"`
		CPUus uint64 `json:"cpu_us"`
		Rows  uint64 `json:"rows"`
	}
	if err := q.Query(ctx, store.Query{Name: "bench_view_costs", SQL: viewsSQL}, nil, &rows); err != nil {
		return nil, fmt.Errorf("cannot read the views' costs: %w", err)
	}
	out := make([]ViewCost, len(rows))
	for i, r := range rows {
		out[i] = ViewCost{View: strings.TrimPrefix(r.View, "mcpdrift."), Runs: r.Runs, CPU: float64(r.CPUus) / 1e6, Rows: r.Rows}
	}
	return out, nil
}

// writeViewCosts prints the views' costs per event stored, each with its
// share of the server process's CPU.
func writeViewCosts(w io.Writer, views []ViewCost, events int, serverCPU float64) {
	if len(views) == 0 || events == 0 {
		return
	}
	var total float64
	for _, v := range views {
		total += v.CPU
	}
	fmt.Fprintf(w, "(c) ingest role → server: the materialised views (system.query_views_log), %.2f µs/event in all, %.0f %% of the server's CPU\n",
		total*1e6/float64(events), 100*total/serverCPU)
	tw := newTabWriter(w)
	fmt.Fprintln(tw, "view\tCPU µs/event\tshare of the views\trows written\tinserts")
	for _, v := range views {
		fmt.Fprintf(tw, "%s\t%.3f\t%.0f %%\t%d\t%d\n", v.View, v.CPU*1e6/float64(events), 100*v.CPU/total, v.Rows, v.Runs)
	}
	tw.Flush()
}
