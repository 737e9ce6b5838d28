// Command chnode runs one ClickHouse server node out of libchdb, for the
// project's tests: libchdb is ClickHouse itself, and its
// chdb_query_cmdline entry point runs clickhouse-local's main, whose
// SYSTEM START LISTEN statements start the native and HTTP listeners. A
// never-ending query then keeps the process serving until it is signalled.
//
//	chnode -lib libchdb.so -- --path=DIR -C config.xml --tcp_port=N --http_port=M --listen_host=127.0.0.1
//
// The arguments after -- are clickhouse-local's own. With -watch-stdin the
// node also exits when its standard input closes, so that a node started
// by a test dies with the test process. This is test scaffolding, not a
// way to run ClickHouse in production: clickhouse-local has no DDL worker
// (no ON CLUSTER) and no interserver listener (no replication).
package main

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

typedef void *(*cmdline_fn)(int, char **);
typedef const char *(*error_fn)(void *);

// run loads lib and calls chdb_query_cmdline(argc, argv). It returns NULL
// when the query ended without an error, or the error's text.
static const char *run(const char *lib, int argc, char **argv) {
	void *h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (h == NULL) return dlerror();
	cmdline_fn query = (cmdline_fn)dlsym(h, "chdb_query_cmdline");
	error_fn result_error = (error_fn)dlsym(h, "chdb_result_error");
	if (query == NULL || result_error == NULL) return "libchdb has no chdb_query_cmdline or chdb_result_error";
	void *res = query(argc, argv);
	if (res == NULL) return "chdb_query_cmdline returned no result";
	return result_error(res);
}
*/
import "C"

import (
	"flag"
	"fmt"
	"io"
	"os"
	"unsafe"
)

// serveQuery starts the listeners, then runs until the process is
// signalled: clickhouse-local serves connections only while its query runs.
const serveQuery = "SYSTEM START LISTEN TCP; SYSTEM START LISTEN HTTP; " +
	"SELECT sleepEachRow(1) FROM system.numbers SETTINGS max_block_size = 1 FORMAT Null"

func main() {
	lib := flag.String("lib", "", "path of libchdb.so")
	watch := flag.Bool("watch-stdin", false, "exit when standard input closes")
	flag.Parse()
	if *lib == "" {
		fmt.Fprintln(os.Stderr, "chnode: -lib is required")
		os.Exit(2)
	}
	if *watch {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			os.Exit(3)
		}()
	}
	args := append([]string{"clickhouse-local"}, flag.Args()...)
	args = append(args, "--query", serveQuery)
	argv := make([]*C.char, len(args)+1)
	for i, a := range args {
		argv[i] = C.CString(a)
	}
	clib := C.CString(*lib)
	if msg := C.run(clib, C.int(len(args)), (**C.char)(unsafe.Pointer(&argv[0]))); msg != nil {
		fmt.Fprintln(os.Stderr, "chnode:", C.GoString(msg))
		os.Exit(1)
	}
	// The serving query never ends on its own.
	fmt.Fprintln(os.Stderr, "chnode: the serving query ended")
	os.Exit(1)
}
