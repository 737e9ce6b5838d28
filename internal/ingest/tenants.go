package ingest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcpdrift/mcpdrift/internal/auth"
	"github.com/mcpdrift/mcpdrift/internal/spool"
	"github.com/mcpdrift/mcpdrift/store"
)

// tenant is one tenant's batcher and its spool (nil without one).
type tenant struct {
	name string
	b    *batcher
	sp   *spool.Spool
}

// tenants are the batchers of every tenant: Config.Tenant's, the tenant of
// requests without tokens, opened with the server, and each other's on
// its first request (or at start-up, when its spool holds records). Each
// has a spool of its own: Config.Spool.Dir for Config.Tenant, a directory
// under its tenants/ for the others.
type tenants struct {
	w      store.Writer
	mu     sync.Mutex
	byName map[string]*tenant
	def    *tenant // Config.Tenant's
	closed bool
}

// tenantFor returns the batcher of the tenant named, opening it on its
// first request: Config.Tenant's is always open.
func (s *Server) tenantFor(name string) (*tenant, error) {
	if name == s.cfg.Tenant {
		return s.tenants.def, nil
	}
	s.tenants.mu.Lock()
	defer s.tenants.mu.Unlock()
	if s.tenants.closed {
		return nil, ErrShuttingDown
	}
	if t, ok := s.tenants.byName[name]; ok {
		return t, nil
	}
	return s.openTenantLocked(name)
}

// openTenantLocked starts the batcher of name, with its spool, and loads
// its recent event ids; the caller holds tenants.mu.
func (s *Server) openTenantLocked(name string) (*tenant, error) {
	if err := auth.ValidTenant(name); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidData, err)
	}
	cfg := s.cfg
	cfg.Tenant = name
	log := s.logger
	t := &tenant{name: name}
	if name != s.cfg.Tenant {
		log = log.With("tenant", name)
		if cfg.Spool.Dir != "" {
			cfg.Spool.Dir = filepath.Join(s.cfg.Spool.Dir, "tenants", name)
		}
	}
	if cfg.Spool.Dir != "" {
		sp, err := spool.Open(cfg.tenantSpool(), log)
		if err != nil {
			return nil, fmt.Errorf("cannot open the spool of tenant %s: %w", name, err)
		}
		t.sp = sp
	}
	t.b = newBatcher(cfg, s.tenants.w, t.sp, &s.stats, log, s.tr)
	s.seedRecent(t)
	if s.tenants.byName == nil {
		s.tenants.byName = map[string]*tenant{}
	}
	s.tenants.byName[name] = t
	if name == s.cfg.Tenant {
		s.tenants.def = t
	} else {
		s.logger.Info("tenant batcher started", "tenant", name, "spool", cfg.Spool.Dir)
	}
	return t, nil
}

// seedRecentTimeout bounds the start-up query for recent event ids.
const seedRecentTimeout = 30 * time.Second

// seedRecent fills t's recent ids, past those its batcher read from the
// recent-id journal, with the events waiting in its spool and, when the
// store can list them, the events it stored within DedupWindow, so that a
// client's retry of an export made durable just before a restart is
// dropped. Failures only cost that protection.
func (s *Server) seedRecent(t *tenant) {
	b := t.b
	if b.recent == nil {
		return
	}
	n := b.journaled
	if t.sp != nil {
		var ids []uint64
		err := t.sp.Scan(func(r spool.Record) error {
			ids = ids[:0]
			for i := range r.Events {
				ids = append(ids, r.Events[i].ID)
			}
			b.seed(ids)
			n += len(r.Events)
			return nil
		})
		if err != nil {
			s.logger.Warn("cannot read the spool's event ids", "tenant", t.name, "error", err)
		}
	}
	if l, ok := s.tenants.w.(store.EventIDLister); ok && s.cfg.DedupWindow > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), seedRecentTimeout)
		defer cancel()
		ids, err := l.EventIDsSince(ctx, t.name, time.Now().Add(-s.cfg.DedupWindow), s.cfg.DedupIDs/2)
		if err != nil {
			s.logger.Warn("cannot load recent event ids: retries of exports stored before this start may be stored twice", "tenant", t.name, "error", err)
		}
		b.seed(ids)
		n += len(ids)
	}
	if n > 0 {
		s.logger.Info("recent event ids loaded for deduplication", "tenant", t.name, "ids", n, "journaled", b.journaled, "window", s.cfg.DedupWindow)
	}
}

// openSpooledTenants starts the batchers of the tenants whose spools hold
// records left by an earlier process, so that they are replayed whether or
// not the tenant sends again.
func (s *Server) openSpooledTenants() error {
	if !s.multiTenant || s.cfg.Spool.Dir == "" {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(s.cfg.Spool.Dir, "tenants"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot list the tenant spools: %w", err)
	}
	s.tenants.mu.Lock()
	defer s.tenants.mu.Unlock()
	for _, e := range entries {
		if !e.IsDir() || e.Name() == s.cfg.Tenant || auth.ValidTenant(e.Name()) != nil {
			continue
		}
		if _, err := s.openTenantLocked(e.Name()); err != nil {
			return err
		}
	}
	return nil
}

// eachTenant calls fn with every tenant opened, without holding the
// registry's lock meanwhile (a tenant's shutdown may take a while).
func (s *Server) eachTenant(fn func(*tenant)) {
	s.tenants.mu.Lock()
	all := make([]*tenant, 0, len(s.tenants.byName))
	for _, t := range s.tenants.byName {
		all = append(all, t)
	}
	s.tenants.mu.Unlock()
	for _, t := range all {
		fn(t)
	}
}

// drainTenants refuses new tenants and makes every batcher write its
// batches at once.
func (s *Server) drainTenants() {
	s.tenants.mu.Lock()
	s.tenants.closed = true
	s.tenants.mu.Unlock()
	s.eachTenant(func(t *tenant) { t.b.Drain() })
}

// shutdownTenants shuts every batcher down and closes its spool.
func (s *Server) shutdownTenants(ctx context.Context) error {
	var errs []error
	s.eachTenant(func(t *tenant) {
		if err := t.b.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("cannot flush the pending events of tenant %s: %w", t.name, err))
		}
		if t.sp != nil {
			if err := t.sp.Close(); err != nil {
				errs = append(errs, fmt.Errorf("cannot close the spool of tenant %s: %w", t.name, err))
			}
		}
	})
	return errors.Join(errs...)
}
