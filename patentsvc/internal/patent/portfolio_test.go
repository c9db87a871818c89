package patent_test

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func TestBuildPortfolio(t *testing.T) {
	if p := patent.BuildPortfolio(patent.PortfolioInput{}); p != nil {
		t.Errorf("nothing to build from: %+v, want nil", p)
	}
	if p := patent.BuildPortfolio(patent.PortfolioInput{CPC: []patent.CPCPercentage{{Key: "Total", Percentage: 100}}}); p != nil {
		t.Errorf("a summary of Total only and no result: %+v, want nil", p)
	}
	in := patent.PortfolioInput{
		CPC: []patent.CPCPercentage{
			{Key: "Total", Percentage: 100}, {Key: "h04r", Percentage: 40}, {Key: "G10L", Percentage: 66.66},
			{Key: "H04R", Percentage: 10}, {Key: "", Percentage: 5}, {Key: "A61B", Percentage: 40},
			{Key: "X99X", Percentage: 101}, {Key: "Y99Y", Percentage: -1}, {Key: "Z99Z", Percentage: math.NaN()},
		},
		Results: []patent.PortfolioResult{
			{PublicationDate: "2024-05-01", Granted: true, CountryStatus: map[string]string{"US": "ACTIVE", "EP": "NOT_ACTIVE", "JP": "UNKNOWN"}},
			{PublicationDate: "2023-01-02", CountryStatus: map[string]string{"us": "active", "CN": "ACTIVE"}},
			{PublicationDate: "2024-12-31", Granted: true, CountryStatus: map[string]string{"EP": "ACTIVE"}},
			{PublicationDate: "", CountryStatus: nil},
			{PublicationDate: "0001-01-01"},
		},
	}
	want := &patent.Portfolio{
		CPC:       []patent.CPCShare{{Code: "G10L", Share: 0.667}, {Code: "A61B", Share: 0.4}, {Code: "H04R", Share: 0.4}},
		ByYear:    []patent.YearCount{{Year: 2023, Count: 1}, {Year: 2024, Count: 2}},
		Countries: []patent.CountryCount{{Country: "EP", Active: 1, Inactive: 1}, {Country: "US", Active: 2}, {Country: "CN", Active: 1}},
		Granted:   2, Applications: 3,
	}
	if got := patent.BuildPortfolio(in); !reflect.DeepEqual(got, want) {
		t.Errorf("BuildPortfolio = %+v\nwant %+v", got, want)
	}
}

func TestBuildPortfolioTopTen(t *testing.T) {
	var in patent.PortfolioInput
	for i := range 30 {
		in.CPC = append(in.CPC, patent.CPCPercentage{Key: fmt.Sprintf("A%02dB", i), Percentage: float64(i)})
	}
	p := patent.BuildPortfolio(in)
	if len(p.CPC) != patent.MaxPortfolioCPC || p.CPC[0].Code != "A29B" || p.CPC[9].Code != "A20B" {
		t.Errorf("top ten = %+v", p.CPC)
	}
	if p.ByYear == nil || p.Countries == nil || p.Total() != 0 {
		t.Errorf("lists must be empty, not nil, and the total 0: %+v", p)
	}
}

func TestBuildPortfolioCountriesBounded(t *testing.T) {
	statuses := map[string]string{}
	for i := range 300 {
		statuses[fmt.Sprintf("C%03d", i)] = "ACTIVE"
	}
	statuses["ZZ"] = "ACTIVE"
	in := patent.PortfolioInput{Results: []patent.PortfolioResult{{CountryStatus: statuses}, {CountryStatus: map[string]string{"ZZ": "NOT_ACTIVE"}}}}
	p := patent.BuildPortfolio(in)
	if len(p.Countries) != patent.MaxPortfolioCountries || p.Countries[0] != (patent.CountryCount{Country: "ZZ", Active: 1, Inactive: 1}) {
		t.Errorf("%d countries, first %+v; want %d, ZZ first", len(p.Countries), p.Countries[0], patent.MaxPortfolioCountries)
	}
}
