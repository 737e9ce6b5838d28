package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// floodCallTimeout bounds one export of the flood, so that the flood ends
// however the ingester behaves. An export that times out is counted as
// "other" and makes the stored count unverifiable (the run fails).
const floodCallTimeout = time.Minute

// floodCounts are the flood's answers by kind.
type floodCounts struct {
	// Requests is every export sent and answered.
	Requests int64 `json:"requests"`
	// OK is the exports answered with success (HTTP 200's equivalent).
	OK int64 `json:"ok"`
	// Unavailable is the exports refused with UNAVAILABLE (HTTP 503's
	// equivalent); UnavailableRetry is those among them that carried a
	// RetryInfo detail (Retry-After's equivalent).
	Unavailable      int64 `json:"unavailable"`
	UnavailableRetry int64 `json:"unavailable_retry_info"`
	// Exhausted is the exports refused with RESOURCE_EXHAUSTED (HTTP 429's
	// equivalent).
	Exhausted int64 `json:"resource_exhausted"`
	// Other is every other answer, by gRPC code.
	Other map[string]int64 `json:"other,omitempty"`
	// OfferedEvents is the log records of every export sent;
	// AcceptedEvents those of the exports answered with success, less the
	// records rejected through partial success (Rejected).
	OfferedEvents  int64 `json:"offered_events"`
	AcceptedEvents int64 `json:"accepted_events"`
	Rejected       int64 `json:"rejected"`
	// RanOut is true when every request was accepted before the time was
	// up: the flood ended early.
	RanOut bool `json:"ran_out,omitempty"`
}

// countsPath is where the parent writes the records per request of a
// requests file, as a JSON array, for the flood sender.
func countsPath(requestsPath string) string { return requestsPath + ".counts.json" }

// writeCounts writes rs's records per request next to its file.
func writeCounts(rs *requestSet) error {
	data, err := json.Marshal(rs.events)
	if err != nil {
		return fmt.Errorf("cannot encode the records per request: %w", err)
	}
	if err := os.WriteFile(countsPath(rs.path), data, 0o644); err != nil {
		return fmt.Errorf("cannot write the records per request: %w", err)
	}
	return nil
}

// Request states of the flood.
const (
	reqFree int32 = iota
	reqInFlight
	reqAccepted
)

// flood sends the requests on conns for d, ignoring every retry hint: as
// soon as a stream has its answer it sends the next request not yet
// accepted, cycling through the set, so that a refused request is sent
// again later and an accepted one never is (every event accepted is then
// a distinct event, and the store's count must equal the accepted count).
// It stops starting requests when d is up, or when every request is
// accepted, and waits for the answers in flight.
func flood(conns []*grpc.ClientConn, reqs [][]byte, events []int, d time.Duration) (floodCounts, error) {
	if len(events) != len(reqs) {
		return floodCounts{}, fmt.Errorf("%d record counts for %d requests", len(events), len(reqs))
	}
	var (
		state    = make([]atomic.Int32, len(reqs))
		cursor   atomic.Int64
		accepted atomic.Int64
		mu       sync.Mutex
		total    = floodCounts{Other: map[string]int64{}}
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	deadline := time.Now().Add(d)
	// take claims the next request not accepted nor in flight, or returns -1
	// after a whole turn without one.
	take := func() int {
		for range len(reqs) {
			i := int(cursor.Add(1)-1) % len(reqs)
			if state[i].CompareAndSwap(reqFree, reqInFlight) {
				return i
			}
		}
		return -1
	}
	for _, c := range conns {
		wg.Go(func() {
			var (
				local = floodCounts{Other: map[string]int64{}}
				resp  []byte
			)
			defer func() {
				mu.Lock()
				defer mu.Unlock()
				total.add(local)
			}()
			for time.Now().Before(deadline) {
				i := take()
				if i < 0 {
					return
				}
				req := reqs[i]
				resp = resp[:0]
				ctx, cancel := context.WithTimeout(context.Background(), floodCallTimeout)
				err := c.Invoke(ctx, exportMethod, &req, &resp, grpc.WaitForReady(true))
				cancel()
				local.Requests++
				local.OfferedEvents += int64(events[i])
				if err != nil {
					st := status.Convert(err)
					switch st.Code() {
					case codes.Unavailable:
						local.Unavailable++
						for _, d := range st.Details() {
							if _, ok := d.(*errdetails.RetryInfo); ok {
								local.UnavailableRetry++
								break
							}
						}
					case codes.ResourceExhausted:
						local.Exhausted++
					default:
						local.Other[st.Code().String()]++
					}
					state[i].Store(reqFree)
					continue
				}
				state[i].Store(reqAccepted)
				accepted.Add(1)
				local.OK++
				n := int64(events[i])
				if len(resp) > 0 {
					r := plogotlp.NewExportResponse()
					if err := r.UnmarshalProto(resp); err != nil {
						errOnce.Do(func() { firstErr = fmt.Errorf("cannot unmarshal response of %d bytes: %w", len(resp), err) })
						return
					}
					rej := r.PartialSuccess().RejectedLogRecords()
					local.Rejected += rej
					n -= rej
				}
				local.AcceptedEvents += n
			}
		})
	}
	wg.Wait()
	total.RanOut = accepted.Load() == int64(len(reqs))
	if len(total.Other) == 0 {
		total.Other = nil
	}
	return total, firstErr
}

// add adds o's counts to c's.
func (c *floodCounts) add(o floodCounts) {
	c.Requests += o.Requests
	c.OK += o.OK
	c.Unavailable += o.Unavailable
	c.UnavailableRetry += o.UnavailableRetry
	c.Exhausted += o.Exhausted
	c.OfferedEvents += o.OfferedEvents
	c.AcceptedEvents += o.AcceptedEvents
	c.Rejected += o.Rejected
	for k, v := range o.Other {
		c.Other[k] += v
	}
}

// readCounts reads the records per request written by writeCounts.
func readCounts(requestsPath string) ([]int, error) {
	data, err := os.ReadFile(countsPath(requestsPath))
	if err != nil {
		return nil, fmt.Errorf("cannot read the records per request: %w", err)
	}
	var events []int
	if err := json.Unmarshal(data, &events); err != nil {
		return nil, fmt.Errorf("cannot parse the records per request: %w", err)
	}
	return events, nil
}
