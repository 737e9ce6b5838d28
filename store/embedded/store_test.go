package embedded_test

import (
	"context"
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/store/embedded"
	"github.com/mcpdrift/mcpdrift/store/storetest"
)

// requireLibrary skips when libchdb is absent, unless the environment asks
// for the real engine (make test and CI do).
func requireLibrary(t *testing.T) {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") != "" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB is set: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
}

func TestConformance(t *testing.T) {
	requireLibrary(t)
	cfg := embedded.DefaultConfig(t.TempDir())
	s, err := embedded.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	(&storetest.Suite{Store: s, Database: cfg.Schema.Database}).RunAll(t)
}
