package logging

import (
	"bytes"
	"strings"
	"testing"
)

func TestNew(t *testing.T) {
	f := func(level, format string, wantErr string, wantOut string) {
		t.Helper()
		var buf bytes.Buffer
		log, err := New(&buf, level, format)
		if wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), wantErr) {
				t.Fatalf("New(%q, %q) error = %v, want one naming %s", level, format, err, wantErr)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		log.Debug("hidden")
		log.Warn("shown", "k", "v")
		if got := buf.String(); !strings.Contains(got, wantOut) || strings.Contains(got, "hidden") {
			t.Fatalf("New(%q, %q) wrote %q, want %q and no debug line", level, format, got, wantOut)
		}
	}
	f("info", "text", "", "msg=shown k=v")
	f("warn", "json", "", `"msg":"shown","k":"v"`)
	f("loud", "text", "log.level", "")
	f("info", "xml", "log.format", "")
}
