package app_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestSpoolReplayedFromMemory runs serve with its defaults — exports
// acknowledged once spooled, the replayer writing the spool to the store —
// and sends it five exports: every spooled batch reaches the store from
// the spool's memory, none is read back from disk, and /metrics says so.
func TestSpoolReplayedFromMemory(t *testing.T) {
	requireChDB(t)
	p := startServe(t, t.TempDir(), "-ingest.insert.max-delay", "10ms")
	for range 5 {
		exportCalls(t, p, calls(20, ""))
		time.Sleep(20 * time.Millisecond) // apart: several batches
	}
	in := p.Ingester()
	for deadline := time.Now().Add(30 * time.Second); in.Stats().EventsStored < 100; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 100 events stored after 30 s", in.Stats().EventsStored)
		}
	}
	st := in.Stats().Spool
	if st.Spooled < 2 || st.Replayed != st.Spooled || st.ReplayedFromMemory != st.Replayed {
		t.Fatalf("spooled %d batches, replayed %d, %d of them from memory; want every one from memory", st.Spooled, st.Replayed, st.ReplayedFromMemory)
	}
	body := scrape(t, p.API().Addr())
	if want := fmt.Sprintf("mcpdrift_spool_replayed_from_memory_total %d\n", st.Replayed); !strings.Contains(body, want) {
		t.Errorf("/metrics has no line %q", strings.TrimSpace(want))
	}
}
