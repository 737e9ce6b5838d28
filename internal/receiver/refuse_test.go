package receiver

import (
	"context"
	"testing"
)

// TestRefuseSpoolFull: a request the pipeline refuses for a full spool is
// answered 503 with Retry-After (ingest's TestSpoolFull fills the spool).
func TestRefuseSpoolFull(t *testing.T) {
	s := &Server{}
	if rf := s.refuse(context.Background(), ErrSpoolFull); rf.status != 503 || !rf.retry {
		t.Fatalf("ErrSpoolFull answered %+v, want 503 with Retry-After", rf)
	}
}
