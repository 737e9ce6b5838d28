package main

import (
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"
)

// goThreadsCPU returns the user + system time and the minor page faults of
// this process's threads that carry its own name — the Go runtime's; chDB
// names the threads it starts (ThreadPool, MergeMutate, …) — and false
// when /proc cannot tell.
// The engine's work done on a Go thread, inside a call into libchdb,
// counts as Go's; a Go thread that exited meanwhile is missed, so the
// engine's share is the process's time minus this.
func goThreadsCPU() (time.Duration, uint64, bool) {
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return 0, 0, false
	}
	name := strings.TrimSpace(string(self))
	tasks, err := filepath.Glob("/proc/self/task/*/stat")
	if err != nil || len(tasks) == 0 {
		return 0, 0, false
	}
	var ticks int64
	var faults uint64
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue // exited
		}
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open || s[open+1:end] != name {
			continue
		}
		f := strings.Fields(s[end+1:])
		if len(f) < 13 {
			continue
		}
		minflt, _ := strconv.ParseUint(f[7], 10, 64)
		utime, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		ticks += utime + stime
		faults += minflt
	}
	return time.Duration(ticks) * time.Second / clockTicks, faults, true
}

// gcCPU returns the Go runtime's estimate of the CPU its garbage collector
// has used since the process started (runtime/metrics), part of
// goThreadsCPU.
func gcCPU() time.Duration {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return time.Duration(s[0].Value.Float64() * float64(time.Second))
}

// goHeapCounts returns the bytes the Go heap has allocated and the garbage
// collections completed since the process started (runtime/metrics).
func goHeapCounts() (allocated, gcs uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		allocated = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		gcs = s[1].Value.Uint64()
	}
	return allocated, gcs
}
