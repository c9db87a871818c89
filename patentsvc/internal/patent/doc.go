// Package patent is the patent analysis domain: the validated types the
// API accepts (company names, patent ids, model ids), users and roles,
// tracked companies and alerts, and the errors the stores and services
// report.
//
// It imports no web framework, database or upstream client.
package patent
