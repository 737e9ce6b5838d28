// Package apptest shares one `mcpdrift serve` among the tests of a test
// binary: the all-in-one as its command line assembles it (app.Start on
// the embedded store, with its spool and API), started on first use on a
// temporary data directory with loopback ports. chDB serves one data path
// per process, so a package's tests cannot each start their own.
package apptest

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

// Serve is a shared mcpdrift serve, started by Get and stopped by Main.
type Serve struct {
	name string
	once sync.Once
	p    *app.Process
	err  error
	dir  string
}

// NewServe returns a shared serve named name (its data directory's prefix
// and its service name).
func NewServe(name string) *Serve { return &Serve{name: name} }

// Main runs the tests, stops the serve if one started, removes its data
// directory and, when the tests passed, fails on leaked goroutines. It
// returns the exit code for os.Exit.
func (s *Serve) Main(m *testing.M) int {
	code := m.Run()
	if s.p != nil {
		if err := s.p.Shutdown(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping mcpdrift serve:", err)
			code = 1
		}
	}
	if s.dir != "" {
		os.RemoveAll(s.dir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}

// Get returns the shared serve, starting it on first use. It skips when
// libchdb is missing, unless MCPDRIFT_REQUIRE_CHDB=1.
func (s *Serve) Get(t testing.TB) *app.Process {
	t.Helper()
	if _, err := embedded.LibraryPath(); err != nil {
		if os.Getenv("MCPDRIFT_REQUIRE_CHDB") == "1" {
			t.Fatalf("MCPDRIFT_REQUIRE_CHDB=1: %v", err)
		}
		t.Skipf("embedded store unavailable: %v", err)
	}
	s.once.Do(func() {
		if s.dir, s.err = os.MkdirTemp("", s.name+"-"); s.err != nil {
			return
		}
		c := app.DefaultConfig(app.RoleServe, "mcpdrift serve", embeddedstore.New())
		if s.err = c.Parse([]string{"-data.dir", s.dir, "-otlp.grpc.listen", "127.0.0.1:0",
			"-otlp.http.listen", "127.0.0.1:0", "-api.listen", "127.0.0.1:0", "-log.level", "warn"}, io.Discard); s.err != nil {
			return
		}
		s.p, s.err = app.Start(context.Background(), c, s.name, io.Discard, io.Discard)
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.p
}
