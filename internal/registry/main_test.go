package registry_test

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/clickhousetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clickhousetest.StopAll()
	os.Exit(code)
}
