// Package analysis turns a company name into a stored, model-attributed
// patent portfolio analysis: search, PDFs, sections, prompt, language
// model, storage. It also analyses single patents and runs batches on a
// bounded worker pool.
//
// # Caveats
//
//   - Failures of the search or the language model are reported in-band
//     (CompanyAnalysis.Success false with Error), never as Go errors: a
//     batch reports each company's failure in its own result.
//   - The caches are decorators around the upstreams (caches.go:
//     CachedSearch, CachedCompletions), which main composes; the Analyzer
//     asks a Searcher and a Completer and never sees a cache. With
//     CacheConfig.Read (USE_CACHE), a search answer younger than the
//     search-cache lifetime and an LLM answer for the same model and prompt
//     are used before any external call; without it (or for scheduled
//     runs, patent.AnalyzeOptions.Fresh, which reaches them as the query's
//     and the request's Fresh) the calls are always made. Either way every
//     answer is stored. An analysis whose LLM answer came from the cache
//     (patent.Completion.Cached) is stored with the cached flag, which
//     listings, exports and trends leave out.
//   - Downloaded PDFs are kept in storage and reused: they are published
//     documents and do not change, so USE_CACHE does not apply to them.
//   - A patent whose PDF cannot be fetched or read (not allowed by
//     PDF_ALLOWED_HOSTS, too large, scanned without a text layer) is still
//     listed and enters the prompt with its title and search snippet only.
//   - The stored model is the one that actually answered (the gateway may
//     fall back to another), with the token usage it reported.
//   - Text from upstreams is stored clean (patent.CleanText: no NUL, valid
//     UTF-8) and a model's answer within CacheConfig.MaxAnswerBytes
//     (patent.CutAnswer): the adapters clean what they return (llm, which
//     also cuts, serpapi, pdf), and an answer read from the LLM cache is
//     cleaned and cut again (CachedCompletions) before it is stored, as the entry may predate
//     the rule or a lower cap (decisions.md, "Both services: hostile input
//     answered, never a 5xx").
package analysis
