package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// LibraryEnv names the environment variable that points at libchdb.so.
const LibraryEnv = "CHDB_LIB_PATH"

// LibraryVersion is the chDB release the project pins and tests against.
const LibraryVersion = "26.7.3"

// ErrLibraryNotFound is returned by Open when libchdb.so cannot be located.
var ErrLibraryNotFound = errors.New("libchdb.so not found")

// lib holds the C entry points of libchdb, bound once on first use.
type lib struct {
	path string

	version                  func() string
	setSignalHandlersEnabled func(enabled bool)
	connect                  func(argc int32, argv unsafe.Pointer) unsafe.Pointer
	closeConn                func(conn unsafe.Pointer)
	queryWithParamsN         func(conn unsafe.Pointer, query unsafe.Pointer, queryLen uintptr, format unsafe.Pointer, formatLen uintptr, names unsafe.Pointer, nameLens unsafe.Pointer, values unsafe.Pointer, valueLens unsafe.Pointer, count uintptr) unsafe.Pointer
	destroyQueryResult       func(res unsafe.Pointer)
	resultBuffer             func(res unsafe.Pointer) unsafe.Pointer
	resultLength             func(res unsafe.Pointer) uintptr
	resultError              func(res unsafe.Pointer) string
	resultRowsRead           func(res unsafe.Pointer) uint64
	resultRowsWritten        func(res unsafe.Pointer) uint64
	streamInsertN            func(conn unsafe.Pointer, query unsafe.Pointer, queryLen uintptr, format unsafe.Pointer, formatLen uintptr) unsafe.Pointer
	streamAppend             func(stream unsafe.Pointer, data unsafe.Pointer, n uintptr) int32
	streamDone               func(stream unsafe.Pointer) unsafe.Pointer
	streamInsertError        func(stream unsafe.Pointer) string
	destroyInsertStream      func(stream unsafe.Pointer)
}

var (
	libOnce   sync.Once
	loadedLib *lib
	libErr    error
)

// loadLibrary locates and binds libchdb exactly once per process. It never
// panics: a missing or unusable library is reported as an error that says how
// to get it.
func loadLibrary() (*lib, error) {
	libOnce.Do(func() {
		loadedLib, libErr = bind()
	})
	return loadedLib, libErr
}

// LibraryPath returns the libchdb.so that Open would load: CHDB_LIB_PATH when
// set, else the per-user cache that `make libchdb` fills.
func LibraryPath() (string, error) {
	if p := os.Getenv(LibraryEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%w: %s=%q: %w", ErrLibraryNotFound, LibraryEnv, p, err)
		}
		return p, nil
	}
	p := filepath.Join(cacheDir(), "mcpdrift", "libchdb", LibraryVersion, "libchdb.so")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%w at %s; run `make libchdb` (or scripts/fetch-libchdb.sh) to fetch it, or set %s to an existing libchdb.so", ErrLibraryNotFound, p, LibraryEnv)
	}
	return p, nil
}

func cacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".cache")
	}
	return os.TempDir()
}

func bind() (l *lib, err error) {
	if !cgoEnabled {
		return nil, errors.New("the embedded store needs a binary built with CGO_ENABLED=1: ClickHouse needs the large thread stacks that only cgo threads have")
	}
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("the embedded store supports linux only, not %s; use the server backend (-store.dsn)", runtime.GOOS)
	}
	path, err := LibraryPath()
	if err != nil {
		return nil, err
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("cannot load %s: %w", path, err)
	}
	// RegisterLibFunc panics on a missing symbol; report it as an error.
	defer func() {
		if r := recover(); r != nil {
			l, err = nil, fmt.Errorf("cannot bind %s (want chDB %s): %v", path, LibraryVersion, r)
		}
	}()
	l = &lib{path: path}
	purego.RegisterLibFunc(&l.version, h, "chdb_version")
	purego.RegisterLibFunc(&l.setSignalHandlersEnabled, h, "chdb_set_signal_handlers_enabled")
	purego.RegisterLibFunc(&l.connect, h, "chdb_connect")
	purego.RegisterLibFunc(&l.closeConn, h, "chdb_close_conn")
	purego.RegisterLibFunc(&l.queryWithParamsN, h, "chdb_query_with_params_n")
	purego.RegisterLibFunc(&l.destroyQueryResult, h, "chdb_destroy_query_result")
	purego.RegisterLibFunc(&l.resultBuffer, h, "chdb_result_buffer")
	purego.RegisterLibFunc(&l.resultLength, h, "chdb_result_length")
	purego.RegisterLibFunc(&l.resultError, h, "chdb_result_error")
	purego.RegisterLibFunc(&l.resultRowsRead, h, "chdb_result_rows_read")
	purego.RegisterLibFunc(&l.resultRowsWritten, h, "chdb_result_rows_written")
	purego.RegisterLibFunc(&l.streamInsertN, h, "chdb_stream_insert_n")
	purego.RegisterLibFunc(&l.streamAppend, h, "chdb_stream_append")
	purego.RegisterLibFunc(&l.streamDone, h, "chdb_stream_done")
	purego.RegisterLibFunc(&l.streamInsertError, h, "chdb_stream_insert_error")
	purego.RegisterLibFunc(&l.destroyInsertStream, h, "chdb_destroy_insert_stream")
	return l, nil
}
