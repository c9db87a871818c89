package store

import (
	"encoding/json"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The JSON the store keeps in text columns (migration 0011): its own
// field names, as the API spells them, so that renaming a domain field
// never changes what is stored.

type publicationJSON struct {
	PatentID        string `json:"patent_id"`
	Title           string `json:"title"`
	PublicationDate string `json:"publication_date"`
	PDFLink         string `json:"pdf_link"`
}

type patentRefJSON struct {
	publicationJSON
	Read  bool    `json:"read"`
	Error *string `json:"error,omitempty"`
}

type cpcJSON struct {
	Code  string  `json:"code"`
	Share float64 `json:"share"`
}

type yearJSON struct {
	Year  int `json:"year"`
	Count int `json:"count"`
}

type countryJSON struct {
	Country  string `json:"country"`
	Active   int    `json:"active"`
	Inactive int    `json:"inactive"`
}

type portfolioJSON struct {
	CPC          []cpcJSON     `json:"cpc"`
	ByYear       []yearJSON    `json:"by_year"`
	Countries    []countryJSON `json:"countries"`
	Granted      int           `json:"granted"`
	Applications int           `json:"applications"`
}

// jsonColumn is v as a nullable JSON text column: nil when empty says so.
func jsonColumn(v any, empty bool) *string {
	if empty {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		// The values are plain structs, slices and strings: Marshal does
		// not fail on them.
		panic(err)
	}
	s := string(b)
	return &s
}

// readJSON decodes a JSON text column into v; a NULL or unreadable column
// leaves v as it is (a column written by this code always decodes).
func readJSON(col *string, v any) bool {
	return col != nil && json.Unmarshal([]byte(*col), v) == nil
}

func publicationsColumn(ps []patent.Publication) *string {
	out := make([]publicationJSON, len(ps))
	for i, p := range ps {
		out[i] = publicationJSON(p)
	}
	return jsonColumn(out, len(ps) == 0)
}

func readPublications(col *string) []patent.Publication {
	var in []publicationJSON
	readJSON(col, &in)
	out := make([]patent.Publication, len(in))
	for i, p := range in {
		out[i] = patent.Publication(p)
	}
	return out
}

func idsColumn(ids []string) *string { return jsonColumn(ids, len(ids) == 0) }

func readIDs(col *string) []string {
	out := []string{}
	readJSON(col, &out)
	return out
}

func patentRefsColumn(refs []patent.PatentRef) *string {
	out := make([]patentRefJSON, len(refs))
	for i, r := range refs {
		out[i] = patentRefJSON{publicationJSON{r.PatentID, r.Title, r.PublicationDate, r.PDFLink}, r.Read, r.Error}
	}
	return jsonColumn(out, len(refs) == 0)
}

func readPatentRefs(col *string) []patent.PatentRef {
	var in []patentRefJSON
	if !readJSON(col, &in) {
		return nil
	}
	out := make([]patent.PatentRef, len(in))
	for i, r := range in {
		out[i] = patent.PatentRef{PatentID: r.PatentID, Title: r.Title, PublicationDate: r.PublicationDate, PDFLink: r.PDFLink,
			Read: r.Read, Error: r.Error}
	}
	return out
}

func portfolioColumn(p *patent.Portfolio) *string {
	if p == nil {
		return nil
	}
	out := portfolioJSON{Granted: p.Granted, Applications: p.Applications}
	for _, c := range p.CPC {
		out.CPC = append(out.CPC, cpcJSON(c))
	}
	for _, y := range p.ByYear {
		out.ByYear = append(out.ByYear, yearJSON(y))
	}
	for _, c := range p.Countries {
		out.Countries = append(out.Countries, countryJSON(c))
	}
	return jsonColumn(out, false)
}

func readPortfolio(col *string) *patent.Portfolio {
	var in portfolioJSON
	if !readJSON(col, &in) {
		return nil
	}
	p := &patent.Portfolio{CPC: []patent.CPCShare{}, ByYear: []patent.YearCount{}, Countries: []patent.CountryCount{},
		Granted: in.Granted, Applications: in.Applications}
	for _, c := range in.CPC {
		p.CPC = append(p.CPC, patent.CPCShare(c))
	}
	for _, y := range in.ByYear {
		p.ByYear = append(p.ByYear, patent.YearCount(y))
	}
	for _, c := range in.Countries {
		p.Countries = append(p.Countries, patent.CountryCount(c))
	}
	return p
}
