package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// NativeWriter is what every backend offers besides store.Writer: the
// rows of a Native block its caller encoded (the ingester's replayer
// transcodes spooled records into one), stored as Write stores the same
// events under the same token.
type NativeWriter interface {
	WriteNative(ctx context.Context, token string, blk *chwire.NativeBlock) error
}

// testNativeBatch writes the same events through Write under one tenant
// and as a Native block through WriteNative under another: the events
// table must hold the same rows for both, every rollup fed from it the
// same counts, and the block written again under its token must be stored
// once, under another token twice, as Write's batches are
// (testRetriedBatchNarrow).
func (s *Suite) testNativeBatch(t *testing.T) {
	nw, ok := s.Store.(NativeWriter)
	if !ok {
		t.Fatalf("%T does not implement WriteNative", s.Store)
	}
	ctx := s.ctx(t)
	base := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	events := narrowBatch(base, 10)
	for i := range 10 {
		e := fullEvent(i, base)
		e.ID = uint64(len(events) + 1)
		switch i % 3 {
		case 0:
			e.Attributes = nil
		case 1:
			e.Attributes = map[string]string{"only": fmt.Sprint(i)}
		}
		events = append(events, e)
	}
	const byWrite, byNative = "native-write", "native-block"
	// Tokens of their own: a token names one batch's content, and the
	// block's rows are another tenant's.
	if err := s.Store.Write(ctx, store.Batch{Tenant: byWrite, Token: "native-write-1", Events: events}); err != nil {
		t.Fatal(err)
	}
	var blk chwire.NativeBlock
	blk.Encode(byNative, events)

	rows := func(tenant string) string {
		var got []eventRow
		q := store.Query{Name: "native_rows", SQL: "SELECT * EXCEPT audited, lower(hex(trace_id)) AS trace_id_hex, lower(hex(span_id)) AS span_id_hex FROM " +
			s.table("events") + " WHERE tenant = {tenant:String} ORDER BY event_id"}
		if err := s.Store.Query(ctx, q, store.Params{}.String("tenant", tenant), &got); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%+v", got)
	}
	counts := func(tenant string) [5]int {
		p := store.Params{}.String("tenant", tenant)
		return [5]int{
			s.count(t, "events", "tenant = {tenant:String}", p),
			s.count(t, "events", "tenant = {tenant:String} AND audited", p),
			s.count(t, "violation_candidates", "tenant = {tenant:String}", p),
			s.count(t, "propagation_events", "tenant = {tenant:String}", p),
			s.count(t, "adapter_call_candidates", "tenant = {tenant:String}", p),
		}
	}
	want := counts(byWrite)
	if want[0] != len(events) {
		t.Fatalf("Write stored %d events, want %d", want[0], len(events))
	}
	for range 2 {
		// Written twice under one token, as the replayer retries a group.
		if err := nw.WriteNative(ctx, "native-block-1", &blk); err != nil {
			t.Fatalf("WriteNative: %v", err)
		}
		if got := counts(byNative); got != want {
			t.Fatalf("events, audited, violation_candidates, propagation_events, adapter_call_candidates: WriteNative stored %v rows, Write %v", got, want)
		}
	}
	if got, w := rows(byNative), rows(byWrite); got != w {
		t.Errorf("the rows WriteNative stored differ from Write's:\n got %s\nwant %s", got, w)
	}
	if blk.Rows() != len(events) {
		t.Errorf("the block holds %d rows after WriteNative, want %d: it must be left as it was", blk.Rows(), len(events))
	}
	if err := nw.WriteNative(ctx, "native-block-2", &blk); err != nil {
		t.Fatal(err)
	}
	twice := want
	for i := range twice {
		twice[i] *= 2
	}
	if got := counts(byNative); got != twice {
		t.Errorf("after the block under another token: %v rows, want %v", got, twice)
	}
	var empty chwire.NativeBlock
	if err := nw.WriteNative(ctx, "", &empty); err != nil {
		t.Errorf("WriteNative of an empty block: %v", err)
	}
}
