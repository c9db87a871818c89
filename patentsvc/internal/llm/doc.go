// Package llm is the client for the LLM gateway: an OpenAI-compatible
// chat-completions API, OpenRouter by default (LLM_BASE_URL,
// https://openrouter.ai/api/v1, with LLM_API_KEY; decisions.md, "Patent
// analysis service").
//
// # Caveats
//
//   - One call is ONE POST {base}/chat/completions, not streamed, with the
//     key in an Authorization bearer header (never in the URL), OpenRouter's
//     attribution headers (HTTP-Referer, X-Title) and
//     provider.data_collection "deny": patent text is a customer's
//     confidential material, so only providers that neither store nor train
//     on prompts may serve it. With that preference OpenRouter may find no
//     provider for a model and answer 404 "No endpoints found matching your
//     data policy"; that is a failure (ErrUpstream), not retried.
//   - The model that answered may differ from the one asked for (OpenRouter
//     falls back when a model is down, and bills the one that answered):
//     Response.Model is the answer's "model" field. Usage is what the answer
//     reports (OpenRouter always reports it for non-streamed calls), 0 when
//     absent.
//   - Errors arrive in two ways. Before generation starts, as a status equal
//     to {"error":{"code","message","metadata"}}'s code; 400, 401, 402
//     (credits) and 403 (moderation) wrap ErrRejected and ErrUpstream and are
//     not retried. After generation started, inside a 200: a top-level
//     "error", an "error" on choices[0], no choices, or empty content. Those
//     wrap ErrUpstream and are NOT retried either: the attempt may already be
//     billed, and a retry is the caller's call (a job re-run, say).
//   - Network errors, timeouts, a connection that breaks or stalls while the
//     answer's body is read, 408, 429, 500, 502, 503 and 504 are retried
//     (retries times) with exponential back-off and equal jitter; a
//     Retry-After on 429 or 503 is honoured up to the maximum wait (10 s).
//     Other statuses (404, 501, ...) fail at once with ErrUpstream.
//   - The timeout bounds each attempt, body included; MaxCallDuration bounds
//     a whole call. A call whose context ends fails with an error that wraps
//     both ErrUpstream and the context's error, and is never retried.
//   - Two bounds, apart: an answer whose body is over 4 MiB is refused
//     (ErrUpstream, nothing kept), and the text of an accepted answer is at
//     most the cap given to NewClient (LLM_MAX_ANSWER_KB, 256 KiB by
//     default), a longer one cut at a character boundary and ending with
//     "[answer truncated]" (patent.CutAnswer, logged at WARN). The cap
//     applies in Complete, so the LLM cache and the stored analysis hold
//     the same text (decisions.md, "Both services: hostile input answered,
//     never a 5xx").
//   - The answer's text and the answering model's name are cleaned where
//     the answer is parsed (patent.CleanText): NUL characters removed, each
//     byte that is not UTF-8 replaced by U+FFFD (Go's JSON decoder already
//     replaces raw invalid bytes and lone surrogate escapes so; a \u0000
//     escape reaches us as NUL), as PostgreSQL refuses both in text. An
//     answer that is empty once cleaned is an answer without content.
//   - A bare-text answer is trimmed; content sent as an array of parts is
//     joined from its text parts.
//   - Error texts name the model, the status and the gateway's message
//     (cleaned, cut to 200 characters). They never contain the URL, the host
//     or the API key: the key, and anything shaped like one (sk-...,
//     "Bearer ..."), is replaced by [redacted], and any URL the gateway's
//     message quotes by [url], before a message is cut (shared/redact.Text). The
//     client logs retries and completions at DEBUG without prompts, answers
//     or headers.
package llm
