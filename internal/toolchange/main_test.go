package toolchange

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves an MCP session or server running.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
