// Package pdfstore keeps downloaded patent PDFs, in a local directory or an
// S3 bucket (STORAGE_BACKEND), and fetches them from the links the patent
// search returns through a guarded Downloader.
//
// # Layout
//
// A PDF's key is "patents/<ID>.pdf". Put returns the location recorded as
// the patent's pdf_path: "local:patents/<ID>.pdf", relative to STORAGE_DIR,
// or "s3://<bucket>/patents/<ID>.pdf".
//
// # Caveats
//
//   - Keys come only from validated patent ids (decisions.md:
//     ^[A-Z]{2}[A-Z0-9]{1,20}$, "it is used in storage keys"). Key never
//     cleans or normalises its input: anything else, a lower-case id
//     included, is ErrInvalidKey, so no user input becomes a path.
//   - Open, Exists and Put look a PDF up by id in the configured backend;
//     a recorded pdf_path is informational. Changing STORAGE_DIR or the
//     backend moves nothing.
//   - Local writes a temp file (".<ID>.<random>.tmp") in the same folder,
//     fsyncs it, renames it over the final name and fsyncs the folder, so a
//     reader sees the old PDF or the complete new one, never a partial
//     file. Concurrent Puts of one id are last-writer-wins. A failed Put
//     removes its temp file; NewLocal removes temp files a crashed process
//     left more than an hour ago. Files are 0o640 and new directories
//     0o750 (an existing directory's mode is left alone). Local never
//     recreates a vanished directory (it could be an unmounted volume):
//     Put then fails and Check reports it.
//   - S3.Put reads the whole PDF into memory before one PutObject, which
//     S3 makes visible atomically; callers hand it Fetch's bytes, already
//     bounded by the download cap. An Exists on a missing bucket answers
//     false (a HeadObject 404 cannot tell); Check and Open report it.
//   - NewS3 uses config.LoadDefaultConfig (AWS_* variables, shared files,
//     roles); the region defaults to us-east-1. With S3_ENDPOINT_URL it uses
//     path-style addressing and, unless AWS_REQUEST_CHECKSUM_CALCULATION /
//     AWS_RESPONSE_CHECKSUM_VALIDATION are set, sends and validates
//     flexible checksums only where the API requires them: since early
//     2025 the SDK otherwise adds CRC32 checksums (aws-chunked trailers
//     over TLS) that several S3-compatible stores reject. The SDK's own
//     logger still writes its rare warnings to stderr.
//   - Downloader matches hosts exactly (case-insensitive, trailing dot and
//     any port ignored; no subdomain wildcards). Names are not resolved, so
//     the list must hold only trusted names; "*" allows any host, internal
//     addresses included, and is meant for development and tests. Links
//     may be http or https (decisions.md: "downloaded as given"), never
//     carry userinfo, and every redirect hop (at most 10) is checked again;
//     a refused hop is ErrForbiddenLink and is not retried.
//   - A Content-Length over the cap is refused before the body is read;
//     otherwise the body is read up to the cap whatever the headers said
//     (chunked, or decompressed from gzip by the transport). The body must
//     start with "%PDF-", checked before the rest is read, so HTML error
//     or consent pages are ErrDownload.
//   - The timeout bounds the whole Fetch: every attempt, the back-off
//     between them and the body. Network errors, 429 and 5xx (except 501)
//     are retried with jittered exponential back-off from 100ms to 5s; a
//     Retry-After (seconds or HTTP date) on 429/503 is honoured up to 5s. Other
//     statuses fail at once.
//   - Fetch keeps the PDF in memory, up to the cap per download in flight.
//     Its errors name the host only, and the retry client's log lines keep
//     only the scheme, host and path of a link (style item 14).
package pdfstore
