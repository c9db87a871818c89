package decoding

import (
	"context"
	"log/slog"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Service is what the HTTP layer decodes with, composed explicitly: the
// Decoder's answers (through Late when there is a fallback delay), the
// Decoder's counts, and the snapshot's state for health. It is safe for
// concurrent use.
type Service struct {
	dec     *Decoder
	answers answerer // dec, or Late around it
	h       *Snapshots
}

// answerer is what answers a Service's decodes: the Decoder, or a policy
// decorating it.
type answerer interface {
	Decode(ctx context.Context, v string, withRaw bool) (vin.Outcome, error)
	DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome
}

// NewService returns the Service over dec and h; after is the fallback
// delay (VPIC_SNAPSHOT_AFTER): in fallback mode, when it is not 0, dec's
// answers go through Late.
func NewService(dec *Decoder, h *Snapshots, after time.Duration) *Service {
	s := &Service{dec: dec, answers: dec, h: h}
	if h.mode == vin.SnapshotFallback && after > 0 {
		s.answers = NewLate(dec, h, after)
	}
	return s
}

// Compose builds the Service for h's mode: a Decoder over cache and the
// upstream the mode makes of upstream (vPIC itself when off, vPIC with
// Failover for fallback, Only for only), with the late answers of after in
// fallback mode. callTimeout bounds one shared upstream call.
func Compose(cache Cache, upstream Upstream, h *Snapshots, after, callTimeout time.Duration, logger *slog.Logger, now func() time.Time) *Service {
	switch h.mode {
	case vin.SnapshotOnly:
		upstream = Only(h)
	case vin.SnapshotFallback:
		upstream = Failover(upstream, h)
	}
	return NewService(New(cache, upstream, callTimeout, logger, now), h, after)
}

// Decode decodes one normalised, valid VIN (Decoder.Decode; Late.Decode
// with a fallback delay).
func (s *Service) Decode(ctx context.Context, v string, withRaw bool) (vin.Outcome, error) {
	return s.answers.Decode(ctx, v, withRaw)
}

// DecodeBatch decodes normalised, valid, distinct VINs (Decoder.DecodeBatch;
// Late.DecodeBatch with a fallback delay).
func (s *Service) DecodeBatch(ctx context.Context, vins []string, withRaw bool) []vin.Outcome {
	return s.answers.DecodeBatch(ctx, vins, withRaw)
}

// Suggest answers a typed VIN from the snapshot: valid, or the likeliest
// VINs one edit away (Snapshots.Suggest). It never calls vPIC nor the
// cache.
func (s *Service) Suggest(ctx context.Context, typed string) (vin.Suggestions, error) {
	return s.h.Suggest(ctx, typed)
}

// HitRate returns the Decoder's cache hits / lookups over the last 24
// hours (Decoder.HitRate).
func (s *Service) HitRate() float64 { return s.dec.HitRate() }

// Counts returns the Decoder's cache hits and misses since start
// (Decoder.Counts).
func (s *Service) Counts() (hits, misses uint64) { return s.dec.Counts() }

// SourceCounts returns how many fresh answers came from vPIC and from the
// snapshot since start (Decoder.SourceCounts), late answers included.
func (s *Service) SourceCounts() (vpic, snapshot uint64) { return s.dec.SourceCounts() }

// SnapshotErrors returns how many snapshot reads failed since start
// (Snapshots.Errors).
func (s *Service) SnapshotErrors() uint64 { return s.h.Errors() }

// Snapshot describes the snapshot for the health report (Snapshots.Info).
func (s *Service) Snapshot() vin.SnapshotInfo { return s.h.Info() }

// Snapshots returns the snapshot holder, for the loader to fill.
func (s *Service) Snapshots() *Snapshots { return s.h }

// Wait blocks until the upstream calls started so far have finished and
// stored their answers, or ctx ends (Decoder.Wait). Call it after the HTTP
// server has drained and before the cache is closed.
func (s *Service) Wait(ctx context.Context) error { return s.dec.Wait(ctx) }
