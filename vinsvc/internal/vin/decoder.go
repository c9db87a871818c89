package vin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Cache stores decoded VINs. Implemented by package cache.
type Cache interface {
	// Get returns the stored answer for a normalised VIN. ok is false when
	// there is none or it has expired. Raw is filled only when withRaw is
	// true.
	Get(ctx context.Context, v string, withRaw bool) (d Decoded, ok bool, err error)
	// Put stores answers, with their raw records, in one transaction.
	Put(ctx context.Context, ds []Decoded) error
}

// Upstream decodes VINs remotely. Implemented by package vpic.
type Upstream interface {
	// Decode decodes one VIN.
	Decode(ctx context.Context, v string) (Decoded, error)
	// DecodeBatch decodes up to 50 VINs in one upstream call. It returns one
	// Outcome per input VIN, in input order; an Outcome's Err is set when
	// the call succeeded but carried no usable answer for that VIN. A
	// non-nil error means the whole call failed.
	DecodeBatch(ctx context.Context, vins []string) ([]Outcome, error)
}

// Outcome is the answer for one VIN of a request.
type Outcome struct {
	Decoded
	// Cached is true when the answer came from the cache.
	Cached bool
	// Err is set when the VIN could not be decoded; Decoded is then empty.
	Err error
}

// call is one upstream fetch that several requests may wait for.
type call struct {
	done chan struct{}
	out  Outcome
}

// Decoder answers decode requests from the cache and, for misses, from the
// upstream, sharing upstream calls between concurrent requests.
type Decoder struct {
	cache       Cache
	upstream    Upstream
	callTimeout time.Duration
	logger      *slog.Logger
	now         func() time.Time

	mu       sync.Mutex
	inflight map[string]*call
	fetches  sync.WaitGroup

	window       *hitWindow
	hits, misses atomic.Uint64

	// The snapshot (WithSnapshot, SetSnapshot); nil until one is set.
	snap      atomic.Pointer[snapshotRef]
	snapMode  SnapshotMode
	snapAfter time.Duration
	snapTTL   time.Duration
	// loaded is closed when the snapshot being loaded is ready or has
	// failed (ExpectSnapshot, SnapshotLoaded); nil when none is expected.
	// Set before the Decoder serves, read after.
	loaded   chan struct{}
	loadWait time.Duration
	// Answers by source, and snapshot reads that failed (not counting
	// VINs the snapshot does not know).
	fromVPIC, fromSnapshot, snapErrors atomic.Uint64
}

