package ingest

import (
	"errors"
	"net/http"
	"testing"

	"github.com/mcpdrift/mcpdrift/internal/receiver"
	"github.com/mcpdrift/mcpdrift/store"
)

// TestSpoolReady checks that SpoolReady fails once the spool has less than
// a segment of room, as it does while the store is down, and passes
// without a spool.
func TestSpoolReady(t *testing.T) {
	if err := newServer(t, testConfig(), &sink{}, false).SpoolReady(); err != nil {
		t.Fatalf("without a spool: %v", err)
	}
	cfg := spoolConfig(t)
	cfg.Spool.MaxBytes, cfg.Spool.SegmentBytes = 8<<10, 4<<10
	w := &sink{fail: func(store.Batch) error { return errors.New("store down") }}
	s := newServer(t, cfg, w, true)
	if err := s.SpoolReady(); err != nil {
		t.Fatalf("empty spool: %v", err)
	}
	url := "http://" + s.HTTPAddr().String() + receiver.PathLogs
	for i := 0; s.SpoolReady() == nil; i++ {
		if i == 100 {
			t.Fatalf("spool still ready after %d exports: %+v", i, s.Stats().Spool)
		}
		if a := post(t, http.DefaultClient, url, "", drift{valid: 10}); a.status != http.StatusOK && a.status != http.StatusServiceUnavailable {
			t.Fatalf("export %d: %d", i, a.status)
		}
	}
	if err := s.SpoolReady(); !errors.Is(err, ErrSpoolNearlyFull) {
		t.Fatalf("SpoolReady = %v, want ErrSpoolNearlyFull", err)
	}
}
