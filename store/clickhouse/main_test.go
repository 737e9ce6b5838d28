package clickhouse_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clickhousetest.StopAll()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
