// Package dirlock gives a process sole use of a directory: an exclusive,
// non-blocking flock on a lock file in it, which holds the owner's pid.
// The lock dies with the process, so a crash never leaves the directory
// locked.
package dirlock

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// ErrLocked is returned by Lock when another process holds the lock.
var ErrLocked = errors.New("directory locked by another process")

// Lock takes the lock of file name in dir and records this process's pid
// in it; Close on the returned file releases it. When another process
// holds it, the error wraps ErrLocked and names that process's pid.
func Lock(dir, name string) (*os.File, error) {
	p := filepath.Join(dir, name)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("cannot open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			owner, _ := os.ReadFile(p)
			return nil, fmt.Errorf("%w: %s is held by pid %s", ErrLocked, dir, bytes.TrimSpace(owner))
		}
		return nil, fmt.Errorf("cannot lock %s: %w", p, err)
	}
	_ = f.Truncate(0)
	_, _ = f.WriteAt(fmt.Appendf(nil, "%d\n", os.Getpid()), 0)
	return f, nil
}
