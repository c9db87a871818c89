package decoding

import (
	"context"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Starter is what Late decorates: a decoder whose requests are started and
// then waited for (Request), so that a policy can wait with a timer of its
// own while the shared upstream calls run. *Decoder implements it.
type Starter interface {
	// Start answers a cache hit at once (r nil) or starts, or joins, the
	// VIN's shared upstream call, which r waits for.
	Start(ctx context.Context, v string, withRaw bool) (out vin.Outcome, r *Request)
	// StartBatch answers the VINs' cache hits and starts, or joins, the
	// shared calls of their misses, which the Request waits for.
	StartBatch(ctx context.Context, vins []string, withRaw bool) *Request
}

// Late is the fallback delay (VPIC_SNAPSHOT_AFTER) as a decorator around
// the decoder (STYLE.md item 26): a VIN whose shared call has not answered
// when the delay is over gets the snapshot's answer, not cached, while the
// call goes on and caches vPIC's; a VIN the snapshot does not know waits
// on. It is per VIN: in a batch, a VIN answered in time keeps its answer.
// The delay counts from the cache lookups; hits never wait, and a request
// of hits only costs no timer. Without a snapshot (none set yet, or none
// could be loaded) every VIN waits for its call, as without Late.
type Late struct {
	next  Starter
	h     *Snapshots
	after time.Duration
}

// NewLate returns next with late answers from h's snapshot after the
// fallback delay after (> 0).
func NewLate(next Starter, h *Snapshots, after time.Duration) *Late {
	return &Late{next: next, h: h, after: after}
}

// Decode decodes one normalised, valid VIN (Decoder.Decode), answering from
// the snapshot after the fallback delay.
func (l *Late) Decode(ctx context.Context, v string, withRaw bool) (vin.Outcome, error) {
	out, r := l.next.Start(ctx, v, withRaw)
	if r == nil { // a hit
		return out, nil
	}
	out = l.wait(ctx, r)[0]
	return out, out.Err
}

// DecodeBatch decodes VINs (Decoder.DecodeBatch), answering each from the
// snapshot after the fallback delay.
func (l *Late) DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome {
	return l.wait(ctx, l.next.StartBatch(ctx, vins, withRaw))
}

// wait waits for r's calls at most the delay, counted from here, gives each
// VIN still waiting then the snapshot's answer when it has one, and waits
// for the others' calls.
func (l *Late) wait(ctx context.Context, r *Request) []vin.Outcome {
	if !r.Pending() || l.h.current() == nil { // hits only, or nothing to answer late with: no timer
		return r.Wait(ctx)
	}
	t := time.NewTimer(l.after)
	defer t.Stop()
	for _, i := range r.WaitUntil(ctx, t.C) {
		if dec, err := l.h.decode(ctx, r.VIN(i)); err == nil {
			r.Answer(i, vin.Outcome{Decoded: dec})
		}
	}
	return r.Wait(ctx)
}
