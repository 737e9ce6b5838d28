package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/mcpdrift/mcpdrift/internal/simulate"
	"github.com/mcpdrift/mcpdrift/otelschema"
)

// requestSet is the OTLP/protobuf export requests of a run, marshalled once
// into a file of frames (a 4-byte little-endian length, then the request)
// and mapped into memory. Mapped, the requests are outside the Go heap: they
// neither slow the garbage collector down nor make it lazier, so the
// ingester's GC cost is what a real one pays. The sender child maps the
// same file.
type requestSet struct {
	path   string
	data   []byte   // the mapped file
	reqs   [][]byte // the requests, slices of data
	events []int    // records per request
	total  int      // records in all requests
}

// resourceKey identifies one simulated service resource.
type resourceKey struct {
	service, version, instance, namespace, environment string
}

// pending is the request being filled for one resource.
type pending struct {
	open bool // a request is being filled
	ld   plog.Logs
	lrs  plog.LogRecordSlice
}

// buildRequests generates events from the simulator and encodes them into
// requests of batch records, one resource (and one scope) per request, as
// an SDK's exporter sends them, then packs what is left of each resource
// into requests of several resources; only the last request may be smaller
// than batch. It writes them to path and maps the file.
func buildRequests(path string, events, batch int, seed uint64) (*requestSet, error) {
	simCfg := simulate.DefaultConfig()
	simCfg.Seed = seed
	simCfg.Events = int64(events)
	// A fixed end, so that runs are reproducible within the ingester's
	// MaxPast and MaxFuture for the next few hours.
	simCfg.Start = time.Now().Add(-simCfg.Span).Truncate(time.Hour)
	gen, err := simulate.NewGenerator(simCfg)
	if err != nil {
		return nil, fmt.Errorf("cannot create simulator: %w", err)
	}

	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot create requests file: %w", err)
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	rs := &requestSet{path: path}
	var frame [4]byte
	flush := func(p *pending) error {
		if !p.open {
			return nil
		}
		p.open = false
		n := p.ld.LogRecordCount()
		data, err := plogotlp.NewExportRequestFromLogs(p.ld).MarshalProto()
		if err != nil {
			return fmt.Errorf("cannot marshal request of %d records: %w", n, err)
		}
		binary.LittleEndian.PutUint32(frame[:], uint32(len(data)))
		if _, err := w.Write(frame[:]); err != nil {
			return fmt.Errorf("cannot write requests file: %w", err)
		}
		if _, err := w.Write(data); err != nil {
			return fmt.Errorf("cannot write requests file: %w", err)
		}
		rs.events = append(rs.events, n)
		rs.total += n
		return nil
	}

	byResource := map[resourceKey]*pending{}
	var order []*pending // resources in order of first appearance
	var r simulate.Record
	for gen.Next(&r) {
		e := &r.Event
		key := resourceKey{e.Service, e.ServiceVersion, e.ServiceInstance, e.ServiceNamespace, e.Environment}
		p := byResource[key]
		if p == nil {
			p = &pending{}
			byResource[key] = p
			order = append(order, p)
		}
		if !p.open {
			p.open = true
			p.ld = plog.NewLogs()
			rl := p.ld.ResourceLogs().AppendEmpty()
			otelschema.EncodeResource(e, rl.Resource())
			sl := rl.ScopeLogs().AppendEmpty()
			sl.Scope().SetName(simulate.ScopeName)
			p.lrs = sl.LogRecords()
			p.lrs.EnsureCapacity(batch)
		}
		otelschema.EncodeLogRecord(e, p.lrs.AppendEmpty())
		if p.lrs.Len() == batch {
			if err := flush(p); err != nil {
				return nil, err
			}
		}
	}
	// What is left of each resource is packed into full requests of
	// several resources, as a collector batching across resources sends
	// them, so that only the last request is smaller than batch.
	packed := &pending{}
	for _, p := range order {
		if !p.open {
			continue
		}
		rl := p.ld.ResourceLogs().At(0)
		for i, n := 0, p.lrs.Len(); i < n; {
			if !packed.open {
				packed.open = true
				packed.ld = plog.NewLogs()
				packed.lrs = plog.NewLogRecordSlice()
			}
			k := min(batch-packed.ld.LogRecordCount(), n-i)
			prl := packed.ld.ResourceLogs().AppendEmpty()
			rl.Resource().CopyTo(prl.Resource())
			psl := prl.ScopeLogs().AppendEmpty()
			rl.ScopeLogs().At(0).Scope().CopyTo(psl.Scope())
			for j := i; j < i+k; j++ {
				p.lrs.At(j).CopyTo(psl.LogRecords().AppendEmpty())
			}
			i += k
			packed.lrs = psl.LogRecords()
			if packed.ld.LogRecordCount() == batch {
				if err := flush(packed); err != nil {
					return nil, err
				}
			}
		}
	}
	if err := flush(packed); err != nil {
		return nil, err
	}
	if rs.total != events {
		return nil, fmt.Errorf("simulator generated %d events, want %d", rs.total, events)
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("cannot write requests file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("cannot write requests file: %w", err)
	}
	data, reqs, err := mapRequests(path)
	if err != nil {
		return nil, err
	}
	if len(reqs) != len(rs.events) {
		unmap(data)
		return nil, fmt.Errorf("requests file holds %d requests, want %d", len(reqs), len(rs.events))
	}
	rs.data, rs.reqs = data, reqs
	return rs, nil
}

// bytes returns the size of all requests.
func (rs *requestSet) bytes() int { return len(rs.data) - 4*len(rs.reqs) }

// close unmaps the requests and removes the file.
func (rs *requestSet) close() error {
	unmap(rs.data)
	rs.data, rs.reqs = nil, nil
	return os.Remove(rs.path)
}

// mapRequests maps a requests file, its pages populated, and splits it into
// requests.
func mapRequests(path string) ([]byte, [][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot open requests file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("cannot stat requests file: %w", err)
	}
	if st.Size() == 0 {
		return nil, nil, errors.New("requests file is empty")
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, fmt.Errorf("cannot map requests file of %d bytes: %w", st.Size(), err)
	}
	var reqs [][]byte
	for rest := data; len(rest) > 0; {
		if len(rest) < 4 {
			unmap(data)
			return nil, nil, fmt.Errorf("requests file: truncated frame at offset %d", len(data)-len(rest))
		}
		n := int(binary.LittleEndian.Uint32(rest))
		if len(rest)-4 < n {
			unmap(data)
			return nil, nil, fmt.Errorf("requests file: frame of %d bytes at offset %d past the end", n, len(data)-len(rest))
		}
		reqs = append(reqs, rest[4:4+n:4+n])
		rest = rest[4+n:]
	}
	return data, reqs, nil
}

func unmap(data []byte) {
	if data != nil {
		_ = syscall.Munmap(data)
	}
}
