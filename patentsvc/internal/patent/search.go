package patent

import "time"

// SearchQuery is a search for a company's recent patents.
type SearchQuery struct {
	// Company is the assignee searched for.
	Company string
	// Since keeps patents published on or after its calendar date (in
	// Since's own location). The zero time searches without a date bound.
	Since time.Time
	// Max is the most patents returned; 0 or less means all those of the
	// one page fetched (at most 100).
	Max int
	// Fresh asks the search API itself, not an answer cached before
	// (analysis.CachedSearch); it is no part of the search.
	Fresh bool
}

// SearchHit is one search result that has a PDF.
type SearchHit struct {
	PatentID        string // publication number with kind code, e.g. US10906193B2
	Title           string
	PublicationDate string // YYYY-MM-DD as the search sends it (may be empty)
	PDFLink         string // an http(s) URL whose path ends in .pdf
	Snippet         string
	Assignee        string // the first assignee only, as the search sends it
}

// SearchResult is the answer to a SearchQuery. It is also what the search
// cache keeps, as JSON with the field names as keys: renaming a field
// empties the cache.
type SearchResult struct {
	// TotalResults is the search's count of matches (SerpApi's
	// search_information.total_results, or the number of organic results
	// when it is absent). It counts every match, with or without a PDF,
	// and is what tracking compares.
	TotalResults int
	// Patents are the results with a usable PDF and publication number, in
	// the search's order (newest first), at most SearchQuery.Max. Never nil.
	Patents []SearchHit
	// Publications are every result with a publication number, with or
	// without a PDF (PDFLink "" then), in the search's order, none
	// repeated: the set a tracked company's runs compare
	// (DiffPublications). Not cut to SearchQuery.Max.
	Publications []Publication
	// Portfolio is what the answer says of the portfolio (BuildPortfolio);
	// nil when it says nothing.
	Portfolio *Portfolio
}
