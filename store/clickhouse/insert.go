package clickhouse

import (
	"context"
	"encoding/binary"
	"fmt"
	"maps"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/ClickHouse/ch-go"
	"github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2"

	"github.com/mcpdrift/mcpdrift/store/chwire"
)

// inserter sends the INSERTs of Write over the native protocol with ch-go,
// each chunk Native-encoded by chwire, as the embedded store encodes its
// own: the encoded columns go to the connection as they are, where
// clickhouse-go's batches copied every value into columns of their own
// first. Queries, migrations and pings keep clickhouse-go's pool.
//
// It keeps the connections of INSERTs done, up to Senders (the INSERTs
// that run at once), and connects when it has none idle (Open does not
// connect). An INSERT that fails for want of a connection moves the next
// one to the next address of the DSN, in its order, as clickhouse-go's
// pool does; the sender retries it under the same token. A connection
// that failed is closed, never kept.
type inserter struct {
	opts []ch.Options // one per address
	// dsn holds the settings the DSN names, sent with every INSERT as
	// clickhouse-go sends them with every query; the INSERT's own win.
	dsn  clickhouse.Settings
	idle chan idleConn
	at   atomic.Int32 // the address new connections go to (in order)
	// spread dials each new connection to the next address, as the DSN's
	// connection_open_strategy round_robin or random asks; rr counts them.
	spread bool
	rr     atomic.Uint32
	// compressed: the INSERTs' blocks are compressed, which ch-go does
	// in the connection's buffer (see room); uncompressed, it writes
	// the columns' bytes as they are.
	compressed bool
	// blocks holds *chwire.NativeBlock of INSERTs done, for the next.
	blocks sync.Pool
}

// idleConn is a connection kept for the next INSERT, to address addr,
// with buf, the buffer its INSERTs are encoded into (see room).
type idleConn struct {
	c    *ch.Client
	buf  *proto.Buffer
	addr int
}

// newInserter returns the inserter of the server o describes, with up to
// maxConns connections per address, its INSERTs into database.
func newInserter(o *clickhouse.Options, database string, maxConns int) *inserter {
	in := &inserter{idle: make(chan idleConn, max(maxConns, 1)), dsn: o.Settings,
		spread: o.ConnOpenStrategy == clickhouse.ConnOpenRoundRobin || o.ConnOpenStrategy == clickhouse.ConnOpenRandom}
	user := o.Auth.Username
	if user == "" {
		user = ch.DefaultUser
	}
	var comp ch.Compression
	if o.Compression != nil {
		switch o.Compression.Method {
		case clickhouse.CompressionLZ4:
			comp = ch.CompressionLZ4
		case clickhouse.CompressionZSTD:
			comp = ch.CompressionZSTD
		}
	}
	in.compressed = comp != ch.CompressionDisabled
	for _, addr := range o.Addr {
		in.opts = append(in.opts, ch.Options{
			Address: addr, Database: database, User: user, Password: o.Auth.Password,
			Compression: comp, ClientName: "mcpdrift", TLS: o.TLS,
			DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout,
		})
	}
	return in
}

// conn returns an idle connection, or a new one.
func (in *inserter) conn(ctx context.Context) (idleConn, error) {
	for {
		select {
		case ic := <-in.idle:
			if !ic.c.IsClosed() {
				return ic, nil
			}
			continue
		default:
		}
		i := int(in.at.Load()) % len(in.opts)
		if in.spread {
			i = int(in.rr.Add(1)) % len(in.opts)
		}
		buf := new(proto.Buffer)
		c, err := ch.DialWithBuffer(ctx, in.opts[i], buf)
		if err != nil {
			return idleConn{addr: i}, fmt.Errorf("cannot connect to %s: %w", in.opts[i].Address, err)
		}
		return idleConn{c: c, buf: buf, addr: i}, nil
	}
}

// release keeps ic for the next INSERT, or closes it when enough are
// kept.
func (in *inserter) release(ic idleConn) {
	select {
	case in.idle <- ic:
	default:
		_ = ic.c.Close()
	}
}

