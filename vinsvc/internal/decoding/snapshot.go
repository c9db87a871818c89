package decoding

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Snapshots holds the vPIC snapshot in use (none until one is loaded) and
// how it is used: the mode, and how long its answers stay in the cache.
// The policies (Only, Failover, Late) read it; it is safe for concurrent
// use.
type Snapshots struct {
	mode   vin.SnapshotMode
	ttl    time.Duration
	logger *slog.Logger

	snap atomic.Pointer[snapshotRef]
	// loaded is closed when the snapshot being loaded is ready or has
	// failed (Expect, Loaded); nil when none is expected. Set before
	// serving, read after.
	loaded   chan struct{}
	loadWait time.Duration
	// Snapshot reads that failed (not counting VINs it does not know).
	errors atomic.Uint64
}

// snapshotRef boxes a Snapshot for the atomic pointer.
type snapshotRef struct{ s Snapshot }

// NewSnapshots returns the holder of a snapshot used as mode says, its
// answers cached for ttl (so that vPIC's answer replaces them soon). s may
// be nil: one is set later (Loaded, Set), or never.
func NewSnapshots(s Snapshot, mode vin.SnapshotMode, ttl time.Duration, logger *slog.Logger) *Snapshots {
	h := &Snapshots{mode: mode, ttl: ttl, logger: logger}
	if s != nil {
		h.Set(s)
	}
	return h
}

// Set makes s the snapshot from now on. s must not be nil.
func (h *Snapshots) Set(s Snapshot) { h.snap.Store(&snapshotRef{s}) }

// Expect announces, before serving, that a snapshot is loading
// (decisions.md, "vinsvc: snapshot answers as vPIC gives them"): until
// Loaded, Info reports Loading (the readiness probe's 503), and Only's
// decodes wait for it, at most wait, instead of failing.
func (h *Snapshots) Expect(wait time.Duration) {
	h.loaded, h.loadWait = make(chan struct{}), wait
}

// Loaded ends the load Expect announced: s is the snapshot, nil when it
// could not be opened (the service then goes on without one). Call it once.
func (h *Snapshots) Loaded(s Snapshot) {
	if s != nil {
		h.Set(s)
	}
	if h.loaded != nil {
		close(h.loaded)
	}
}

// current returns the snapshot, nil while none is set.
func (h *Snapshots) current() Snapshot {
	if r := h.snap.Load(); r != nil {
		return r.s
	}
	return nil
}

// loading reports whether an expected snapshot is still loading.
func (h *Snapshots) loading() bool {
	if h.loaded == nil {
		return false
	}
	select {
	case <-h.loaded:
		return false
	default:
		return true
	}
}

// await waits, at most the load's wait and while ctx lasts, for a loading
// snapshot, and reports whether there is one now.
func (h *Snapshots) await(ctx context.Context) bool {
	if !h.loading() {
		return h.current() != nil
	}
	t := time.NewTimer(h.loadWait)
	defer t.Stop()
	select {
	case <-h.loaded:
	case <-t.C:
	case <-ctx.Done():
	}
	return h.current() != nil
}

// Info describes the snapshot for the health report.
func (h *Snapshots) Info() vin.SnapshotInfo {
	info := vin.SnapshotInfo{Mode: h.mode, Loading: h.loading()}
	if s := h.current(); s != nil {
		info.Available, info.Date = true, s.Date()
	}
	return info
}

// Errors returns how many snapshot reads failed since start (not counting
// VINs the snapshot does not know).
func (h *Snapshots) Errors() uint64 { return h.errors.Load() }

// decode answers v from the snapshot, marked with its source and cache
// lifetime. A read failure (not an unknown WMI) is counted and logged.
func (h *Snapshots) decode(ctx context.Context, v string) (vin.Decoded, error) {
	s := h.current()
	if s == nil {
		return vin.Decoded{}, fmt.Errorf("%w: the vPIC snapshot is not available", vin.ErrUpstream)
	}
	dec, err := s.Decode(ctx, v)
	if err != nil {
		if !errors.Is(err, vin.ErrUpstream) {
			h.errors.Add(1)
			h.logger.WarnContext(ctx, "snapshot decode failed", "vin", v, "err", err.Error())
		}
		return vin.Decoded{}, err
	}
	dec.Result.Source, dec.TTL = vin.SourceSnapshot, h.ttl
	return dec, nil
}

// Only is the upstream of VPIC_SNAPSHOT_MODE=only: the snapshot itself.
// vPIC is never called. While the snapshot still loads, a call waits for
// it (Snapshots.Expect); without one, every VIN fails with vin.ErrUpstream.
func Only(h *Snapshots) Upstream { return only{h} }

type only struct{ h *Snapshots }

// errNoSnapshot is Only's answer when no snapshot is there.
var errNoSnapshot = fmt.Errorf("%w: the vPIC snapshot is not available (missing, unusable, or still loading after the wait) and VPIC_SNAPSHOT_MODE is only", vin.ErrUpstream)

func (o only) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	if !o.h.await(ctx) {
		return vin.Decoded{}, errNoSnapshot
	}
	return o.h.decode(ctx, v)
}

// DecodeBatch waits for a loading snapshot once for the whole batch (at
// most the load's wait, not once per VIN).
func (o only) DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error) {
	if !o.h.await(ctx) {
		return nil, errNoSnapshot
	}
	outs := make([]vin.Outcome, len(vins))
	for i, v := range vins {
		dec, err := o.h.decode(ctx, v)
		outs[i] = vin.Outcome{Decoded: dec, Err: err}
	}
	return outs, nil
}

// Failover wraps vPIC (next) for VPIC_SNAPSHOT_MODE=fallback: a VIN that
// next failed, after its retries, is answered by the snapshot when it
// knows the VIN, and that answer is cached for the snapshot's lifetime
// like any upstream answer. While the snapshot still loads, such a VIN
// waits for it, as in only mode (at most the load's wait, once for a
// batch): a service started offline answers its first decodes from the
// snapshot once it is there, not with vPIC's error. Everything else is
// next's.
func Failover(next Upstream, h *Snapshots) Upstream { return failover{next, h} }

type failover struct {
	next Upstream
	h    *Snapshots
}

func (f failover) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	dec, err := f.next.Decode(ctx, v)
	if err == nil || !f.h.await(ctx) {
		return dec, err
	}
	if snap, serr := f.h.decode(ctx, v); serr == nil {
		return snap, nil
	}
	return dec, err
}

func (f failover) DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error) {
	outs, err := f.next.DecodeBatch(ctx, vins)
	if err != nil {
		outs = make([]vin.Outcome, len(vins))
		for i := range outs {
			outs[i].Err = err
		}
	}
	waited, ready := false, false
	for i, v := range vins {
		if outs[i].Err == nil {
			continue
		}
		if !waited {
			waited, ready = true, f.h.await(ctx)
		}
		if !ready {
			break
		}
		if snap, serr := f.h.decode(ctx, v); serr == nil {
			outs[i] = vin.Outcome{Decoded: snap}
		}
	}
	return outs, nil
}
