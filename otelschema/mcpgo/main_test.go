package mcpgo_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// chDB serves one data path per process: the package's tests share one
// store, opened on first use in a temporary directory and closed by
// TestMain before the goroutine-leak check.
var (
	storeOnce sync.Once
	shared    *embedded.Store
	storeErr  error
	storeDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		if err := shared.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the store:", err)
			code = 1
		}
	}
	if storeDir != "" {
		os.RemoveAll(storeDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// openStore returns the shared embedded store, migrated. It skips when
// libchdb is missing, unless MCPDRIFT_REQUIRE_CHDB=1.
func openStore(t *testing.T) *embedded.Store {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") == "1" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB=1: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	storeOnce.Do(func() {
		ctx := context.Background()
		if storeDir, storeErr = os.MkdirTemp("", "mcpgo-e2e-"); storeErr != nil {
			return
		}
		if shared, storeErr = embedded.Open(ctx, embedded.DefaultConfig(storeDir)); storeErr != nil {
			return
		}
		_, storeErr = shared.Migrate(ctx)
	})
	if storeErr != nil {
		t.Fatal(storeErr)
	}
	return shared
}
