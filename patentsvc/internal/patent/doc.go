// Package patent is the patent analysis domain, at the centre of the
// service: every other package imports it, and it imports nothing of
// theirs (architecture_test.go keeps it so). It holds
//
//   - the validated types the API accepts (company names, patent ids,
//     model ids), users and roles;
//   - the shapes that cross packages: search queries and results, language
//     model requests, answers and cached answers, a PDF's sections, stored
//     patents and analyses, batches and jobs, tracked companies and alerts,
//     usage and month counts;
//   - the rule for text from upstreams before it is stored (CleanText: no
//     NUL, valid UTF-8) and the cap on a stored model answer (CutAnswer);
//   - the errors the stores, adapters and services report, which the HTTP
//     layer maps to statuses. Adapters declare their own precise sentinels
//     as kinds of these (NewKindError), so the core tests for the kind and
//     never imports the adapter.
//
// It imports only the standard library: no web framework, database or
// upstream client.
package patent
