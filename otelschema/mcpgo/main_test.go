package mcpgo_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/app/embeddedstore"
	"github.com/mcpdrift/mcpdrift/store/embedded"
)

// chDB serves one data path per process: the package's tests share one
// `mcpdrift serve`, the all-in-one as its command line assembles it
// (app.Start on the embedded store, with its spool and API), started on
// first use on a temporary data directory with loopback ports, and shut
// down by TestMain before the goroutine-leak check.
var (
	serveOnce sync.Once
	served    *app.Process
	serveErr  error
	serveDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if served != nil {
		if err := served.Shutdown(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping mcpdrift serve:", err)
			code = 1
		}
	}
	if serveDir != "" {
		os.RemoveAll(serveDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// serve returns the shared mcpdrift serve. It skips when libchdb is
// missing, unless MCPDRIFT_REQUIRE_CHDB=1.
func serve(t *testing.T) *app.Process {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") == "1" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB=1: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	serveOnce.Do(func() {
		if serveDir, serveErr = os.MkdirTemp("", "mcpgo-e2e-"); serveErr != nil {
			return
		}
		c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
		if serveErr = c.Parse([]string{"-data.dir", serveDir, "-otlp.grpc.listen", "127.0.0.1:0",
			"-otlp.http.listen", "127.0.0.1:0", "-api.listen", "127.0.0.1:0", "-log.level", "warn"}, io.Discard); serveErr != nil {
			return
		}
		served, serveErr = app.Start(context.Background(), c, "mcpgo-e2e", io.Discard, io.Discard)
	})
	if serveErr != nil {
		t.Fatal(serveErr)
	}
	return served
}

// openStore returns the store of the shared mcpdrift serve, migrated.
func openStore(t *testing.T) app.Store { return serve(t).Store() }
