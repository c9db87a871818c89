package serpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// errorMessage returns the "error" string of a SerpApi JSON answer, or "".
func errorMessage(body []byte) string {
	var a struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(bytes.TrimSpace(body), &a) != nil {
		return ""
	}
	return str(a.Error)
}

// isNoResults reports whether a 200's error says the search found nothing
// ("Google Patents hasn't returned any results for this query."), which is
// an empty answer, not a failure.
func isNoResults(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "returned any results") || strings.Contains(m, "no results")
}

// parseAnswer maps the body of a 200 answer to a patent.SearchResult holding at most
// limit patents (all when limit <= 0). quote prepares upstream text for an
// error message. Every error wraps ErrUpstream (and never ErrQuota): the
// body is not a JSON object, organic_results is not a list, the search
// failed (search_metadata.status "Error", an error other than "no
// results", organic_results_state "Bad request."), or the object is not a
// search answer at all.
func parseAnswer(body []byte, limit int, quote func(string) string) (patent.SearchResult, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return patent.SearchResult{}, fmt.Errorf("%w: empty answer", ErrUpstream)
	}
	if trimmed[0] != '{' {
		if trimmed[0] == '<' {
			return patent.SearchResult{}, fmt.Errorf("%w: answer is HTML or XML, not JSON", ErrUpstream)
		}
		return patent.SearchResult{}, fmt.Errorf("%w: answer is not a JSON object", ErrUpstream)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(trimmed, &top); err != nil {
		// Truncated, trailing garbage or a syntax error: the body starts
		// like an object, so it cannot be another JSON type.
		return patent.SearchResult{}, fmt.Errorf("%w: answer is not valid JSON", ErrUpstream)
	}

	meta := object(top["search_metadata"])
	info := object(top["search_information"])
	upstreamErr := str(top["error"])
	var organic []json.RawMessage
	if raw, ok := top["organic_results"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &organic); err != nil {
			return patent.SearchResult{}, fmt.Errorf("%w: organic_results is not a list", ErrUpstream)
		}
	}

	if strings.EqualFold(str(meta["status"]), "Error") {
		return patent.SearchResult{}, fmt.Errorf("%w: search status error: %s", ErrUpstream, quote(upstreamErr))
	}
	total, ok := count(info["total_results"])
	if !ok {
		total = len(organic)
	}
	res := patent.SearchResult{TotalResults: total, Patents: []patent.SearchHit{}, Publications: []patent.Publication{}}
	if len(organic) == 0 {
		switch {
		case upstreamErr != "" && isNoResults(upstreamErr):
			return res, nil
		case upstreamErr != "":
			return patent.SearchResult{}, fmt.Errorf("%w: search error: %s", ErrUpstream, quote(upstreamErr))
		case strings.Contains(strings.ToLower(str(info["organic_results_state"])), "bad request"):
			return patent.SearchResult{}, fmt.Errorf("%w: search state: %s", ErrUpstream, quote(str(info["organic_results_state"])))
		case meta == nil && top["organic_results"] == nil:
			return patent.SearchResult{}, fmt.Errorf("%w: answer is not a search result", ErrUpstream)
		}
		return res, nil
	}

	res.Portfolio = readResults(&res, organic, limit, cpcSummary(top["summary"]))
	return res, nil
}

// readResults adds organic's first pageSize results to res: each with a valid
// publication number, once, to the publications; those with a PDF link
// also to the patents, up to limit (all when limit <= 0). It returns the
// portfolio the results and the classification summary cpc make.
func readResults(res *patent.SearchResult, organic []json.RawMessage, limit int, cpc []patent.CPCPercentage) *patent.Portfolio {
	facts := patent.PortfolioInput{CPC: cpc}
	seen := make(map[string]bool, len(organic))
	// One page is asked for (num=100); an answer with more is cut there.
	for _, raw := range organic[:min(len(organic), pageSize)] {
		r := object(raw)
		if r == nil {
			continue
		}
		id := str(r["publication_number"])
		if _, err := patent.ParsePatentID(id); err != nil || seen[id] {
			continue
		}
		seen[id] = true
		pdf := str(r["pdf"])
		if !pdfLink(pdf) || len(pdf) > maxLinkBytes {
			pdf = ""
		}
		date := clipText(str(r["publication_date"]), maxDateBytes)
		title := clipText(str(r["title"]), maxTitleBytes)
		res.Publications = append(res.Publications, patent.Publication{PatentID: id, Title: title, PublicationDate: date, PDFLink: pdf})
		facts.Results = append(facts.Results, patent.PortfolioResult{PublicationDate: date, Granted: str(r["grant_date"]) != "",
			CountryStatus: countryStatus(r["country_status"])})
		if pdf == "" || (limit > 0 && len(res.Patents) >= limit) {
			continue
		}
		res.Patents = append(res.Patents, patent.SearchHit{
			PatentID:        id,
			Title:           title,
			PublicationDate: date,
			PDFLink:         pdf,
			Snippet:         str(r["snippet"]),
			Assignee:        str(r["assignee"]),
		})
	}
	return patent.BuildPortfolio(facts)
}

