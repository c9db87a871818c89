package decoding

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// call is one upstream fetch that several requests may wait for.
type call struct {
	done chan struct{}
	out  vin.Outcome
}

// Decoder answers decode requests from the cache and, for misses, from the
// upstream, sharing upstream calls between concurrent requests. It knows
// nothing of the snapshot nor of any delay: a policy that waits with a
// timer of its own (Late) starts a request (Start, StartBatch) and waits
// for it through the Request. It is safe for concurrent use.
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
	// Answers by source (Result.Source of what the upstream gave).
	fromVPIC, fromSnapshot atomic.Uint64
}

// New returns a Decoder over cache and upstream. callTimeout bounds one
// shared upstream call (all its attempts), which runs detached from the
// requests waiting for it.
func New(cache Cache, upstream Upstream, callTimeout time.Duration, logger *slog.Logger, now func() time.Time) *Decoder {
	return &Decoder{
		cache:       cache,
		upstream:    upstream,
		callTimeout: callTimeout,
		logger:      logger,
		now:         now,
		inflight:    make(map[string]*call),
		window:      newHitWindow(),
	}
}

// Decode decodes one normalised, valid VIN with a single-VIN upstream call
// on a miss. A hit, the common case, returns straight from the cache
// lookup, without the slices a batch needs (they were a tenth of a hit's
// allocated bytes).
func (d *Decoder) Decode(ctx context.Context, v string, withRaw bool) (vin.Outcome, error) {
	out, r := d.Start(ctx, v, withRaw)
	if r == nil {
		return out, nil
	}
	out = r.Wait(ctx)[0]
	return out, out.Err
}

// DecodeBatch decodes normalised, valid, distinct VINs (at most 50). All
// misses go to the upstream in one batch call. It returns one Outcome per
// input VIN, in input order; a VIN that could not be decoded has Err set.
func (d *Decoder) DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome {
	return d.StartBatch(ctx, vins, withRaw).Wait(ctx)
}

// Start is Decode's first half: it looks v up in the cache and answers a
// hit at once (out, with r nil: a hit allocates nothing more). A miss
// starts v's shared single-VIN upstream call, or joins the one in flight;
// r waits for it.
func (d *Decoder) Start(ctx context.Context, v string, withRaw bool) (out vin.Outcome, r *Request) {
	if dec, ok := d.cached(ctx, v, withRaw); ok {
		d.record(1, 1)
		return vin.Outcome{Decoded: dec, Cached: true}, nil
	}
	return vin.Outcome{}, d.start(ctx, []string{v}, make([]vin.Outcome, 1), []int{0}, false, withRaw)
}

// StartBatch is DecodeBatch's first half: it answers vins' cache hits and
// starts one batch call for the misses no call is fetching already (those
// join the calls in flight). The Request waits for them.
func (d *Decoder) StartBatch(ctx context.Context, vins []string, withRaw bool) *Request {
	outs, missIdx := d.cachedAll(ctx, vins, withRaw)
	return d.start(ctx, vins, outs, missIdx, true, withRaw)
}

// cachedAll answers each of vins the cache holds; missIdx lists the others.
func (d *Decoder) cachedAll(ctx context.Context, vins []string, withRaw bool) (outs []vin.Outcome, missIdx []int) {
	outs = make([]vin.Outcome, len(vins))
	for i, v := range vins {
		if dec, ok := d.cached(ctx, v, withRaw); ok {
			outs[i] = vin.Outcome{Decoded: dec, Cached: true}
			continue
		}
		missIdx = append(missIdx, i)
	}
	return outs, missIdx
}

// Request is a decode request under way (Start, StartBatch): its cache
// hits are answered, its misses wait for shared upstream calls, which run
// detached from it. Wait ends it; before that, a policy may wait with a
// timer of its own (WaitUntil) and answer a VIN still waiting in its
// call's place (Answer), as Late does. A Request is used by one goroutine.
type Request struct {
	d       *Decoder
	vins    []string
	outs    []vin.Outcome
	withRaw bool
	// vins[idx[j]] waits on calls[j]; calls[j] is nil once it is answered.
	idx   []int
	calls []*call
}

// start joins the calls already in flight for vins[missIdx] and starts one
// call for the rest (a batch call when batch is true).
func (d *Decoder) start(ctx context.Context, vins []string, outs []vin.Outcome, missIdx []int, batch, withRaw bool) *Request {
	r := &Request{d: d, vins: vins, outs: outs, withRaw: withRaw, idx: missIdx, calls: make([]*call, len(missIdx))}
	if len(missIdx) == 0 {
		return r
	}
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
		r.calls[j] = c
	}
	d.mu.Unlock()
	if len(own) > 0 {
		d.fetches.Add(1)
		go d.fetch(context.WithoutCancel(ctx), own, ownCalls, batch)
	}
	return r
}

