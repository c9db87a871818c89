package vpicdb

import (
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// SetClock replaces the clock of db's year rules (the model-year window
// and when a WMI is published), so tests do not depend on today's date.
func SetClock(db *DB, now func() time.Time) { db.now = now }

// Explanation says how Decode reached its answer for a VIN; TestCorpus
// uses it as evidence when it judges a disagreement with corgi.
type Explanation struct {
	// Conclusive is false when position 10 left two model years and both
	// were decoded; Years lists the candidates, the chosen one first.
	Conclusive bool
	Years      []int
	// Moved is true when position 7's year had no schema for the WMI and
	// the other 30-year cycle's year was decoded instead.
	Moved bool
	// Fields traces the answer's values by flat key; Flat is the answer.
	Fields map[string]Trace
	Flat   map[string]string
}

// Trace is where a field's value came from in the chosen pass.
type Trace struct {
	// Source is vPIC's ItemSource of the value: "Pattern",
	// "EngineModelPattern", "Formula Pattern", "Conversion", "pattern -
	// model" (the model's make), "Make" (the WMI's only make), "WMI".
	Source string
	Key    string
	// Candidates are the values every matching pattern of the element
	// offered before vPIC kept one, best ranked first.
	Candidates []Candidate
}

// Candidate is one pattern's offer for an element.
type Candidate struct {
	Value, Key string
	Priority   int32
	Created    time.Time
}

// Explain decodes v (a valid VIN of a known WMI) and explains the answer.
func Explain(db *DB, v string) Explanation {
	now := db.now()
	w := db.snap.findWMI(v)
	d := newDecoder(db.snap, v, w, now.Year())
	plan := d.years()
	best := d.decode()
	exp := Explanation{Conclusive: plan.conclusive, Moved: plan.moved, Fields: map[string]Trace{}, Flat: map[string]string{}}
	raw, _ := d.flat(best)
	_ = json.Unmarshal(raw, &exp.Flat)
	exp.Years = []int{best.year}
	for _, y := range []int{plan.year, plan.other} {
		if y != 0 && y != best.year {
			exp.Years = append(exp.Years, y)
		}
	}
	items, formulas, _ := d.matchPatterns(best.year)
	items = d.addEngine(items)
	items = append(items, formulas...)
	for _, it := range best.items {
		e := db.snap.element(it.elem)
		if e == nil || e.flat < 0 {
			continue
		}
		tr := Trace{Source: it.src.String(), Key: d.keyText(it.key)}
		var cands []item
		for _, c := range items {
			if c.elem == it.elem {
				cands = append(cands, c)
			}
		}
		slices.SortStableFunc(cands, func(a, b item) int {
			if d.ranksBefore(&a, &b) {
				return -1
			}
			if d.ranksBefore(&b, &a) {
				return 1
			}
			return 0
		})
		for _, c := range cands {
			val := c.value
			if c.lookup {
				val = e.value(c.attr)
			}
			tr.Candidates = append(tr.Candidates, Candidate{Value: val, Key: d.keyText(c.key), Priority: c.priority, Created: time.UnixMicro(c.created).UTC()})
		}
		exp.Fields[e.code] = tr
	}
	return exp
}

func (s source) String() string {
	switch s {
	case srcPattern:
		return "Pattern"
	case srcEngine:
		return "EngineModelPattern"
	case srcFormula:
		return "Formula Pattern"
	case srcConversion:
		return "Conversion"
	case srcModelMake:
		return "pattern - model"
	case srcMake:
		return "Make"
	case srcCorrection:
		return "Corrections"
	}
	return "WMI"
}

// CheckDigit is vPIC's position-9 computation; digits13 demands a digit
// in position 13 (fVINCheckDigit, and fVINCheckDigit2 for passenger cars,
// MPVs and light trucks).
func CheckDigit(v string, digits13 bool) byte { return checkDigit(v, digits13) }

// EvalFormula evaluates a Conversion formula as SQL Server would.
func EvalFormula(expr string) string { return evalFormula(expr) }

// ModelYears returns the model years Decode would try for v in the given
// calendar year, the first preferred, and whether position 7 or the
// year window settled it.
func ModelYears(db *DB, v string, calendarYear int) (years []int, conclusive bool) {
	w := db.snap.findWMI(v)
	if w == nil {
		return nil, false
	}
	plan := newDecoder(db.snap, v, w, calendarYear).years()
	for _, y := range []int{plan.year, plan.other} {
		if y != 0 {
			years = append(years, y)
		}
	}
	return years, plan.conclusive
}

// ParseStamp reads one of vPIC's timestamps as Unix microseconds.
func ParseStamp(v string) (int64, bool) { return parseStamp(v) }

// LookupNames returns the names the decoder answers for table's Ids (the
// snapshot's, renamed by vocabulary.json); nil when it did not load table.
func LookupNames(db *DB, table string) map[int32]string {
	return db.snap.tables[strings.ToLower(table)]
}