// NewDecoder returns a Decoder. callTimeout bounds one shared upstream call
// (all its attempts), which runs detached from the requests waiting for it.
func NewDecoder(cache Cache, upstream Upstream, callTimeout time.Duration, logger *slog.Logger, now func() time.Time, opts ...Option) *Decoder {
	d := &Decoder{
		cache:       cache,
		upstream:    upstream,
		callTimeout: callTimeout,
		logger:      logger,
		now:         now,
		inflight:    make(map[string]*call),
		window:      newHitWindow(),
		snapMode:    SnapshotOff,
	}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Decode decodes one normalised, valid VIN with a single-VIN upstream call
// on a miss. cached reports whether the cache served it. A hit, the common
// case, returns straight from the cache lookup, without the slices a batch
// needs (they were a tenth of a hit's allocated bytes).
func (d *Decoder) Decode(ctx context.Context, v string, withRaw bool) (Outcome, error) {
	if dec, ok := d.cached(ctx, v, withRaw); ok {
		d.record(1, 1)
		return Outcome{Decoded: dec, Cached: true}, nil
	}
	outs := make([]Outcome, 1)
	d.resolveMisses(ctx, []string{v}, outs, []int{0}, withRaw, false)
	return outs[0], outs[0].Err
}

// DecodeBatch decodes normalised, valid, distinct VINs (at most 50). All
// misses go to the upstream in one batch call. It returns one Outcome per
// input VIN, in input order; a VIN that could not be decoded has Err set.
func (d *Decoder) DecodeBatch(ctx context.Context, vins []string, withRaw bool) []Outcome {
	return d.resolve(ctx, vins, withRaw, true)
}

func (d *Decoder) resolve(ctx context.Context, vins []string, withRaw, batch bool) []Outcome {
	outs := make([]Outcome, len(vins))
	var missIdx []int
	for i, v := range vins {
		if dec, ok := d.cached(ctx, v, withRaw); ok {
			outs[i] = Outcome{Decoded: dec, Cached: true}
			continue
		}
		missIdx = append(missIdx, i)
	}
	d.resolveMisses(ctx, vins, outs, missIdx, withRaw, batch)
	return outs
}

// resolveMisses fills outs[i] for each i in missIdx, the VINs the cache
// did not answer (outs holds the hits already), from the snapshot or the
// upstream, and counts every lookup of vins.
func (d *Decoder) resolveMisses(ctx context.Context, vins []string, outs []Outcome, missIdx []int, withRaw, batch bool) {
	if len(missIdx) > 0 && d.snapMode == SnapshotOnly {
		for _, i := range missIdx {
			outs[i] = d.fromSnapshotStored(ctx, vins[i])
			if !withRaw {
				outs[i].Raw = nil
			}
		}
		missIdx = nil
	}
	if len(missIdx) > 0 {
		// Join the calls already in flight; start one call for the rest.
		waits := make([]*call, len(missIdx))
		var own []string
		var ownCalls []*call
		d.mu.Lock()
		for j, i := range missIdx {
			c, ok := d.inflight[vins[i]]
			if !ok {
				c = &call{done: make(chan struct{})}
				d.inflight[vins[i]] = c
				own = append(own, vins[i])
				ownCalls = append(ownCalls, c)
			}
			waits[j] = c
		}
		d.mu.Unlock()
		if len(own) > 0 {
			d.fetches.Add(1)
			go d.fetch(context.WithoutCancel(ctx), own, ownCalls, batch)
		}

		d.await(ctx, vins, missIdx, waits, outs)
		for _, i := range missIdx {
			if !withRaw {
				outs[i].Raw = nil
			}
		}
	}

	hits := 0
	for _, o := range outs {
		switch {
		case o.Cached:
			hits++
		case o.Err != nil:
		case o.Result.Source == SourceSnapshot:
			d.fromSnapshot.Add(1)
		default:
			d.fromVPIC.Add(1)
		}
	}
	d.record(hits, len(vins))
}

// await waits for the calls of the missed VINs (vins[missIdx[j]] waits on
// waits[j]) and fills outs. In SnapshotFallback mode with a fallback
// delay, VINs whose call has not answered when the delay is over are
// answered from the snapshot (not cached: the call goes on and caches
// vPIC's answer); a VIN the snapshot does not know waits on.
func (d *Decoder) await(ctx context.Context, vins []string, missIdx []int, waits []*call, outs []Outcome) {
	var late <-chan time.Time
	if d.snapshot() != nil && d.snapMode == SnapshotFallback && d.snapAfter > 0 {
		t := time.NewTimer(d.snapAfter)
		defer t.Stop()
		late = t.C
	}
	fired := false
	for j, i := range missIdx {
		if !fired {
			select {
			case <-waits[j].done:
				outs[i] = waits[j].out
				continue
			case <-ctx.Done():
				outs[i] = Outcome{Err: ctx.Err()}
				continue
			case <-late:
				fired = true
			}
		}
		select { // the delay is over: an answer that is there wins
		case <-waits[j].done:
			outs[i] = waits[j].out
			continue
		default:
		}
		if out, ok := d.snapshotFor(ctx, vins[i]); ok {
			outs[i] = out
			continue
		}
		select {
		case <-waits[j].done:
			outs[i] = waits[j].out
		case <-ctx.Done():
			outs[i] = Outcome{Err: ctx.Err()}
		}
	}
}

// snapshotFor decodes v from the snapshot for a request that waited too
// long for vPIC. ok is false when the snapshot cannot answer.
func (d *Decoder) snapshotFor(ctx context.Context, v string) (Outcome, bool) {
	dec, err := d.snapshotDecode(ctx, v)
	if err != nil {
		return Outcome{}, false
	}
	return Outcome{Decoded: dec}, true
}

// fromSnapshotStored answers v from the snapshot and caches the answer for
// the snapshot's lifetime (SnapshotOnly mode).
func (d *Decoder) fromSnapshotStored(ctx context.Context, v string) Outcome {
	if d.snapshot() == nil && !d.awaitSnapshot(ctx) {
		return Outcome{Err: fmt.Errorf("%w: the vPIC snapshot is not available (missing, unusable, or still loading after the wait) and VPIC_SNAPSHOT_MODE is only", ErrUpstream)}
	}
	if dec, ok := d.cached(ctx, v, true); ok { // another request stored it meanwhile
		return Outcome{Decoded: dec, Cached: true}
	}
	dec, err := d.snapshotDecode(ctx, v)
	if err != nil {
		return Outcome{Err: err}
	}
	if err := d.cache.Put(ctx, []Decoded{dec}); err != nil {
		d.logger.WarnContext(ctx, "cache write failed", "count", 1, "err", err.Error())
	}
	return Outcome{Decoded: dec}
}

// snapshotDecode decodes v from the snapshot, marked with its source and
// cache lifetime. A read failure (not an unknown WMI) is counted and
// logged.
func (d *Decoder) snapshotDecode(ctx context.Context, v string) (Decoded, error) {
	snap := d.snapshot()
	if snap == nil {
		return Decoded{}, fmt.Errorf("%w: the vPIC snapshot is not available", ErrUpstream)
	}
	dec, err := snap.Decode(ctx, v)
	if err != nil {
		if !errors.Is(err, ErrUpstream) {
			d.snapErrors.Add(1)
			d.logger.WarnContext(ctx, "snapshot decode failed", "vin", v, "err", err.Error())
		}
		return Decoded{}, err
	}
	dec.Result.Source, dec.TTL = SourceSnapshot, d.snapTTL
	return dec, nil
}

// cached looks v up, treating a cache error as a miss: the upstream can
// still answer, and the cache reports its own health.
func (d *Decoder) cached(ctx context.Context, v string, withRaw bool) (Decoded, bool) {
	dec, ok, err := d.cache.Get(ctx, v, withRaw)
	if err != nil {
		d.logger.WarnContext(ctx, "cache read failed", "vin", v, "err", err.Error())
		return Decoded{}, false
	}
	return dec, ok
}

// fetch resolves the calls this request owns. The owners registered them
// after missing the cache, but another call may have stored the VIN in
// between (a call is removed from inflight only after its answer is
// stored), so the cache is checked once more before going upstream.
func (d *Decoder) fetch(ctx context.Context, vins []string, calls []*call, batch bool) {
	defer d.fetches.Done()
	ctx, cancel := context.WithTimeout(ctx, d.callTimeout)
	defer cancel()

	outs := make([]Outcome, len(vins))
	var need []int
	for i, v := range vins {
		if dec, ok := d.cached(ctx, v, true); ok {
			outs[i] = Outcome{Decoded: dec, Cached: true}
			continue
		}
		need = append(need, i)
	}

	if len(need) > 0 {
		req := make([]string, len(need))
		for j, i := range need {
			req[j] = vins[i]
		}
		got := d.callUpstream(ctx, req, batch)
		var store []Decoded
		for j, i := range need {
			outs[i] = got[j]
			if got[j].Err != nil && d.snapshot() != nil && d.snapMode == SnapshotFallback {
				// vPIC failed after its retries: the snapshot answers, and
				// its answer is cached for the snapshot's lifetime.
				if dec, err := d.snapshotDecode(ctx, vins[i]); err == nil {
					outs[i] = Outcome{Decoded: dec}
				}
			}
			if outs[i].Err == nil {
				store = append(store, outs[i].Decoded)
			}
		}
		if len(store) > 0 {
			if err := d.cache.Put(ctx, store); err != nil {
				d.logger.WarnContext(ctx, "cache write failed", "count", len(store), "err", err.Error())
			}
		}
	}

	d.mu.Lock()
	for i, v := range vins {
		calls[i].out = outs[i]
		delete(d.inflight, v)
	}
	d.mu.Unlock()
	for _, c := range calls {
		close(c.done)
	}
}

func (d *Decoder) callUpstream(ctx context.Context, vins []string, batch bool) []Outcome {
	if !batch {
		out := make([]Outcome, len(vins))
		for i, v := range vins {
			dec, err := d.upstream.Decode(ctx, v)
			out[i] = Outcome{Decoded: dec, Err: err}
		}
		return out
	}
	outs, err := d.upstream.DecodeBatch(ctx, vins)
	if err != nil {
		outs = make([]Outcome, len(vins))
		for i := range outs {
			outs[i].Err = err
		}
	}
	return outs
}

func (d *Decoder) record(hits, lookups int) {
	d.hits.Add(uint64(hits))
	d.misses.Add(uint64(lookups - hits))
	d.window.add(d.now(), hits, lookups)
}

// HitRate returns cache hits / lookups over the last 24 hours, 0 when there
// were none.
func (d *Decoder) HitRate() float64 { return d.window.rate(d.now()) }

// SourceCounts returns how many answers came from vPIC and from the
// snapshot since start (cache hits are Counts' hits), and how many
// snapshot reads failed.
func (d *Decoder) SourceCounts() (vpic, snapshot, snapshotErrors uint64) {
	return d.fromVPIC.Load(), d.fromSnapshot.Load(), d.snapErrors.Load()
}

// snapshotRef boxes a Snapshot for the atomic pointer.
type snapshotRef struct{ s Snapshot }

// snapshot returns the snapshot, nil while none is set.
func (d *Decoder) snapshot() Snapshot {
	if r := d.snap.Load(); r != nil {
		return r.s
	}
	return nil
}

// SetSnapshot makes s the snapshot from now on, for the mode WithSnapshot
// set. The snapshot loads after the server has started (it takes
// seconds), so the Decoder answers without it until then. Safe for
// concurrent use; s must not be nil.
func (d *Decoder) SetSnapshot(s Snapshot) { d.snap.Store(&snapshotRef{s}) }

// ExpectSnapshot tells the Decoder, before it serves, that a snapshot is
// loading (decisions.md, "vinsvc: snapshot answers as vPIC gives them"):
// until SnapshotLoaded, Snapshot reports Loading (the readiness probe's
// 503), and in SnapshotOnly mode a miss waits for the snapshot, at most
// wait, instead of failing.
func (d *Decoder) ExpectSnapshot(wait time.Duration) {
	d.loaded, d.loadWait = make(chan struct{}), wait
}

// SnapshotLoaded ends the load ExpectSnapshot announced: s is the snapshot,
// nil when it could not be opened (the Decoder then goes on without one).
// Call it once.
func (d *Decoder) SnapshotLoaded(s Snapshot) {
	if s != nil {
		d.SetSnapshot(s)
	}
	if d.loaded != nil {
		close(d.loaded)
	}
}

// loading reports whether an expected snapshot is still loading.
func (d *Decoder) loading() bool {
	if d.loaded == nil {
		return false
	}
	select {
	case <-d.loaded:
		return false
	default:
		return true
	}
}

// awaitSnapshot waits, at most the load's wait and while ctx lasts, for a
// loading snapshot, and reports whether there is one now.
func (d *Decoder) awaitSnapshot(ctx context.Context) bool {
	if !d.loading() {
		return d.snapshot() != nil
	}
	t := time.NewTimer(d.loadWait)
	defer t.Stop()
	select {
	case <-d.loaded:
	case <-t.C:
	case <-ctx.Done():
	}
	return d.snapshot() != nil
}

// Snapshot describes the snapshot for the health report.
func (d *Decoder) Snapshot() SnapshotInfo {
	info := SnapshotInfo{Mode: d.snapMode, Loading: d.loading()}
	if snap := d.snapshot(); snap != nil {
		info.Available, info.Date = true, snap.Date()
	}
	return info
}

// Counts returns the cache hits and misses since start.
func (d *Decoder) Counts() (hits, misses uint64) { return d.hits.Load(), d.misses.Load() }

// Wait blocks until the upstream calls started so far have finished (and
// stored their answers), or ctx ends. Call it after the HTTP server has
// drained and before the cache is closed.
func (d *Decoder) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() { d.fetches.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
