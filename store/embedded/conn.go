package embedded

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"unsafe"
)

// conn is one chDB connection. chDB runs the statements of a connection one
// at a time, so callers serialise access (see Store).
type conn struct {
	lib    *lib
	handle unsafe.Pointer // chdb_connection *
}

func connect(l *lib, path string) (*conn, error) {
	// chDB installs its own signal handlers by default; with them a Go
	// nil-pointer dereference hangs the process instead of panicking.
	l.setSignalHandlersEnabled(false)
	// The engine would otherwise read times in the process's time zone:
	// every time mcpdrift binds or reads is UTC.
	args := []string{"mcpdrift", "--path=" + path, "--session_timezone=UTC"}
	argv := newCArgv(args)
	h := l.connect(int32(len(args)), argv.pointer())
	runtime.KeepAlive(argv)
	if h == nil {
		return nil, fmt.Errorf("cannot open chDB at %s: chdb_connect returned no connection", path)
	}
	return &conn{lib: l, handle: h}, nil
}

func (c *conn) close() {
	if c.handle != nil {
		c.lib.closeConn(c.handle)
		c.handle = nil
	}
}

// chdbConnection dereferences the chdb_connection * that chdb_connect returned.
func (c *conn) chdbConnection() unsafe.Pointer {
	return *(*unsafe.Pointer)(c.handle)
}

// query runs one statement with its {name:Type} parameters bound by the
// engine and returns the whole output in the given format.
func (c *conn) query(sql, format string, params map[string]string) ([]byte, error) {
	if c.handle == nil {
		return nil, errClosed
	}
	n := len(params)
	names := make([]unsafe.Pointer, n+1)
	nameLens := make([]uintptr, n+1)
	values := make([]unsafe.Pointer, n+1)
	valueLens := make([]uintptr, n+1)
	i := 0
	for k, v := range params {
		names[i], nameLens[i] = strPtr(k), uintptr(len(k))
		values[i], valueLens[i] = strPtr(v), uintptr(len(v))
		i++
	}
	res := c.lib.queryWithParamsN(c.chdbConnection(),
		strPtr(sql), uintptr(len(sql)), strPtr(format), uintptr(len(format)),
		unsafe.Pointer(&names[0]), unsafe.Pointer(&nameLens[0]),
		unsafe.Pointer(&values[0]), unsafe.Pointer(&valueLens[0]), uintptr(n))
	runtime.KeepAlive(sql)
	runtime.KeepAlive(format)
	runtime.KeepAlive(params)
	runtime.KeepAlive(names)
	runtime.KeepAlive(values)
	if res == nil {
		return nil, errors.New("chdb_query_with_params_n returned no result")
	}
	defer c.lib.destroyQueryResult(res)
	if msg := c.lib.resultError(res); msg != "" {
		return nil, &QueryError{Message: msg}
	}
	return copyResult(c.lib, res), nil
}

// insert streams data, already encoded in format, into an INSERT statement
// written without its FORMAT clause. It returns once the engine has committed
// the rows (and the materialised views fed by them).
func (c *conn) insert(sql, format string, chunks ...[]byte) (rowsWritten uint64, err error) {
	if c.handle == nil {
		return 0, errClosed
	}
	s := c.lib.streamInsertN(c.chdbConnection(), strPtr(sql), uintptr(len(sql)), strPtr(format), uintptr(len(format)))
	runtime.KeepAlive(sql)
	runtime.KeepAlive(format)
	if s == nil {
		return 0, errors.New("chdb_stream_insert_n returned no stream")
	}
	defer c.lib.destroyInsertStream(s)
	if msg := c.lib.streamInsertError(s); msg != "" {
		return 0, &QueryError{Message: msg}
	}
	for _, chunk := range chunks {
		if len(chunk) == 0 {
			continue
		}
		rc := c.lib.streamAppend(s, unsafe.Pointer(&chunk[0]), uintptr(len(chunk)))
		runtime.KeepAlive(chunk)
		if rc != 0 {
			msg := c.lib.streamInsertError(s)
			if msg == "" {
				msg = "chdb_stream_append failed"
			}
			return 0, &QueryError{Message: msg}
		}
	}
	res := c.lib.streamDone(s)
	if res == nil {
		return 0, errors.New("chdb_stream_done returned no result")
	}
	defer c.lib.destroyQueryResult(res)
	if msg := c.lib.resultError(res); msg != "" {
		return 0, &QueryError{Message: msg}
	}
	return c.lib.resultRowsWritten(res), nil
}

func copyResult(l *lib, res unsafe.Pointer) []byte {
	n := l.resultLength(res)
	if n == 0 {
		return nil
	}
	buf := l.resultBuffer(res)
	if buf == nil {
		return nil
	}
	out := make([]byte, n)
	copy(out, unsafe.Slice((*byte)(buf), n))
	return out
}

// strPtr points at a string's bytes for a call that also receives its length;
// an empty string gets a valid pointer to a zero byte.
func strPtr(s string) unsafe.Pointer {
	if s == "" {
		return unsafe.Pointer(&zero)
	}
	return unsafe.Pointer(unsafe.StringData(s))
}

var zero byte

// cArgv is a NUL-terminated argv in Go memory, kept alive by the caller for
// the duration of the call.
type cArgv struct {
	bufs [][]byte
	ptrs []unsafe.Pointer
}

func newCArgv(ss []string) *cArgv {
	a := &cArgv{bufs: make([][]byte, len(ss)), ptrs: make([]unsafe.Pointer, len(ss)+1)}
	for i, s := range ss {
		a.bufs[i] = append([]byte(s), 0)
		a.ptrs[i] = unsafe.Pointer(&a.bufs[i][0])
	}
	return a
}

func (a *cArgv) pointer() unsafe.Pointer { return unsafe.Pointer(&a.ptrs[0]) }

// QueryError is an error reported by the ClickHouse engine.
type QueryError struct {
	Message string
}

func (e *QueryError) Error() string { return "clickhouse: " + e.Message }

// permanent reports whether the engine refused the data itself, so that
// sending the same rows again cannot succeed.
func (e *QueryError) permanent() bool {
	for _, code := range []string{"CANNOT_PARSE", "CANNOT_READ_ALL_DATA", "TYPE_MISMATCH", "NO_SUCH_COLUMN_IN_TABLE", "INCORRECT_DATA", "TOO_LARGE_STRING_SIZE", "UNKNOWN_ELEMENT_OF_ENUM"} {
		if strings.Contains(e.Message, "("+code+")") {
			return true
		}
	}
	return false
}
