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
// upstream, sharing upstream calls between concurrent requests. It is safe
// for concurrent use.
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
	return d.decode(ctx, v, withRaw, lateAnswer{})
}

// decode is Decode with the late answer of a fallback delay (nil: none).
func (d *Decoder) decode(ctx context.Context, v string, withRaw bool, late lateAnswer) (vin.Outcome, error) {
	if dec, ok := d.cached(ctx, v, withRaw); ok {
		d.record(1, 1)
		return vin.Outcome{Decoded: dec, Cached: true}, nil
	}
	p := d.start(ctx, []string{v}, []int{0}, false)
	outs := make([]vin.Outcome, 1)
	p.wait(ctx, outs, late)
	d.finish(outs, withRaw)
	return outs[0], outs[0].Err
}

// DecodeBatch decodes normalised, valid, distinct VINs (at most 50). All
// misses go to the upstream in one batch call. It returns one Outcome per
// input VIN, in input order; a VIN that could not be decoded has Err set.
func (d *Decoder) DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome {
	return d.decodeBatch(ctx, vins, withRaw, lateAnswer{})
}

// decodeBatch is DecodeBatch with the late answer of a fallback delay.
func (d *Decoder) decodeBatch(ctx context.Context, vins []string, withRaw bool, late lateAnswer) []vin.Outcome {
	outs, p := d.lookup(ctx, vins, withRaw)
	p.wait(ctx, outs, late)
	d.finish(outs, withRaw)
	return outs
}

// SourceCounts returns how many answers came from vPIC and from the
// snapshot since start (cache hits are Counts' hits).
func (d *Decoder) SourceCounts() (vpic, snapshot uint64) {
	return d.fromVPIC.Load(), d.fromSnapshot.Load()
}

// lookup answers vins' cache hits into outs and starts (or joins) the
// shared calls of the misses, which pending waits for.
func (d *Decoder) lookup(ctx context.Context, vins []string, withRaw bool) ([]vin.Outcome, *pending) {
	outs, missIdx := d.cachedAll(ctx, vins, withRaw)
	return outs, d.start(ctx, vins, missIdx, true)
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

// pending is the misses of one request: vins[idx[j]] waits on calls[j].
type pending struct {
	vins  []string
	idx   []int
	calls []*call
}

// start joins the calls already in flight for vins[missIdx] and starts one
// call for the rest (a batch call when batch is true).
func (d *Decoder) start(ctx context.Context, vins []string, missIdx []int, batch bool) *pending {
	p := &pending{vins: vins, idx: missIdx, calls: make([]*call, len(missIdx))}
	if len(missIdx) == 0 {
		return p
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
		p.calls[j] = c
	}
	d.mu.Unlock()
	if len(own) > 0 {
		d.fetches.Add(1)
		go d.fetch(context.WithoutCancel(ctx), own, ownCalls, batch)
	}
	return p
}

// wait fills outs with the calls' answers as they come, or ctx's error.
// late, when not nil, is the fallback delay, counted from here: each VIN
// whose call has not answered when it is over is offered to late (true: it
// filled the outcome and the VIN waits no longer).
func (p *pending) wait(ctx context.Context, outs []vin.Outcome, late lateAnswer) {
	var timer <-chan time.Time
	if late.after > 0 && len(p.idx) > 0 { // a hit costs no timer
		t := time.NewTimer(late.after)
		defer t.Stop()
		timer = t.C
	}
	fired := false
	for j, i := range p.idx {
		c := p.calls[j]
		if !fired {
			select {
			case <-c.done:
				outs[i] = c.out
				continue
			case <-ctx.Done():
				outs[i] = vin.Outcome{Err: ctx.Err()}
				continue
			case <-timer:
				fired = true
			}
		}
		select { // the delay is over: an answer that is there wins
		case <-c.done:
			outs[i] = c.out
			continue
		default:
		}
		if out, ok := late.answer(ctx, p.vins[i]); ok {
			outs[i] = out
			continue
		}
		select {
		case <-c.done:
			outs[i] = c.out
		case <-ctx.Done():
			outs[i] = vin.Outcome{Err: ctx.Err()}
		}
	}
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
		var store []vin.Decoded
		for j, i := range need {
			outs[i] = got[j]
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
