package simulate_test

import (
	"fmt"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
)

// Generate runs the simulation without OTLP, as a benchmark loading a store
// does; the ledger counts what it generated.
func ExampleGenerate() {
	cfg := simulate.DefaultConfig()
	cfg.Start = time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	cfg.Events = 20_000
	calls := 0
	ledger, err := simulate.Generate(cfg, func(r *simulate.Record) error {
		if r.Event.Name.String() == "mcp.drift.call" {
			calls++
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println(ledger.Events, int64(calls) == ledger.ByEvent["mcp.drift.call"])
	// Output: 20000 true
}
