package mcpgo

import (
	"sync"
	"weak"
)

// sessions maps MCP sessions to per-session state without keeping closed
// sessions alive: keys are weak pointers, and entries whose session has been
// collected are swept as the map grows.
type sessions[S any, V any] struct {
	mu    sync.Mutex
	m     map[weak.Pointer[S]]*V
	sweep int // size at which the next sweep runs
}

// get returns the state of s, creating it with init when missing.
func (ss *sessions[S, V]) get(s *S, init func() *V) *V {
	k := weak.Make(s)
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if v, ok := ss.m[k]; ok {
		return v
	}
	if ss.m == nil {
		ss.m = map[weak.Pointer[S]]*V{}
		ss.sweep = 64
	}
	if len(ss.m) >= ss.sweep {
		for k := range ss.m {
			if k.Value() == nil {
				delete(ss.m, k)
			}
		}
		ss.sweep = max(64, 2*len(ss.m))
	}
	v := init()
	ss.m[k] = v
	return v
}

// each calls f on the state of every live session.
func (ss *sessions[S, V]) each(f func(*V)) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, v := range ss.m {
		if k.Value() != nil {
			f(v)
		}
	}
}
