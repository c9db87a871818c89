// Package vin is the VIN decoding domain: what a VIN is, what a decode
// result holds, vPIC's flat record (FlatRecord), and the Decoder that
// answers from the cache, the upstream or the vPIC snapshot.
//
// It imports no web framework, database or upstream client: the cache, the
// upstream and the snapshot are small interfaces defined here and
// implemented by the cache, vpic and vpicdb packages. What the HTTP layer reports of them (CacheStats,
// UpstreamState, DataSource, the ErrUpstream kind) is defined here too, so
// httpapi depends on this package only, never on cache or vpic.
//
// # Caveats
//
//   - A VIN is normalised (trimmed, uppercased) before it is validated, and
//     the normalised form is the cache key and the answer's vin.
//   - Every answer the upstream gave is cached, whatever its error code (a
//     VIN with a bad check digit decodes to error_code "1" and is cached like
//     a clean one); a failed upstream call is never cached.
//   - Concurrent requests for the same uncached VIN share one upstream call,
//     and a batch sends all its misses in one upstream call. The shared call
//     runs detached from the request that started it, so a client that hangs
//     up does not fail the others waiting for the same VIN, and its answer is
//     still cached.
//   - The 24-hour hit rate counts each distinct VIN a request asks for once.
//   - The snapshot (WithSnapshot, SetSnapshot) answers only what vPIC could
//     not: in SnapshotFallback mode a VIN whose vPIC call failed is decoded
//     from it and cached for the snapshot's TTL; one whose call is still
//     running after the fallback delay gets the snapshot's answer uncached
//     while the call goes on and caches vPIC's. SnapshotOnly never calls
//     the upstream. A VIN the snapshot does not know fails as before.
//     Result.Source says where an answer came from, cached or not.
package vin
