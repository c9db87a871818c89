// Package vpic is the client for NHTSA's vPIC vehicle API, the upstream of
// the VIN decoding service.
//
// # Caveats
//
//   - A single VIN is decoded with GET DecodeVinValues/{VIN}?format=json. A
//     batch is ONE POST to DecodeVINValuesBatch/ with the form body
//     DATA=VIN1;VIN2;...&format=json and no query string: vPIC answers XML
//     when format travels in the query string of that POST.
//   - vPIC reports decode problems inside a 200 answer (ErrorCode "1,11,...");
//     those are answers, not failures. Failures are: network errors and
//     timeouts, non-200 statuses, bodies that are not the JSON envelope
//     (XML, HTML maintenance pages, garbage), an envelope whose Message
//     reports an execution error, and records without an ErrorCode. All of
//     them wrap ErrUpstream.
//   - Network errors, timeouts, 429 and 5xx (but 501) are retried with
//     exponential back-off and jitter; other statuses are not. Retry-After
//     (delay seconds or an HTTP date) is honoured up to the maximum wait.
//     The wait is shared/retry's Backoff, the rule patentsvc's clients use.
//   - Every attempt waits its turn on a pacer (UPSTREAM_MAX_RPS), because vPIC
//     applies automatic traffic controls. The wait counts against the
//     attempt's timeout.
//   - Records are decoded key by key and unknown keys are ignored: the key
//     set changes between vPIC releases (145, 150 and 154 keys seen).
//   - Errors never contain the request URL.
package vpic