// Bounds on what one result brings into alerts, histories and the
// changes digest (real titles are a few hundred bytes, links about 90).
const (
	maxTitleBytes = 1000
	maxLinkBytes  = 2048
	maxDateBytes  = 32
)

// clipText cuts s to at most n bytes, at a character boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.TrimSpace(s[:n])
}

// maxCPCEntries bounds the classification summary entries read: SerpApi
// sends a few dozen; a hostile answer may send millions. maxCPCKeyBytes
// bounds a code: a subclass is 4 characters ("Total" 5); longer keys are
// not codes and are left out.
const (
	maxCPCEntries  = 1000
	maxCPCKeyBytes = 16
)

// cpcSummary reads summary.cpc ([{key, percentage, frequency}], "Total"
// first) as the search sends it; entries that are not objects with a
// string key and a numeric percentage are skipped.
func cpcSummary(raw json.RawMessage) []patent.CPCPercentage {
	var list []json.RawMessage
	if json.Unmarshal(object(raw)["cpc"], &list) != nil {
		return nil
	}
	var out []patent.CPCPercentage
	for _, e := range list[:min(len(list), maxCPCEntries)] {
		m := object(e)
		key := str(m["key"])
		var pct float64
		if key == "" || len(key) > maxCPCKeyBytes || json.Unmarshal(m["percentage"], &pct) != nil {
			continue
		}
		out = append(out, patent.CPCPercentage{Key: key, Percentage: pct})
	}
	return out
}

// countryStatus reads a result's country_status ({"US": "ACTIVE", ...});
// nil when it is absent or not an object of strings.
func countryStatus(raw json.RawMessage) map[string]string {
	m := object(raw)
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for cc, v := range m {
		if s := str(v); s != "" && len(cc) <= 8 {
			out[cc] = s
		}
	}
	return out
}

// pdfLink reports whether s can be a PDF download: an absolute http(s) URL
// with a host and no user info whose path (query and fragment aside) ends
// in .pdf, case-insensitively. SerpApi once sent a bare
// https://patentimages.storage.googleapis.com/ for patents without a PDF
// (public-roadmap #1392).
func pdfLink(s string) bool {
	if s == "" {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
		return false
	}
	return strings.HasSuffix(strings.ToLower(u.Path), ".pdf")
}

// object decodes raw as a JSON object, nil when it is anything else.
func object(raw json.RawMessage) map[string]json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// str decodes raw as a JSON string, cleaned and trimmed; "" for anything
// else. Every string of the answer is read here, so every one is clean
// (patent.CleanText: no NUL, valid UTF-8) before it is kept, cached or
// stored (decisions.md, "Both services: hostile input answered, never a
// 5xx"): a title with \u0000 would fail PostgreSQL's insert.
func str(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(patent.CleanText(s))
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

// count decodes a result count: a non-negative integral JSON number, or a
// string of digits (thousands separators allowed).
func count(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	text := string(raw)
	if s := str(raw); s != "" {
		text = strings.ReplaceAll(s, ",", "")
	}
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		if n < 0 || n > math.MaxInt32 {
			return 0, false
		}
		return int(n), true
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || f < 0 || f > math.MaxInt32 || f != math.Trunc(f) || strings.ContainsAny(text, "xXpP_") {
		return 0, false
	}
	return int(f), true
}
