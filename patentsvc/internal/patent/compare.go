package patent

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"
)

// How many companies a comparison takes (decisions.md, "patentsvc: how
// portfolios compare").
const (
	CompareMin = 2
	CompareMax = 5
)

// ParseCompared validates the companies of a comparison, in request
// order: CompareMin to CompareMax names, each a valid CompanyName, none
// the same as another (compared case-insensitively). The error wraps
// ErrInvalid and says which rule broke.
func ParseCompared(raw []string) ([]CompanyName, error) {
	if len(raw) < CompareMin || len(raw) > CompareMax {
		return nil, Invalidf("compare %d to %d companies (the company parameter repeated), got %d", CompareMin, CompareMax, len(raw))
	}
	names := make([]CompanyName, 0, len(raw))
	for i, r := range raw {
		name, err := ParseCompanyName(r)
		if err != nil {
			return nil, Invalidf("company %d: %v", i+1, err)
		}
		for j, prev := range names {
			if strings.EqualFold(prev.String(), r) {
				return nil, Invalidf("company %d (%s) is company %d again", i+1, r, j+1)
			}
		}
		names = append(names, name)
	}
	return names, nil
}

// ComparedCompany is a company as a comparison sees it: the portfolio
// facts of its latest stored portfolio analysis that kept them.
type ComparedCompany struct {
	Name        string
	AnalysedAt  time.Time
	PatentCount int
	Portfolio   Portfolio
}

// Comparison is how the portfolios of 2 to 5 companies compare.
type Comparison struct {
	// Companies in request order.
	Companies []ComparedCompany
	// Pairs are every pair in request order (A before B).
	Pairs []ComparedPair
	// Distinctive are each company's codes no other compared company has,
	// in request order.
	Distinctive []DistinctiveCodes
	Generated   time.Time
}

// ComparedPair is how close two companies' patenting is.
type ComparedPair struct {
	A, B string
	// Similarity is Jaffe's technological proximity: the cosine of the
	// two CPC share vectors over the union of their codes, rounded to 3
	// decimals; 0 when either has no CPC shares.
	Similarity float64
	// Shared are the codes both have, by the smaller of the two shares,
	// largest first (ties by code).
	Shared []SharedCode
}

// SharedCode is a CPC code two companies both have, with each one's share.
type SharedCode struct {
	Code           string
	ShareA, ShareB float64
}

// DistinctiveCodes are a company's codes that no other compared company
// has, largest share first (ties by code).
type DistinctiveCodes struct {
	Company string
	Codes   []CPCShare
}

// Compare computes the comparison of companies (2 to 5, in request
// order), generated at now.
func Compare(companies []ComparedCompany, now time.Time) Comparison {
	c := Comparison{Companies: companies, Pairs: []ComparedPair{}, Distinctive: []DistinctiveCodes{}, Generated: now}
	for i, a := range companies {
		for _, b := range companies[i+1:] {
			c.Pairs = append(c.Pairs, ComparedPair{A: a.Name, B: b.Name,
				Similarity: Similarity(a.Portfolio.CPC, b.Portfolio.CPC), Shared: sharedCodes(a.Portfolio.CPC, b.Portfolio.CPC)})
		}
	}
	for i, a := range companies {
		others := map[string]bool{}
		for j, b := range companies {
			if j != i {
				for _, s := range b.Portfolio.CPC {
					others[s.Code] = true
				}
			}
		}
		d := DistinctiveCodes{Company: a.Name, Codes: []CPCShare{}}
		for _, s := range a.Portfolio.CPC {
			if !others[s.Code] {
				d.Codes = append(d.Codes, s)
			}
		}
		slices.SortStableFunc(d.Codes, func(x, y CPCShare) int {
			return cmp.Or(cmp.Compare(y.Share, x.Share), cmp.Compare(x.Code, y.Code))
		})
		c.Distinctive = append(c.Distinctive, d)
	}
	return c
}

// Similarity is the cosine of two CPC share vectors over the union of
// their codes (Jaffe 1986), rounded to 3 decimals: 1 for the same mix, 0
// for no code in common, and 0 when either has no shares (or only zero
// ones). A code listed twice counts once, with its first share.
func Similarity(a, b []CPCShare) float64 {
	va, vb := shareVector(a), shareVector(b)
	var dot, na, nb float64
	for code, x := range va {
		dot += x * vb[code]
		na += x * x
	}
	for _, y := range vb {
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return math.Round(min(dot/math.Sqrt(na*nb), 1)*1000) / 1000
}

// shareVector is shares as a map from code to share.
func shareVector(shares []CPCShare) map[string]float64 {
	v := make(map[string]float64, len(shares))
	for _, s := range shares {
		if _, seen := v[s.Code]; !seen && s.Share > 0 {
			v[s.Code] = s.Share
		}
	}
	return v
}

// sharedCodes are the codes both a and b have, by the smaller of the two
// shares, largest first, ties by code.
func sharedCodes(a, b []CPCShare) []SharedCode {
	vb := shareVector(b)
	out := []SharedCode{}
	for code, x := range shareVector(a) {
		if y, ok := vb[code]; ok {
			out = append(out, SharedCode{Code: code, ShareA: x, ShareB: y})
		}
	}
	slices.SortFunc(out, func(x, y SharedCode) int {
		return cmp.Or(cmp.Compare(min(y.ShareA, y.ShareB), min(x.ShareA, x.ShareB)), cmp.Compare(x.Code, y.Code))
	})
	return out
}
