// Package serpapi is the client for SerpApi's Google Patents engine, the
// patent search upstream of the patent analysis service.
//
// # Caveats
//
//   - One search is ONE request: GET {base}/search.json with
//     engine=google_patents, assignee=<company>, after=publication:YYYYMMDD,
//     sort=new, num=100 and api_key. Only the first page (at most 100
//     results, SerpApi's largest num) is read, so SearchQuery.Max above what that
//     page holds with a PDF is not reached. A company name with a comma is
//     sent in parentheses, as SerpApi reads commas as separating assignees.
//   - SerpApi sorts patents by filing date with sort=new (publication date
//     is used for the after= bound); results are kept in SerpApi's order and
//     not re-sorted or re-filtered by date here.
//   - Kept results need a publication_number matching
//     ^[A-Z]{2}[A-Z0-9]{1,20}$ (decisions.md: the patent id) and a pdf that
//     is an absolute http(s) URL, without user info, whose path ends in
//     .pdf; others are skipped, as are repeats of a publication number.
//     Which hosts PDFs may come from (PDF_ALLOWED_HOSTS) is the
//     downloader's rule, not this package's.
//   - Every string kept (titles, snippets, assignees, dates, links, ids) is
//     trimmed and clean (patent.CleanText): NUL characters removed, each
//     byte that is not UTF-8 as U+FFFD, since they are stored (the search
//     cache, the patents) and PostgreSQL refuses both (decisions.md, "Both
//     services: hostile input answered, never a 5xx").
//   - SearchResult.TotalResults is search_information.total_results (all matches,
//     with or without a PDF), or the number of organic results in the
//     answer when SerpApi leaves it out; tracking compares it.
//   - A 200 whose error says Google Patents returned no results (and has no
//     organic_results) is an empty SearchResult: SerpApi bills and caches such
//     searches like any other. A 200 with search_metadata.status "Error",
//     another error and no results, or organic_results_state "Bad request."
//     is a failure.
//   - Failures wrap ErrUpstream: network errors, timeouts, cancellation,
//     non-200 statuses, answers that are not a search result (HTML, garbage,
//     truncated JSON, bodies over 8 MiB). A 429 whose error says the account
//     has "run out of searches" also wraps ErrQuota and is not retried.
//   - Network errors, timeouts (also mid-body), 5xx but 501, and other 429s
//     (the hourly throughput limit) are retried with exponential back-off
//     and equal jitter, honouring Retry-After up to the maximum wait; 400,
//     401, 403, 404 and other statuses are not, nor are 200 answers that
//     arrive whole but are unusable. Redirects are not followed.
//   - The API key travels in the query string (SerpApi takes it nowhere
//     else), so errors never contain the request URL, and retryablehttp's
//     own logger, which logs URLs, is off. Upstream error messages quoted
//     in errors have URLs and the key removed.
//   - Key hashes every parameter sent except api_key, plus SearchQuery.Max; the
//     date is Since's calendar date in its own location, so keys are stable
//     through a day. SerpApi's own cache (1 h, free hits) sits beneath any
//     cache keyed on it.
package serpapi
