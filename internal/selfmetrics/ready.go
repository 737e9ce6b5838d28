package selfmetrics

import (
	"context"
	"errors"
	"fmt"

	"github.com/mcpdrift/mcpdrift/store"
	"github.com/mcpdrift/mcpdrift/store/schema"
)

// ErrMigrationsPending is returned by the MigrationsApplied check when the
// store lacks a migration the binary embeds.
var ErrMigrationsPending = errors.New("schema migrations not applied")

// MigrationsApplied returns a readiness check that passes once the store's
// migrations table records every migration embedded in this binary for
// opts.
func MigrationsApplied(q store.Querier, opts schema.Options) func(context.Context) error {
	return func(ctx context.Context) error {
		want, err := schema.Migrations(opts)
		if err != nil {
			return fmt.Errorf("cannot list the embedded migrations: %w", err)
		}
		var rows []struct {
			Version int `json:"version"`
		}
		qq := store.Query{Name: "schema_migrations_applied", SQL: "SELECT DISTINCT version FROM " + opts.Database + ".schema_migrations"}
		if err := q.Query(ctx, qq, nil, &rows); err != nil {
			return fmt.Errorf("%w: cannot read %s.schema_migrations: %w", ErrMigrationsPending, opts.Database, err)
		}
		have := make(map[int]bool, len(rows))
		for _, r := range rows {
			have[r.Version] = true
		}
		var missing []int
		for _, m := range want {
			if !have[m.Version] {
				missing = append(missing, m.Version)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("%w: %d of %d missing (versions %v): run mcpdrift migrate, or the api with -migrate", ErrMigrationsPending, len(missing), len(want), missing)
		}
		return nil
	}
}
