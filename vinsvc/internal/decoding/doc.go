// Package decoding answers VIN decode requests: from the cache, from the
// upstream (vPIC) through calls that concurrent requests share, and from
// the vPIC snapshot as VPIC_SNAPSHOT_MODE says. It is the service's
// orchestration over package vin's types; it declares the ports it
// composes (Cache, Upstream, Snapshot: ports.go), which the cache, vpic,
// cluster and vpicdb packages implement, and imports none of them
// (decisions.md, STYLE.md items 4 and 26: domain apart from orchestration,
// interfaces on the consumer's side, a policy a decorator).
//
// The parts, as cmd/vinsvc wires them:
//
//   - Decoder: cache lookups, shared upstream calls and batches, the hit
//     rate and the answers' counts. It knows nothing of the snapshot nor of
//     any delay. A request is started (Start, StartBatch) and then waited
//     for (Request), so that a policy can wait with a timer of its own.
//   - Snapshots: the snapshot in use and its load at start (Expect, Loaded),
//     the mode, and the lifetime of its answers in the cache.
//   - The snapshot policy, as decorators: Only (VPIC_SNAPSHOT_MODE=only) is
//     an upstream made of the snapshot; Failover wraps vPIC so that a VIN
//     vPIC failed (after its retries) is answered by the snapshot; Late
//     wraps the Decoder so that, with a fallback delay, a VIN whose call is
//     still running after it gets the snapshot's answer while the call goes
//     on.
//   - Service: what the HTTP layer calls, composed explicitly of the
//     Decoder (or Late around it) for answers, the Decoder for counts and
//     Snapshots for the snapshot's state. Compose builds it for the mode.
//
// # Caveats
//
//   - Every answer the upstream gave is cached, whatever its error code (a
//     VIN with a bad check digit decodes to error_code "1" and is cached like
//     a clean one); a failed upstream call is never cached.
//   - Concurrent requests for the same uncached VIN share one upstream call,
//     and a batch sends all its misses in one upstream call. The shared call
//     runs detached from the request that started it, so a client that hangs
//     up does not fail the others waiting for the same VIN, and its answer is
//     still cached.
//   - The 24-hour hit rate counts each distinct VIN a request asks for once.
//   - The snapshot answers only what vPIC could not: in fallback mode a VIN
//     whose vPIC call failed is decoded from it (Failover, inside the shared
//     call) and cached for the snapshot's TTL; one whose call is still
//     running after the fallback delay gets the snapshot's answer uncached
//     (Late) while the call goes on and caches vPIC's; this is per VIN of a
//     batch, the delay counts from the cache lookups, hits never wait, and a
//     request of hits costs no timer. Only mode never calls vPIC, and while
//     the snapshot still loads a miss waits for it (Snapshots.Expect). A VIN
//     the snapshot does not know fails as before, or, after the delay,
//     waits for its call. Result.Source says where an answer came from,
//     cached or not.
package decoding
