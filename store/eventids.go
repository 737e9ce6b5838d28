package store

import (
	"context"
	_ "embed" // event_ids_since.sql
	"fmt"
	"strings"
	"time"
)

// EventIDLister lists the ids of the events a store holds. The ingester
// loads the recent ones at start-up into the set of ids it drops retried
// exports by, so that a client's retry of an export stored just before a
// restart is dropped too. Every backend implements it.
type EventIDLister interface {
	// EventIDsSince returns the ids of the tenant's events timed at or after
	// since, at most limit of them, the latest first.
	EventIDsSince(ctx context.Context, tenant string, since time.Time, limit int) ([]uint64, error)
}

//go:embed event_ids_since.sql
var eventIDsSinceSQL string

// EventIDsSince implements EventIDLister for a backend over q, whose
// tables live in database.
func EventIDsSince(ctx context.Context, q Querier, database, tenant string, since time.Time, limit int) ([]uint64, error) {
	query := Query{Name: "event_ids_since", SQL: strings.ReplaceAll(eventIDsSinceSQL, "{{.Database}}", database)}
	params := Params{}.String("tenant", tenant).Time("since", since).Int("limit", int64(max(limit, 0)))
	var rows []struct {
		ID uint64 `json:"event_id"`
	}
	if err := q.Query(ctx, query, params, &rows); err != nil {
		return nil, fmt.Errorf("cannot list recent event ids: %w", err)
	}
	ids := make([]uint64, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	return ids, nil
}
