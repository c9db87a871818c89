package vin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Len is the length of a full VIN.
const Len = 17

// ErrInvalid is returned for a string that is not a valid 17-character VIN.
var ErrInvalid = errors.New("invalid vin")

// ErrUpstream is the kind of every failure to get an answer from the
// upstream: callers test for it with errors.Is. The upstream client keeps
// its own sentinel of this kind (vpic.ErrUpstream, made with NewKindError),
// so the HTTP layer classifies upstream failures without importing the
// client.
var ErrUpstream = errors.New("upstream failure")

// NewKindError returns an error whose text is msg and that matches kind
// under errors.Is, besides itself. A dependency package uses it for a
// sentinel of its own (own text, own identity) that callers can still
// classify by the domain's kind, such as ErrUpstream.
func NewKindError(kind error, msg string) error { return &kindError{kind: kind, msg: msg} }

// kindError is a sentinel that belongs to a domain kind of error.
type kindError struct {
	kind error
	msg  string
}

func (e *kindError) Error() string { return e.msg }

// Is reports whether target is e's kind; errors.Is checks e itself first.
func (e *kindError) Is(target error) bool { return target == e.kind }

// DataSource names the upstream data source in responses (X-Data-Source).
const DataSource = "NHTSA vPIC"

// CacheStats describes the cache for the health report and metrics.
type CacheStats struct {
	Entries   int64
	SizeBytes int64
	Evictions uint64
}

// UpstreamState is the result of the last upstream check.
type UpstreamState struct {
	Reachable bool
	// LastCheck is zero until a check has finished.
	LastCheck time.Time
}

// Normalize returns s trimmed of surrounding white space and uppercased, the
// form a VIN is validated, cached and answered in.
//
// Only ASCII letters are upper-cased: Unicode case mapping turns some
// other characters into ASCII ones (ſ, U+017F, becomes S; ı, U+0131,
// becomes I), which would let a string that is not a VIN pass as one.
// Any other character stays as it is, for Parse to refuse.
func Normalize(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'a' <= c && c <= 'z' {
			return asciiUpper(s, i)
		}
	}
	return s
}

// asciiUpper upper-cases the ASCII letters of s from i on.
func asciiUpper(s string, i int) string {
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'a' <= c && c <= 'z' {
			b[i] = c - ('a' - 'A')
		}
	}
	return string(b)
}

// Parse normalises s and checks it against ^[A-HJ-NPR-Z0-9]{17}$. It returns
// the normalised VIN, or an error wrapping ErrInvalid that says what is
// wrong.
func Parse(s string) (string, error) {
	v := Normalize(s)
	if n := utf8.RuneCountInString(v); n != Len {
		return v, fmt.Errorf("%w: must be exactly %d characters, got %d", ErrInvalid, Len, n)
	}
	pos := 0
	for _, r := range v {
		pos++
		if r >= utf8.RuneSelf || !allowed(byte(r)) {
			return v, fmt.Errorf("%w: character %q at position %d is not allowed (only A-Z without I, O, Q, and 0-9)", ErrInvalid, r, pos)
		}
	}
	return v, nil
}

// Valid reports whether s, as given, is a normalised valid VIN.
func Valid(s string) bool {
	if len(s) != Len {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !allowed(s[i]) {
			return false
		}
	}
	return true
}

func allowed(b byte) bool {
	switch {
	case b >= '0' && b <= '9':
		return true
	case b >= 'A' && b <= 'Z':
		return b != 'I' && b != 'O' && b != 'Q'
	}
	return false
}

// Result is a decoded VIN. Pointer fields are nil when the upstream has no
// value for them.
type Result struct {
	VIN                  string
	Make                 *string
	Model                *string
	ModelYear            *string
	Trim                 *string
	Series               *string
	BodyClass            *string
	DriveType            *string
	EngineDisplacementCC *float64
	EngineDisplacementL  *float64
	EngineCylinders      *int
	FuelTypePrimary      *string
	TransmissionStyle    *string
	TransmissionSpeeds   *string
	PlantCity            *string
	PlantState           *string
	PlantCountry         *string
	ManufacturerName     *string
	VehicleType          *string
	// ErrorCode is the upstream's decode code list as given ("0" is a clean
	// decode, "1,11" lists two codes).
	ErrorCode string
	// ErrorText is nil when ErrorCode is "0".
	ErrorText *string
	// Source is SourceSnapshot for an answer from the snapshot and empty
	// for vPIC's (SourceOf reads it). The Decoder sets it; a cached answer
	// keeps it.
	Source string
}

// Decoded is an upstream answer for one VIN: the mapped result and the
// upstream's record exactly as received.
type Decoded struct {
	Result Result
	// Raw is the upstream's result record as received: every key and value
	// unchanged and in order, insignificant white space removed. It is nil
	// when the caller did not ask for it.
	Raw json.RawMessage
	// TTL is how long the cache keeps the answer; 0 means the cache's own
	// lifetime (CACHE_TTL). Snapshot answers carry SNAPSHOT_CACHE_TTL.
	TTL time.Duration
}

// Outcome is the answer for one VIN of a request.
type Outcome struct {
	Decoded
	// Cached is true when the answer came from the cache.
	Cached bool
	// Err is set when the VIN could not be decoded; Decoded is then empty.
	Err error
}
