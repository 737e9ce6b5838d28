// Package loopback gives the tests that start servers as separate
// processes the addresses to listen on: loopback only, a port free when
// asked for.
package loopback

import (
	"net"
	"testing"
)

// Addr returns 127.0.0.1 with a port that was free when Addr returned. A
// process started later may still find it taken, rarely; tests that need
// several ports ask for each.
func Addr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
