package embedded_test

import (
	"context"
	"testing"

	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// TestStartupRunsNoDDL counts, through a statement hook, what a start-up
// after the first runs on the embedded store: no statement while the
// schema and the retention are as configured.
func TestStartupRunsNoDDL(t *testing.T) {
	requireLibrary(t)
	cfg := embedded.DefaultConfig(t.TempDir())
	s, err := embedded.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storetest.CheckStartupRunsNoDDL(t, s, cfg.Schema)
}