// room makes buf, a connection's buffer, hold an INSERT of cols in one
// allocation. ch-go encodes the whole block into that buffer before it
// compresses it (the compressed block then takes its place, no larger
// than the codec's bound): grown by append, the buffer reached a block of
// tens of megabytes in some twenty steps, each a copy into fresh memory
// and garbage for the collector, on every new connection: the one-step
// room is TestInsertBufferGrownOnce's. The buffer is kept with its connection, as
// ch-go kept it, so a connection holds the room of its largest INSERT.
func room(buf *proto.Buffer, cols []chwire.Column) {
	n := 0
	for _, col := range cols {
		n += len(col.Name) + len(col.Type) + 2*binary.MaxVarintLen64
		for _, d := range col.Data {
			n += len(d)
		}
	}
	// lz4's bound is n + n/255 + 16, zstd's n + n/128 + 64 KiB at most;
	// the packet's headers and the block's take a few hundred bytes.
	need := len(buf.Buf) + n + n/128 + 128<<10
	if cap(buf.Buf) < need {
		buf.Buf = append(make([]byte, 0, need), buf.Buf...)
	}
}

// insert runs sql, an INSERT … VALUES naming store.InsertColumns, with
// settings, sending c's events as one block (c.blk as it is, when set). ready, when not nil, is
// called once a connection is at hand, just before the INSERT is sent: an
// error from it is returned and nothing is sent.
func (in *inserter) insert(ctx context.Context, sql string, settings clickhouse.Settings, c *chunk, ready func() error) error {
	blk := c.blk
	if blk == nil {
		blk, _ = in.blocks.Get().(*chwire.NativeBlock)
		if blk == nil {
			blk = new(chwire.NativeBlock)
		}
		defer in.blocks.Put(blk)
		blk.Reset()
		for _, p := range c.parts {
			blk.Append(p.tenant, p.events)
		}
	}
	cols := blk.Columns()
	input := make(proto.Input, 0, len(cols))
	for _, col := range cols {
		input = append(input, proto.InputColumn{Name: col.Name, Data: encoded{typ: proto.ColumnType(col.Type), rows: blk.Rows(), data: col.Data}})
	}
	q := ch.Query{Body: sql, Input: input}
	all := make(clickhouse.Settings, len(in.dsn)+len(settings))
	maps.Copy(all, in.dsn)
	maps.Copy(all, settings)
	settings = all
	keys := make([]string, 0, len(settings))
	for k := range settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		q.Settings = append(q.Settings, ch.Setting{Key: k, Value: fmt.Sprint(settings[k])})
	}
	ic, err := in.conn(ctx)
	i := ic.addr
	if err == nil && ready != nil {
		if rerr := ready(); rerr != nil {
			in.release(ic)
			return rerr
		}
	}
	if err == nil {
		if in.compressed {
			room(ic.buf, cols)
		}
		if err = ic.c.Do(ctx, q); err == nil {
			in.release(ic)
			return nil
		}
		// The connection's state after a failed INSERT is unknown.
		_ = ic.c.Close()
	}
	if e, ok := ch.AsException(err); ok {
		// As clickhouse-go reports it, for isPermanent and unavailable.
		return &clickhouse.Exception{Code: int32(e.Code), Name: e.Name, Message: e.Message}
	}
	if isTransient(err) {
		// The address failed: its other idle connections are as likely
		// dead, and new ones go to the next address.
		in.forget(i)
		if len(in.opts) > 1 {
			in.at.CompareAndSwap(int32(i), int32((i+1)%len(in.opts)))
		}
	}
	return fmt.Errorf("insert into %s: %w", in.opts[i].Address, err)
}

// forget closes the idle connections to address i.
func (in *inserter) forget(i int) {
	var keep []idleConn
	for done := false; !done; {
		select {
		case ic := <-in.idle:
			if ic.addr == i {
				_ = ic.c.Close()
			} else {
				keep = append(keep, ic)
			}
		default:
			done = true
		}
	}
	for _, ic := range keep {
		in.release(ic)
	}
}

// close closes the idle connections.
func (in *inserter) close() {
	for {
		select {
		case ic := <-in.idle:
			_ = ic.c.Close()
		default:
			return
		}
	}
}

// encoded is a column already serialised (chwire.NativeBlock.Columns), as
// ch-go sends one.
type encoded struct {
	typ  proto.ColumnType
	rows int
	data [][]byte
}

func (e encoded) Type() proto.ColumnType { return e.typ }
func (e encoded) Rows() int              { return e.rows }

func (e encoded) EncodeColumn(b *proto.Buffer) {
	for _, d := range e.data {
		b.Buf = append(b.Buf, d...)
	}
}

func (e encoded) WriteColumn(w *proto.Writer) {
	for _, d := range e.data {
		w.ChainWrite(d)
	}
}
