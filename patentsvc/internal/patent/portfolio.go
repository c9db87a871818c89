package patent

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Portfolio is what a company's search answer says of its recent patents,
// without a model call (decisions.md, "patentsvc: what changed, and what
// the portfolio covers"): the CPC mix, publication years, per-country
// status and granted against applications. It is stored and cached with
// the analysis, shown in the PDF report and given to the model's prompt as
// facts.
type Portfolio struct {
	// CPC is the search's classification summary (SerpApi summary.cpc,
	// "Total" left out): at most MaxPortfolioCPC subclasses, largest
	// share first (ties by code), each share 0..1.
	CPC []CPCShare
	// ByYear counts the results by publication year, oldest first.
	ByYear []YearCount
	// Countries counts, per country, the results whose status there is
	// active or not active (an unknown status counts in neither), most
	// results first (ties by code), at most MaxPortfolioCountries.
	Countries []CountryCount
	// Granted counts the results that are grants (they carry a grant
	// date), Applications the others.
	Granted      int
	Applications int
}

// CPCShare is one CPC subclass (H04L) and its share of the results, 0..1.
type CPCShare struct {
	Code  string
	Share float64
}

// YearCount is the number of results published in a year.
type YearCount struct {
	Year  int
	Count int
}

// CountryCount is a country's results by status there.
type CountryCount struct {
	Country  string
	Active   int
	Inactive int
}

// MaxPortfolioCPC is the most CPC subclasses a portfolio lists.
const MaxPortfolioCPC = 10

// MaxPortfolioCountries is the most countries a portfolio lists (a
// family is rarely filed in more than a few dozen).
const MaxPortfolioCountries = 50

// PortfolioResult is what one search result brings to a portfolio.
type PortfolioResult struct {
	// PublicationDate is YYYY-MM-DD as the search sends it ("" when
	// absent).
	PublicationDate string
	// Granted: the result carries a grant date.
	Granted bool
	// CountryStatus is the result's status per country code: ACTIVE,
	// NOT_ACTIVE or UNKNOWN, as SerpApi's country_status says it.
	CountryStatus map[string]string
}

// PortfolioInput is a search answer's raw facts.
type PortfolioInput struct {
	// CPC are the classification summary's entries in the answer's order,
	// percentages (0..100) as the search sends them; "Total" may be among
	// them (it is left out).
	CPC []CPCPercentage
	// Results are every result of the answer, with or without a PDF.
	Results []PortfolioResult
}

// CPCPercentage is one entry of the search's classification summary.
type CPCPercentage struct {
	Key        string
	Percentage float64
}

// BuildPortfolio computes a portfolio from a search answer's facts; nil
// when they hold nothing to build one from (no classification summary
// and no result). Codes are upper-cased and trimmed; an entry without a
// code, "Total", a repeated code or a percentage that is not a number in
// 0..100 is left out.
func BuildPortfolio(in PortfolioInput) *Portfolio {
	p := Portfolio{CPC: []CPCShare{}, ByYear: []YearCount{}, Countries: []CountryCount{}}
	seen := map[string]bool{}
	for _, c := range in.CPC {
		code := strings.ToUpper(strings.TrimSpace(c.Key))
		if code == "" || code == "TOTAL" || seen[code] || math.IsNaN(c.Percentage) || c.Percentage < 0 || c.Percentage > 100 {
			continue
		}
		seen[code] = true
		p.CPC = append(p.CPC, CPCShare{Code: code, Share: math.Round(c.Percentage*10) / 1000})
	}
	slices.SortStableFunc(p.CPC, func(a, b CPCShare) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.Code, b.Code))
	})
	p.CPC = p.CPC[:min(len(p.CPC), MaxPortfolioCPC)]

	years := map[int]int{}
	countries := map[string]*CountryCount{}
	for _, r := range in.Results {
		if y, ok := publicationYear(r.PublicationDate); ok {
			years[y]++
		}
		if r.Granted {
			p.Granted++
		} else {
			p.Applications++
		}
		for cc, status := range r.CountryStatus {
			cc = strings.ToUpper(strings.TrimSpace(cc))
			if cc == "" {
				continue
			}
			c := countries[cc]
			if c == nil {
				c = &CountryCount{Country: cc}
			}
			switch strings.ToUpper(strings.TrimSpace(status)) {
			case "ACTIVE":
				c.Active++
			case "NOT_ACTIVE":
				c.Inactive++
			default:
				continue
			}
			countries[cc] = c
		}
	}
	if len(p.CPC) == 0 && len(in.Results) == 0 {
		return nil
	}
	for y, n := range years {
		p.ByYear = append(p.ByYear, YearCount{Year: y, Count: n})
	}
	slices.SortFunc(p.ByYear, func(a, b YearCount) int { return cmp.Compare(a.Year, b.Year) })
	for _, c := range countries {
		p.Countries = append(p.Countries, *c)
	}
	slices.SortFunc(p.Countries, func(a, b CountryCount) int {
		return cmp.Or(cmp.Compare(b.Active+b.Inactive, a.Active+a.Inactive), cmp.Compare(a.Country, b.Country))
	})
	p.Countries = p.Countries[:min(len(p.Countries), MaxPortfolioCountries)]
	return &p
}

// publicationYear is the year of a YYYY-MM-DD (or YYYY...) date, between
// 1790 (the first US patent) and 9999.
func publicationYear(date string) (int, bool) {
	if len(date) < 4 {
		return 0, false
	}
	y, err := strconv.Atoi(date[:4])
	if err != nil || y < 1790 {
		return 0, false
	}
	return y, true
}

// Total is the number of results the portfolio counts.
func (p *Portfolio) Total() int {
	if p == nil {
		return 0
	}
	return p.Granted + p.Applications
}
