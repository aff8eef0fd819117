package app

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"quarry/internal/config"
	"quarry/internal/git"
	"quarry/internal/git/packcache"
)

// sweepPacksEvery is how often expired and excess cached packs are
// removed (each new pack also sweeps).
const sweepPacksEvery = time.Minute

// startPackCache prepares the pack cache of clones and fetches when a
// bound is set, registers its counters and starts its sweeper, which Close
// stops. It returns nil without a cache.
func (a *App) startPackCache(ctx context.Context, cfg config.Config, runner *git.Runner, reg *prometheus.Registry) (*packcache.Cache, error) {
	if cfg.PackObjectsCacheBytes <= 0 {
		return nil, nil
	}
	version, err := runner.Run(ctx, "", git.Command{Name: "version"}, git.Options{})
	if err != nil {
		return nil, fmt.Errorf("pack cache: %w", err)
	}
	c, err := packcache.New(filepath.Join(cfg.DataDir, "cache", "pack-objects"), cfg.PackObjectsCacheBytes, cfg.PackObjectsCacheTTL, string(version))
	if err != nil {
		return nil, err
	}
	for _, m := range []struct {
		name, help string
		get        func(packcache.Counters) int64
	}{
		{"quarry_pack_objects_cache_hits_total", "Clone and fetch packs served from the pack cache (finished or being written).", func(c packcache.Counters) int64 { return c.Hits }},
		{"quarry_pack_objects_cache_misses_total", "Packs built and stored in the pack cache.", func(c packcache.Counters) int64 { return c.Misses }},
		{"quarry_pack_objects_cache_fallbacks_total", "Requests that produced their own answer: an entry past the byte bound, or a failed producer.", func(c packcache.Counters) int64 { return c.Fallbacks }},
		{"quarry_pack_objects_cache_evictions_total", "Cached packs removed by age or by the byte bound.", func(c packcache.Counters) int64 { return c.Evictions }},
	} {
		get := m.get
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: m.name, Help: m.help},
			func() float64 { return float64(get(c.Counters())) }))
	}
	sctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	a.stopPacks, a.packsDone = stop, done
	go func() {
		defer close(done)
		t := time.NewTicker(sweepPacksEvery)
		defer t.Stop()
		for {
			if err := c.Sweep(time.Now()); err != nil {
				a.log.Warn("pack cache sweep", "err", err)
			}
			select {
			case <-sctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return c, nil
}
