// Package cache keeps decoded VINs in an embedded bbolt file.
//
// # Layout
//
// Four buckets: "results" maps a VIN to its store time and mapped result
// (a compact binary record, see record.go),
// "raw" maps it to the upstream record exactly as received (read only when a
// client asks for raw fields, so ordinary hits never touch it), "stored" is
// the expiry index (8-byte big-endian store time followed by the VIN, empty
// value) and "meta" holds the schema version and the entry count.
//
// # Caveats
//
//   - An entry lives for the TTL given to Open, counted from when it was
//     stored. The TTL is applied at read time, so an entry past its lifetime
//     is never served even before the sweep removes it, and a changed
//     CACHE_TTL applies to entries stored before the change.
//   - Sweep walks the expiry index from its oldest key, never the whole
//     store, and deletes in chunks of bounded size, one write transaction
//     per chunk, pausing between chunks as long as the last one took.
//     bbolt readers never wait for a writer, and a writer waits about one
//     chunk at most.
//   - Only one process may open the file: Open gives up after one second
//     when another holds its lock, instead of hanging.
//   - The file does not shrink after a sweep; bbolt reuses the freed pages.
package cache
