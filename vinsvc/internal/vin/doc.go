// Package vin is the VIN decoding domain: what a VIN is, what a decode
// result holds (Decoded, Outcome), vPIC's flat record (FlatRecord), the
// snapshot's modes and data date, and the errors. It holds types, rules
// and errors only and declares no interface: each port is declared by the
// package that calls through it (the decoder's Cache, Upstream and
// Snapshot in package decoding, an adapter's next in the adapter, what the
// HTTP layer calls in httpapi; STYLE.md items 4 and 26). The service
// itself, the cache and shared upstream calls and the snapshot's policy,
// is package decoding.
//
// It imports the standard library only. What the HTTP layer reports
// (CacheStats, UpstreamState, DataSource, the ErrUpstream kind) is defined
// here too, so httpapi depends on this package only, never on cache or
// vpic.
//
// # Caveats
//
//   - A VIN is normalised (trimmed, uppercased) before it is validated, and
//     the normalised form is the cache key and the answer's vin.
//   - A record without an ErrorCode is no decode (FlatRecord.Decoded): the
//     upstream's answer, or the snapshot's, is refused as an upstream
//     error rather than cached as a result.
//   - Text from vPIC is cleaned where it is read (ParseFlatRecord,
//     FlatRecord.Str): no NUL or other control character, valid UTF-8
//     (CleanText, CleanRecord), so neither the cache nor an answer ever
//     holds one. Entries cached before this rule keep what they had until
//     they expire.
package vin
