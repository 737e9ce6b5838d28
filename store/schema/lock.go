package schema

import (
	"context"
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpdrift/mcpdrift/store"
)

// # Migrating while ingest runs
//
// The api applies migrations while ingest processes keep inserting, and a
// migration may drop and create a view that an insert into events_in goes
// through (migrations 8 to 10 do), or fill a rollup from the events with
// an INSERT … SELECT that an insert landing meanwhile would be counted
// twice in. Released migrations cannot change (their checksums are
// recorded), so the migrator and the writers agree instead, through the
// table schema_lock, on when nothing is inserted:
//
//   - its rows are numbered by seq, and max(seq) is the schema epoch: odd
//     while a migrator holds the lock, even otherwise. A migrator claims the
//     next odd number with an INSERT whose insert_deduplication_token is
//     the number, so that of two migrators claiming it one row is stored,
//     and the one it names holds the lock (a compare-and-set: the engine
//     stores one block per token, on a replicated table through Keeper);
//     it releases it by writing the next even number;
//   - a writer reads the epoch before each insert and inserts only when it
//     is even, and sends the INSERT within WriteGap of that read (it reads
//     again otherwise). While the epoch is odd the write fails with
//     ErrMigrating, so that the writer keeps the batch and writes it again
//     under its token once the migration is over;
//   - the migrator, once it holds the lock and every replica has its row,
//     waits WriteGap twice over, so that an insert whose writer read the
//     even epoch has reached the server, then for every INSERT into
//     events_in that runs (system.processes, on every replica) to end,
//     before its first statement. An insert that began before the claim is
//     thus stored whole before the first DDL, and is acknowledged: written
//     again, it would be counted twice by a rollup that the migration
//     rebuilds from the events (the new table has not seen its token). A
//     store with no migration recorded has no events_in, and is not
//     drained.
//
// The bound this rests on: the server starts an INSERT within WriteGap of
// the moment its writer sent it. An INSERT that a network holds longer
// reaches a store the migration may be changing.
//
// A migrator that holds the lock writes a heartbeat row (its seq again)
// every LockLease/4; a lock whose last row is older than LockLease is
// taken over by claiming the odd number after it, so that a migrator that
// died does not hold ingest for ever. A migration that fails leaves the
// lock held: the schema may be half migrated, and writes wait for a
// migrator that completes it (an api restarting takes the lock over once
// LockLease has passed). A recorded migration that differs from its file
// fails before the first statement, and releases the lock.

const (
	// LockLease is how long a lock whose holder wrote nothing is honoured.
	LockLease = time.Minute
	// WriteGap bounds the time from a writer's read of an even epoch to the
	// start of its INSERT: a writer reads the epoch again when more has
	// passed (WriteGuard).
	WriteGap = 500 * time.Millisecond
	// lockPoll is how often a waiting migrator reads the lock again.
	lockPoll = 100 * time.Millisecond
)

// ErrMigrating is returned by a write refused while a migrator holds the
// lock: nothing of it was sent, and it is to be written again under its
// token once the migration is over.
var ErrMigrating = errors.New("a schema migration is running")

// lockTable is the table of the lock.
const lockTable = "schema_lock"

// lockFiles are the lock's statements. Identifiers, which ClickHouse does
// not bind, stand as {{.Table}}, {{.Database}}, {{.Cluster}}, {{.Processes}} and
// {{.Token}}, filled in by lockSQL from names the code builds, never from
// input; every value is a bound parameter.
//
//go:embed lock_*.sql
var lockFiles embed.FS

// lockSQL returns the statement of lock_<name>.sql with its identifiers
// filled in by r.
func lockSQL(name string, r *strings.Replacer) string {
	b, err := lockFiles.ReadFile("lock_" + name + ".sql")
	if err != nil {
		panic(fmt.Sprintf("schema: no statement lock_%s.sql: %v", name, err)) // embedded: cannot happen
	}
	return r.Replace(string(b))
}

