package vin

import "context"

// The ports of the decoding service (package decoding): what it needs of
// the cache, the upstream and the snapshot, implemented by the cache,
// vpic, cluster and vpicdb packages.

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
