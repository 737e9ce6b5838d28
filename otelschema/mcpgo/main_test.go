package mcpgo_test

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/app"
	"github.com/mcpdrift/mcpdrift/internal/testing/apptest"
)

// shared is the package's one mcpdrift serve (see apptest).
var shared = apptest.NewServe("mcpgo-e2e")

func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }

// serve returns the shared mcpdrift serve.
func serve(t *testing.T) *app.Process { return shared.Get(t) }

// openStore returns the store of the shared mcpdrift serve, migrated.
func openStore(t *testing.T) app.Store { return serve(t).Store() }
