// Package store defines how mcpdrift persists drift events and reads reports
// back. The interfaces are small and domain-typed; each backend lives in its
// own package (store/embedded for chDB, the default) and its driver types
// never leave it. store/storetest holds the conformance suite that every
// backend runs.
package store

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// DefaultTenant is the tenant of a deployment that runs without tokens.
const DefaultTenant = "default"

// Batch is a set of events written together.
type Batch struct {
	// Tenant owns every event of the batch.
	Tenant string
	// Token identifies the batch's content. A backend may use it to store a
	// batch that is written twice only once; empty means "no token".
	Token string
	// Events are the validated events to store.
	Events []otelschema.Event
}

// UniqueToken returns a deduplication token that no other insert has:
// "untokened:" and 128 random bits. A backend inserts a batch without a
// token under one of its own, so that it is stored whatever was stored
// before, as "no token" promises. Turning deduplication off instead is
// spelled differently across ClickHouse versions (since 26.2 the session
// setting deduplicate_insert overrides insert_deduplicate = 0) and makes
// a table with a deduplication window hash every block of the insert.
func UniqueToken() string { return "untokened:" + rand.Text() }

// Writer persists drift events.
type Writer interface {
	// Write stores the batch. It returns nil only once every event of the
	// batch is durable — committed to the store together with the rollups fed
	// by it — and an error otherwise, in which case none, some or all of the
	// events may be stored: the caller retries the same batch. Errors that a
	// retry cannot fix are marked with ErrPermanent.
	Write(ctx context.Context, b Batch) error
}

// Query is a named SQL statement in the ClickHouse dialect. Its parameters
// are written as {name:Type} placeholders and bound by the engine, never
// interpolated into the text.
type Query struct {
	// Name identifies the query in errors, logs and metrics.
	Name string
	// SQL is the statement, without a FORMAT clause.
	SQL string
}

// Querier runs read queries.
type Querier interface {
	// Query runs q with params bound to its placeholders and appends each
	// result row to dest, a pointer to a slice of structs whose fields carry
	// `json` tags named after the result columns. Integers decode into Go
	// integers, DateTime and DateTime64 into time.Time (UTC), Map(String,
	// String) into map[string]string, arrays into slices.
	Query(ctx context.Context, q Query, params Params, dest any) error
}

// FieldIndex maps result columns to the fields of elem, the struct type of a
// Querier's dest elements: by `json` tag, or without one by field name, an
// exact match first and then case-insensitively, as encoding/json does.
// Fields of embedded structs are promoted; fields tagged "-" are ignored. A
// column without a field gets a nil index and is skipped.
func FieldIndex(elem reflect.Type, columns []string) ([][]int, error) {
	if elem.Kind() != reflect.Struct {
		return nil, fmt.Errorf("dest elements must be structs, not %s", elem)
	}
	byName := map[string][]int{}
	byFold := map[string][]int{}
	for _, f := range reflect.VisibleFields(elem) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			tagName, _, _ := strings.Cut(tag, ",")
			if tagName == "-" {
				continue
			}
			if tagName != "" {
				name = tagName
			}
		}
		if _, dup := byName[name]; !dup {
			byName[name] = f.Index
		}
		if _, dup := byFold[strings.ToLower(name)]; !dup {
			byFold[strings.ToLower(name)] = f.Index
		}
	}
	out := make([][]int, len(columns))
	for i, c := range columns {
		if idx, ok := byName[c]; ok {
			out[i] = idx
		} else if idx, ok := byFold[strings.ToLower(c)]; ok {
			out[i] = idx
		}
	}
	return out, nil
}

// Migrator brings the schema up to date.
type Migrator interface {
	// Migrate applies every migration not yet recorded as applied, in order,
	// and returns the versions it applied. It is idempotent: a second call
	// applies nothing and returns no versions.
	Migrate(ctx context.Context) ([]int, error)
}

// Store is a complete backend.
type Store interface {
	Writer
	Querier
	Migrator
	// Ping reports whether the store can serve queries and writes: on a
	// cluster, whether every shard can. An unreachable store's error wraps
	// ErrUnavailable.
	Ping(ctx context.Context) error
	// Close releases the store. Calls after Close return ErrClosed.
	Close() error
}

// Sentinel errors.
var (
	// ErrPermanent marks errors that retrying the same call cannot fix,
	// such as a batch the store refuses to parse.
	ErrPermanent = errors.New("permanent store error")
	// ErrClosed is returned by calls on a closed store.
	ErrClosed = errors.New("store is closed")
	// ErrUnavailable marks errors of a store that cannot be reached now —
	// a server down or unreachable, a shard of a cluster down — which a
	// later retry may not meet.
	ErrUnavailable = errors.New("store unavailable")
	// ErrInUse is returned when another process owns the data directory.
	ErrInUse = errors.New("data directory in use")
)
