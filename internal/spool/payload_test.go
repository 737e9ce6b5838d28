package spool

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// TestPeekPayloadIsWhatWasAppended reads records back as payloads, from
// the cache and from disk: each is the payload Append encoded, byte for
// byte, with its tenant, token and event count.
func TestPeekPayloadIsWhatWasAppended(t *testing.T) {
	for _, cacheEvents := range []int{0, 1000} {
		cfg := smallConfig(t.TempDir())
		cfg.SegmentBytes = 1 << 20
		cfg.CacheEvents = cacheEvents
		s := openSpool(t, cfg)
		var want []Record
		for i := range 6 {
			r := testRecord(i, 1+i*3)
			if _, err := s.Append(r); err != nil {
				t.Fatal(err)
			}
			want = append(want, r)
		}
		var buf []byte
		p, next, ok, err := s.PeekPayload(buf)
		for i := range want {
			if err != nil || !ok {
				t.Fatalf("cache %d, record %d: ok %v, %v", cacheEvents, i, ok, err)
			}
			w := appendPayload(nil, &want[i])
			if !bytes.Equal(p.Bytes, w) || p.Tenant != want[i].Tenant || p.Token != want[i].Token || p.Events != len(want[i].Events) {
				t.Fatalf("cache %d, record %d: %q %q %d events, bytes equal %v", cacheEvents, i, p.Tenant, p.Token, p.Events, bytes.Equal(p.Bytes, w))
			}
			buf = p.Bytes
			p, next, ok, err = s.PeekPayloadAt(next, buf)
		}
		if err != nil || ok {
			t.Fatalf("cache %d: after the last record ok %v, %v", cacheEvents, ok, err)
		}
		if reads := s.Stats().CacheReads; (reads > 0) != (cacheEvents > 0) {
			t.Errorf("cache %d: %d reads from the cache", cacheEvents, reads)
		}
	}
}

// TestPeekPayloadQuarantinesWhatDoesNotTranscode: a record whose
// checksum holds but whose events do not read (its last byte cut, the
// length and checksum made to match) is quarantined by PeekPayload, as
// Peek quarantines one that does not decode, and is a group boundary for
// PeekPayloadAt; the record after it is read.
func TestPeekPayloadQuarantinesWhatDoesNotTranscode(t *testing.T) {
	cfg := smallConfig(t.TempDir())
	cfg.SegmentBytes = 1 << 20
	s, err := Open(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	good := testRecord(1, 3)
	if _, err := s.Append(good); err != nil {
		t.Fatal(err)
	}
	s.Close()
	bad := testRecord(2, 3)
	p := appendPayload(nil, &bad)
	p = p[:len(p)-1]
	rec := append([]byte{}, magic[:]...)
	rec = binary.LittleEndian.AppendUint32(rec, uint32(len(p)))
	crc := crc32.Checksum(rec[4:8], castagnoli)
	rec = binary.LittleEndian.AppendUint32(rec, crc32.Update(crc, castagnoli, p))
	rec = append(rec, p...)
	seg := filepath.Join(cfg.Dir, segName(1))
	f, err := os.OpenFile(seg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(rec); err != nil {
		t.Fatal(err)
	}
	f.Close()

	s = openSpool(t, cfg)
	after := testRecord(3, 2)
	if _, err := s.Append(after); err != nil {
		t.Fatal(err)
	}
	first, next, ok, err := s.PeekPayload(nil)
	if err != nil || !ok || first.Token != "tok-1" {
		t.Fatalf("first: %q %v %v", first.Token, ok, err)
	}
	if _, _, _, err := s.PeekPayloadAt(next, nil); err != ErrGroupBoundary {
		t.Fatalf("PeekPayloadAt on the bad record: %v, want ErrGroupBoundary", err)
	}
	if err := s.Commit(next); err != nil {
		t.Fatal(err)
	}
	p2, _, ok, err := s.PeekPayload(nil)
	if err != nil || !ok || p2.Token != "tok-3" {
		t.Fatalf("after the bad record: %q %v %v, want tok-3", p2.Token, ok, err)
	}
	if q := s.Stats().Quarantined; q != 1 {
		t.Errorf("%d stretches quarantined, want 1", q)
	}
}
