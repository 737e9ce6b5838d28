package ingest

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/mcpdrift/mcpdrift/otelschema"
)

// The recent-id journal keeps on disk, beside a tenant's spool, the ids
// its recent set holds, so that a restart — a kill -9 included — still
// drops a client's retry of an export made durable just before it,
// whatever the events' time: the store can list only the ids of events
// timed within the deduplication window, and a client backfilling from a
// queue of its own sends older ones.
//
// Two files, as the recent set has two generations: idJournalFile takes
// the ids as they are remembered, little-endian uint64s after a header;
// when it holds a generation's worth it replaces idJournalPrev. Writes are
// not synced: they survive the process, not always the machine.
const (
	idJournalFile = "recent-ids"
	idJournalPrev = "recent-ids.prev"
)

// idJournalMagic heads a journal file: the format and its version.
var idJournalMagic = []byte("MDRIDS01")

// idJournal appends ids to the current file. It is safe for concurrent
// use, and holds a lock of its own: no batcher lock is held while it
// writes.
type idJournal struct {
	mu     sync.Mutex
	dir    string
	perGen int
	f      *os.File
	n      int // ids in the current file
	buf    []byte
	log    *slog.Logger
	broken bool // a write failed, or the journal is closed: nothing more is written
}

// openIDJournal opens the journal in dir for perGen ids per file and
// returns the ids its files hold, the oldest first.
func openIDJournal(dir string, perGen int, log *slog.Logger) (*idJournal, []uint64, error) {
	var ids []uint64
	for _, name := range []string{idJournalPrev, idJournalFile} {
		got, err := readIDJournal(filepath.Join(dir, name))
		if err != nil {
			log.Warn("cannot read the recent-id journal: its ids are not loaded", "file", name, "error", err)
		}
		ids = append(ids, got...)
	}
	j := &idJournal{dir: dir, perGen: max(perGen, 1), log: log}
	path := filepath.Join(dir, idJournalFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, ids, fmt.Errorf("cannot open the recent-id journal: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, ids, fmt.Errorf("cannot stat the recent-id journal: %w", err)
	}
	size := info.Size()
	head := make([]byte, len(idJournalMagic))
	if n, _ := f.ReadAt(head, 0); n < len(head) || !bytes.Equal(head, idJournalMagic) {
		size = 0 // empty, torn at creation or foreign: start it anew
	}
	// A torn last id is cut off, so that appends stay aligned.
	if size > 0 {
		size -= (size - int64(len(idJournalMagic))) % 8
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return nil, ids, fmt.Errorf("cannot truncate the recent-id journal to %d bytes: %w", size, err)
	}
	if size == 0 {
		if _, err := f.WriteAt(idJournalMagic, 0); err != nil {
			f.Close()
			return nil, ids, fmt.Errorf("cannot write the recent-id journal's header: %w", err)
		}
		size = int64(len(idJournalMagic))
	}
	if _, err := f.Seek(size, 0); err != nil {
		f.Close()
		return nil, ids, fmt.Errorf("cannot seek the recent-id journal: %w", err)
	}
	j.f, j.n = f, int(size-int64(len(idJournalMagic)))/8
	return j, ids, nil
}

// readIDJournal returns the ids of one journal file; none if it does not
// exist.
func readIDJournal(path string) ([]uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if len(b) == 0 {
		return nil, nil
	}
	if !bytes.HasPrefix(b, idJournalMagic) {
		return nil, fmt.Errorf("%s: not a recent-id journal (%d bytes)", filepath.Base(path), len(b))
	}
	b = b[len(idJournalMagic):]
	ids := make([]uint64, 0, len(b)/8)
	for ; len(b) >= 8; b = b[8:] {
		ids = append(ids, binary.LittleEndian.Uint64(b))
	}
	return ids, nil
}

// add appends the ids of events, rotating the files when the current one
// holds a generation. A failure is logged and stops the journal: it costs
// the protection across restarts, never an export.
func (j *idJournal) add(events []otelschema.Event) {
	if j == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.broken {
		return
	}
	j.buf = j.buf[:0]
	for i := range events {
		if id := events[i].ID; id != 0 {
			j.buf = binary.LittleEndian.AppendUint64(j.buf, id)
		}
	}
	for len(j.buf) > 0 {
		if j.n >= j.perGen {
			if err := j.rotate(); err != nil {
				j.fail(err)
				return
			}
		}
		k := min(len(j.buf)/8, j.perGen-j.n)
		if _, err := j.f.Write(j.buf[:8*k]); err != nil {
			j.fail(fmt.Errorf("cannot append %d ids: %w", k, err))
			return
		}
		j.n += k
		j.buf = j.buf[8*k:]
	}
}

// rotate makes the current file the previous one and starts a new one.
func (j *idJournal) rotate() error {
	err := j.f.Close()
	j.f = nil
	if err != nil {
		return fmt.Errorf("cannot close the recent-id journal: %w", err)
	}
	if err := os.Rename(filepath.Join(j.dir, idJournalFile), filepath.Join(j.dir, idJournalPrev)); err != nil {
		return fmt.Errorf("cannot rotate the recent-id journal: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(j.dir, idJournalFile), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("cannot create the recent-id journal: %w", err)
	}
	if _, err := f.Write(idJournalMagic); err != nil {
		f.Close()
		return fmt.Errorf("cannot write the recent-id journal's header: %w", err)
	}
	j.f, j.n = f, 0
	return nil
}

func (j *idJournal) fail(err error) {
	j.broken = true
	j.log.Warn("recent-id journal stopped: after a restart, retries of exports stored before it may be stored twice", "dir", j.dir, "error", err)
}

// close closes the current file; later adds write nothing.
func (j *idJournal) close() error {
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.broken = true
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}
