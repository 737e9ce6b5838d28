package registry_test

import (
	"os"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/testing/clickhousetest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	clickhousetest.StopAll()
	os.Exit(code)
}