// VIN returns the request's VIN at position i.
func (r *Request) VIN(i int) string { return r.vins[i] }

// Pending reports whether a VIN of the request still waits for its call.
// A request of cache hits only has none.
func (r *Request) Pending() bool {
	for _, c := range r.calls {
		if c != nil {
			return true
		}
	}
	return false
}

// WaitUntil takes the answers of the request's calls, in the request's
// order, as they come, until each VIN has one or stop fires (a nil stop
// never does). A VIN still waiting when ctx ends gets ctx's error. It
// returns the positions of the VINs still waiting when stop fired (an
// answer there by then is taken), nil when none is.
func (r *Request) WaitUntil(ctx context.Context, stop <-chan time.Time) []int {
	for j, c := range r.calls {
		if c == nil {
			continue
		}
		select {
		case <-c.done:
			r.outs[r.idx[j]] = c.out
		case <-ctx.Done():
			r.outs[r.idx[j]] = vin.Outcome{Err: ctx.Err()}
		case <-stop:
			return r.waiting()
		}
		r.calls[j] = nil
	}
	return nil
}

// waiting takes the answers that have come and lists the positions of the
// VINs still waiting.
func (r *Request) waiting() []int {
	var left []int
	for j, c := range r.calls {
		if c == nil {
			continue
		}
		select {
		case <-c.done:
			r.outs[r.idx[j]] = c.out
			r.calls[j] = nil
		default:
			left = append(left, r.idx[j])
		}
	}
	return left
}

// Answer gives the VIN at position i, while it still waits, out as its
// answer: it waits no longer, and its call goes on and caches the
// upstream's answer (out is not cached). A VIN already answered keeps its
// answer.
func (r *Request) Answer(i int, out vin.Outcome) {
	for j, c := range r.calls {
		if c != nil && r.idx[j] == i {
			r.outs[i], r.calls[j] = out, nil
			return
		}
	}
}

// Wait waits for the answers still to come (ctx's error for each VIN still
// waiting when ctx ends) and ends the request: it drops the raw records
// the caller did not ask for, counts the request's lookups and answers,
// and returns one Outcome per VIN, in order. Call it once, last.
func (r *Request) Wait(ctx context.Context) []vin.Outcome {
	r.WaitUntil(ctx, nil)
	r.d.finish(r.outs, r.withRaw)
	return r.outs
}

// finish drops the raw records the caller did not ask for, and counts
// every lookup of the request.
func (d *Decoder) finish(outs []vin.Outcome, withRaw bool) {
	hits := 0
	for i, o := range outs {
		if !withRaw {
			outs[i].Raw = nil
		}
		switch {
		case o.Cached:
			hits++
		case o.Err != nil:
		case o.Result.Source == vin.SourceSnapshot:
			d.fromSnapshot.Add(1)
		default:
			d.fromVPIC.Add(1)
		}
	}
	d.record(hits, len(outs))
}

// cached looks v up, treating a cache error as a miss: the upstream can
// still answer, and the cache reports its own health.
func (d *Decoder) cached(ctx context.Context, v string, withRaw bool) (vin.Decoded, bool) {
	dec, ok, err := d.cache.Get(ctx, v, withRaw)
	if err != nil {
		d.logger.WarnContext(ctx, "cache read failed", "vin", v, "err", err.Error())
		return vin.Decoded{}, false
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

	outs, need := d.cachedAll(ctx, vins, true)
	if len(need) > 0 {
		req := make([]string, len(need))
		for j, i := range need {
			req[j] = vins[i]
		}
		got := d.callUpstream(ctx, req, batch)
		var fresh []vin.Decoded
		for j, i := range need {
			outs[i] = got[j]
			if outs[i].Err == nil {
				fresh = append(fresh, outs[i].Decoded)
			}
		}
		if len(fresh) > 0 {
			if err := d.cache.Put(ctx, fresh); err != nil {
				d.logger.WarnContext(ctx, "cache write failed", "count", len(fresh), "err", err.Error())
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

func (d *Decoder) callUpstream(ctx context.Context, vins []string, batch bool) []vin.Outcome {
	if !batch {
		out := make([]vin.Outcome, len(vins))
		for i, v := range vins {
			dec, err := d.upstream.Decode(ctx, v)
			out[i] = vin.Outcome{Decoded: dec, Err: err}
		}
		return out
	}
	outs, err := d.upstream.DecodeBatch(ctx, vins)
	if err != nil {
		outs = make([]vin.Outcome, len(vins))
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

// Counts returns the cache hits and misses since start.
func (d *Decoder) Counts() (hits, misses uint64) { return d.hits.Load(), d.misses.Load() }

// SourceCounts returns how many fresh answers (not cache hits) came from
// vPIC and from the snapshot since start, by the answers' Result.Source.
func (d *Decoder) SourceCounts() (vpic, snapshot uint64) {
	return d.fromVPIC.Load(), d.fromSnapshot.Load()
}

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
