package decoding

import (
	"context"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// The ports of the decoding service: what it composes, declared here where
// it is called (STYLE.md items 4 and 26). The cache, vpic, cluster and
// vpicdb packages implement them without importing this package; cmd/vinsvc
// wires them.

// Cache stores decoded VINs. *cache.Cache (the pod's bbolt file) and
// *cluster.Cache (that file with Redis as a second tier) implement it.
type Cache interface {
	// Get returns the stored answer for a normalised VIN. ok is false when
	// there is none or it has expired. Raw is filled only when withRaw is
	// true. An error is a failed read; the Decoder treats it as a miss.
	Get(ctx context.Context, v string, withRaw bool) (d vin.Decoded, ok bool, err error)
	// Put stores answers, with their raw records, in one transaction.
	Put(ctx context.Context, ds []vin.Decoded) error
}

// Upstream decodes VINs remotely. *vpic.Client and *cluster.Upstream (vPIC
// behind the replicas' per-VIN locks) implement it; Only and Failover make
// one of the snapshot.
type Upstream interface {
	// Decode decodes one VIN. A failure to get an answer is a kind of
	// vin.ErrUpstream.
	Decode(ctx context.Context, v string) (vin.Decoded, error)
	// DecodeBatch decodes up to 50 VINs in one upstream call. It returns one
	// Outcome per input VIN, in input order; an Outcome's Err is set when
	// the call succeeded but carried no usable answer for that VIN. A
	// non-nil error means the whole call failed.
	DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error)
}

// Snapshot decodes VINs from a local copy of vPIC's database; *vpicdb.DB
// implements it. Snapshots holds the one in use.
type Snapshot interface {
	// Decode decodes one normalised, valid VIN, filling Raw with the flat
	// record it produced. A VIN whose WMI the snapshot does not know is an
	// error that is a kind of vin.ErrUpstream: the snapshot must not answer
	// it.
	Decode(ctx context.Context, v string) (vin.Decoded, error)
	// Date is the snapshot's data date.
	Date() time.Time
}