// Epoch reads the schema epoch of database: odd while a migrator holds the
// lock. It fails where no migrator of this version has run yet, since
// writes are then unguarded.
func Epoch(ctx context.Context, q store.Querier, database string) (uint64, error) {
	var rows []struct {
		Seq uint64 `json:"seq"`
	}
	sql := lockSQL("epoch", strings.NewReplacer("{{.Table}}", database+"."+lockTable))
	if err := q.Query(ctx, store.Query{Name: "schema_epoch", SQL: sql}, nil, &rows); err != nil {
		return 0, fmt.Errorf("cannot read the schema epoch of %s: %w", database, err)
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return rows[0].Seq, nil
}

// WriteGuard is what a writer that shares the store with migrators checks
// before each insert (see "Migrating while ingest runs").
type WriteGuard struct {
	Querier  store.Querier
	Database string
}

// Ticket is an even epoch a writer read, and when.
type Ticket struct {
	Epoch uint64
	at    time.Time
}

// Begin reads the epoch before an insert: ErrMigrating while a migrator
// holds the lock.
func (g WriteGuard) Begin(ctx context.Context) (Ticket, error) {
	e, err := Epoch(ctx, g.Querier, g.Database)
	if err != nil {
		return Ticket{}, err
	}
	if e%2 == 1 {
		return Ticket{}, fmt.Errorf("%w (schema epoch %d)", ErrMigrating, e)
	}
	return Ticket{Epoch: e, at: time.Now()}, nil
}

// Fresh returns t, or a ticket read again when more than WriteGap has
// passed since t was: call it just before the INSERT starts.
func (g WriteGuard) Fresh(ctx context.Context, t Ticket) (Ticket, error) {
	if time.Since(t.at) <= WriteGap {
		return t, nil
	}
	return g.Begin(ctx)
}

// lock is a migrator's hold on schema_lock.
type lock struct {
	db    Execer
	opts  Options
	owner string
	seq   uint64
	stop  chan struct{}
	done  chan struct{}
}

// lockStatus is the last row of schema_lock, and its age by the store's
// clock.
type lockStatus struct {
	Seq   uint64 `json:"seq"`
	Owner string `json:"owner"`
	AgeMs int64  `json:"age_ms"`
}

func (l *lock) table() string { return l.opts.Database + "." + lockTable }

// sql returns the lock's statement name for l's database and cluster, with
// token as its deduplication token where it has one.
func (l *lock) sql(name, token string) string {
	processes := "system.processes"
	if l.opts.Cluster != "" {
		processes = "clusterAllReplicas(" + quote(l.opts.Cluster) + ", system.processes)"
	}
	return lockSQL(name, strings.NewReplacer("{{.Table}}", l.table(), "{{.Database}}", l.opts.Database, "{{.Cluster}}", quote(l.opts.Cluster),
		"{{.Processes}}", processes, "{{.Token}}", token))
}

func (l *lock) status(ctx context.Context) (lockStatus, error) {
	var rows []lockStatus
	q := store.Query{Name: "schema_lock_status", SQL: l.sql("status", "")}
	if err := l.db.Query(ctx, q, nil, &rows); err != nil {
		return lockStatus{}, fmt.Errorf("cannot read %s: %w", l.table(), err)
	}
	if len(rows) == 0 {
		return lockStatus{}, nil
	}
	return rows[0], nil
}

// write inserts the row seq with l's owner, under token (lock_write.sql,
// which starts with its INSERT: the test cluster replicates a statement
// by its first words). The deduplication token makes a claim a
// compare-and-set: of two migrators writing one epoch under one token, the
// engine stores one block. Tokens are built here from numbers and the
// owner's base32 name, never from input.
func (l *lock) write(ctx context.Context, seq uint64, token string) error {
	return l.db.Exec(ctx, l.sql("write", token), store.Params{}.Int("seq", int64(seq)).String("owner", l.owner))
}

// acquire takes the lock, waiting while another migrator holds it. The
// caller then drains the inserts that began before, unless the store has
// no events_in yet.
func acquire(ctx context.Context, db Execer, opts Options) (*lock, error) {
	l := &lock{db: db, opts: opts, owner: rand.Text()}
	for {
		st, err := l.status(ctx)
		if err != nil {
			return nil, err
		}
		next := st.Seq + 1
		if st.Seq%2 == 1 {
			if time.Duration(st.AgeMs)*time.Millisecond < LockLease {
				if err := sleep(ctx, lockPoll); err != nil {
					return nil, fmt.Errorf("waiting for the migrator %s (schema epoch %d): %w", st.Owner, st.Seq, err)
				}
				continue
			}
			next = st.Seq + 2 // taken over: its holder wrote nothing for LockLease
		}
		if err := l.write(ctx, next, fmt.Sprintf("schema_lock_%d", next)); err != nil {
			return nil, fmt.Errorf("cannot claim schema epoch %d: %w", next, err)
		}
		if err := l.replicated(ctx, next); err != nil {
			return nil, err
		}
		var rows []struct {
			Owner string `json:"owner"`
		}
		q := store.Query{Name: "schema_lock_owner", SQL: l.sql("owner", "")}
		if err := db.Query(ctx, q, store.Params{}.Int("seq", int64(next)), &rows); err != nil {
			return nil, fmt.Errorf("cannot read the owner of schema epoch %d: %w", next, err)
		}
		if len(rows) == 1 && rows[0].Owner == l.owner {
			l.seq = next
			break
		}
	}
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	go l.heartbeat()
	return l, nil
}

// replicated waits until every replica of a cluster holds row seq, so that
// a writer reads the new epoch whichever node it asks.
func (l *lock) replicated(ctx context.Context, seq uint64) error {
	if l.opts.Cluster == "" {
		return nil
	}
	q := store.Query{Name: "schema_lock_replicated", SQL: l.sql("replicated", "")}
	for {
		var rows []struct {
			OK uint8 `json:"ok"`
		}
		if err := l.db.Query(ctx, q, store.Params{}.Int("seq", int64(seq)), &rows); err != nil {
			return fmt.Errorf("cannot read schema epoch %d on every replica: %w", seq, err)
		}
		if len(rows) == 1 && rows[0].OK == 1 {
			return nil
		}
		if err := sleep(ctx, lockPoll); err != nil {
			return fmt.Errorf("waiting for every replica to hold schema epoch %d: %w", seq, err)
		}
	}
}

// drain waits for the INSERTs into events_in that writers began before
// they could read the odd epoch.
func (l *lock) drain(ctx context.Context) error {
	if err := sleep(ctx, 2*WriteGap); err != nil {
		return err
	}
	q := store.Query{Name: "schema_lock_inserts", SQL: l.sql("inserts", "")}
	params := store.Params{}.String("insert", "INSERT INTO "+l.opts.Database+".events_in")
	for {
		var rows []struct {
			N uint64 `json:"n"`
		}
		if err := l.db.Query(ctx, q, params, &rows); err != nil {
			return fmt.Errorf("cannot list the inserts into %s.events_in: %w", l.opts.Database, err)
		}
		if len(rows) == 0 || rows[0].N == 0 {
			return nil
		}
		if err := sleep(ctx, lockPoll); err != nil {
			return fmt.Errorf("waiting for %d inserts into %s.events_in: %w", rows[0].N, l.opts.Database, err)
		}
	}
}

// heartbeat writes l's seq again every LockLease/4 until release.
func (l *lock) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(LockLease / 4)
	defer t.Stop()
	for n := 1; ; n++ {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), LockLease/4)
			_ = l.write(ctx, l.seq, fmt.Sprintf("schema_lock_%d_%s_%d", l.seq, l.owner, n))
			cancel()
		}
	}
}

// release ends the heartbeat and, when the migration succeeded, writes the
// even epoch after l's; a failed one leaves the lock to be taken over.
func (l *lock) release(ctx context.Context, ok bool) error {
	close(l.stop)
	<-l.done
	if !ok {
		return nil
	}
	next := l.seq + 1
	if err := l.write(ctx, next, fmt.Sprintf("schema_lock_%d", next)); err != nil {
		return fmt.Errorf("cannot release schema epoch %d: %w", l.seq, err)
	}
	return l.replicated(ctx, next)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
