package vpicdb

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// Element ids the decode treats specially (vPIC's Element.Id).
const (
	elBodyClass           = 5
	elEngineModel         = 18
	elMake                = 26
	elManufacturer        = 27
	elModel               = 28
	elModelYear           = 29
	elVehicleType         = 39
	elSuggestedVIN        = 142
	elErrorCode           = 143
	elPossibleValues      = 144
	elAdditionalErrorText = 156
	elManufacturerID      = 157
	elErrorText           = 191
	elVehicleDescriptor   = 196
)

// multiValued are the note elements vPIC keeps every value of instead of
// choosing one (its dedup leaves them out).
func multiValued(elem int16) bool {
	switch elem {
	case 114, 121, 129, 150, 154, 155, 169, 186:
		return true
	}
	return false
}

// source is where a decoding item comes from (vPIC's ItemSource).
type source uint8

const (
	srcPattern    source = iota + 1 // "Pattern"
	srcEngine                       // "EngineModelPattern"
	srcVehType                      // "VehType"
	srcMfrName                      // "Manu. Name"
	srcMfrID                        // "Manu. Id"
	srcModelYear                    // "ModelYear"
	srcFormula                      // "Formula Pattern"
	srcModelMake                    // "pattern - model"
	srcMake                         // "Make"
	srcConversion                   // "Conversion n: ..."
	srcCorrection                   // "Corrections"
)

// fromPattern is vPIC's `Source ILIKE '%pattern%'`: the items whose keys
// count as used VIN positions.
func (s source) fromPattern() bool {
	return s == srcPattern || s == srcEngine || s == srcFormula || s == srcModelMake
}

// scored is vPIC's `ItemSource in ('Pattern', 'EngineModelPattern',
// 'Formula Pattern')`: the items a pass's pattern count counts.
func (s source) scored() bool { return s == srcPattern || s == srcEngine || s == srcFormula }

// item is one decoded value of a pass (vPIC's tblDecodingItem).
type item struct {
	created   int64 // Unix microseconds; 0: NULL
	attr      string
	value     string
	priority  int32
	patternID int32 // 0: NULL
	key       int32 // index into snapshot.keys; -1: none
	elem      int16
	src       source
	// lookup marks vPIC's 'XXX' value: the element's value for attr, looked
	// up once the winning pass is known.
	lookup bool
}

func (it *item) nonEmpty() bool { return it.lookup || it.value != "" }

// decoder holds one Decode's inputs.
type decoder struct {
	s       *snapshot
	vin     string
	wmi     *wmiRow
	varKeys string
	vk, fk  [varKeysLen]uint64 // the var keys' character bits; fk with digits as '#'
	year    int                // the current calendar year
}

// Decode decodes v, a normalised valid VIN (vin.Valid), as vPIC's
// spVinDecode would against the snapshot, without a caller model year.
// The result's Raw is the flat DecodeVinValues record with every key of
// vPIC's 2026 record in vPIC's order ("" for no value); Result is what
// vin.ParseFlatRecord(raw).Decoded(v) gives (TestResultMatchesRaw).
//
// Decode returns an error wrapping ErrUnknownWMI when the snapshot does
// not know v's WMI, one wrapping vin.ErrInvalid when v is not a valid VIN,
// or ctx's error.
func (db *DB) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	if err := ctx.Err(); err != nil {
		return vin.Decoded{}, err
	}
	if !vin.Valid(v) {
		return vin.Decoded{}, fmt.Errorf("vpicdb decode %q: %w", v, vin.ErrInvalid)
	}
	now := db.now()
	w := db.snap.findWMI(v)
	if w == nil || !w.availableAt(now) {
		return vin.Decoded{}, fmt.Errorf("vpicdb decode %s: %w", v, ErrUnknownWMI)
	}
	d := newDecoder(db.snap, v, w, now.Year())
	best := d.decode()
	raw, values := d.flat(best)
	return vin.NewFlatRecord(values, raw).Decoded(v)
}

// findWMI returns the VIN's Wmi row: positions 1-3, or 1-3 and 12-14 when
// position 3 is '9' (a maker of fewer than 1,000 vehicles a year, vPIC's
// fVinWMI). When that six-character WMI is not in the snapshot it falls
// back to the first three characters; vPIC itself does not, and this
// snapshot has no three-character WMI ending in '9', so the fallback never
// answers today.
func (s *snapshot) findWMI(v string) *wmiRow {
	if v[2] == '9' {
		if w, ok := s.wmis[v[:3]+v[11:14]]; ok {
			return w
		}
	}
	return s.wmis[v[:3]]
}

func newDecoder(s *snapshot, v string, w *wmiRow, year int) *decoder {
	d := &decoder{s: s, vin: v, wmi: w, varKeys: v[3:8] + "|" + v[9:17], year: year}
	for i := 0; i < varKeysLen; i++ {
		c := d.varKeys[i]
		d.vk[i] = charBit(c)
		if c >= '0' && c <= '9' {
			c = '#'
		}
		d.fk[i] = charBit(c)
	}
	return d
}

// decode runs vPIC's passes, one per candidate model year, and returns the
// best (spvindecode).
func (d *decoder) decode() *pass {
	plan := d.years()
	best := d.run(plan.year, plan.conclusive)
	if plan.other != 0 {
		if p := d.run(plan.other, plan.conclusive); p.sc.better(best.sc) {
			best = p
		}
	}
	best.resolve(d.s)
	return best
}

// run is one pass (spvindecode_core) for a model year (0: none).
func (d *decoder) run(year int, conclusive bool) *pass {
	items, formulas, cs := d.matchPatterns(year)
	items = d.addEngine(items)
	items = d.addWMIItems(items, year)
	items = append(items, formulas...)
	items = d.dedup(items)
	items = d.addMake(items)
	items = d.addConversions(items)
	p := &pass{year: year, items: items}
	d.assess(p, cs, conclusive)
	return p
}

// matchPatterns returns the pattern items (ordered by Pattern.Id), the
// formula-pattern items, and the valid characters of every key of the
// WMI's schemas for the year (fExtractValidCharsPerWmiYear).
func (d *decoder) matchPatterns(year int) (items, formulas []item, cs charset) {
	s := d.s
	for _, ws := range d.wmi.schemas {
		if year != 0 && (year < ws.from || year > ws.to) {
			continue
		}
		qc := s.qcSchemas[ws.schema]
		for _, p := range s.schemaRows(ws.schema) {
			k := &s.keys[p.key]
			if year != 0 {
				cs.add(k.valid(s.masks))
			}
			e := s.element(p.elem)
			if qc || e == nil || p.elem == elMake || p.elem == elManufacturer || p.elem == elModelYear || p.elem == elVehicleType {
				continue
			}
			switch {
			case k.formula && k.matches(s.masks, &d.fk):
				formulas = append(formulas, item{created: p.created, attr: s.attrs[p.attr], value: formulaValue(d.varKeys, k.text),
					priority: 100, patternID: p.id, key: p.key, elem: p.elem, src: srcFormula})
			case !k.formula && e.decoded && e.public && k.matches(s.masks, &d.vk):
				items = append(items, item{created: p.created, attr: s.attrs[p.attr], lookup: true,
					priority: int32(ws.from), patternID: p.id, key: p.key, elem: p.elem, src: srcPattern})
			}
		}
	}
	byPattern := func(a, b item) int { return cmp.Compare(a.patternID, b.patternID) }
	slices.SortStableFunc(items, byPattern)
	slices.SortStableFunc(formulas, byPattern)
	return items, formulas, cs
}

// addEngine adds the values the engine model implies (EngineModelPattern),
// for the engine-model item vPIC picks: highest priority, newest, last.
func (d *decoder) addEngine(items []item) []item {
	best := -1
	for i := range items {
		if items[i].elem != elEngineModel {
			continue
		}
		if best < 0 || items[i].priority > items[best].priority ||
			(items[i].priority == items[best].priority && items[i].created >= items[best].created) {
			best = i
		}
	}
	if best < 0 {
		return items
	}
	em := items[best]
	for _, id := range d.s.engineModels[strings.ToLower(strings.TrimSpace(em.attr))] {
		for _, part := range d.s.engineParts[id] {
			items = append(items, item{created: part.created, attr: part.attr, lookup: true, priority: 50,
				patternID: em.patternID, key: em.key, elem: part.elem, src: srcEngine})
		}
	}
	return items
}

// addWMIItems adds what the WMI says: vehicle type, manufacturer, and the
// model year of the pass.
func (d *decoder) addWMIItems(items []item, year int) []item {
	w := d.wmi
	if name, ok := d.s.vehTypes[w.vehicleTypeID]; ok {
		items = append(items, item{created: w.created, attr: itoa(w.vehicleTypeID), value: strings.ToUpper(name),
			priority: 100, key: -1, elem: elVehicleType, src: srcVehType})
	}
	var mfrAttr, mfrName string
	if name, ok := d.s.mfrNames[w.mfrID]; ok {
		mfrAttr, mfrName = itoa(w.mfrID), strings.ToUpper(name)
	}
	items = append(items,
		item{attr: mfrAttr, value: mfrName, priority: 100, key: -1, elem: elManufacturer, src: srcMfrName},
		item{attr: mfrAttr, value: mfrAttr, priority: 100, key: -1, elem: elManufacturerID, src: srcMfrID})
	if year != 0 {
		y := strconv.Itoa(year)
		items = append(items, item{attr: y, value: y, priority: 100, key: -1, elem: elModelYear, src: srcModelYear})
	}
	return items
}

// dedup keeps one item per element (but the note elements), ranked as
// vPIC's RANK() does: Priority DESC, CreatedOn DESC, the key's length
// without its '*'s, the key without brackets, then insertion order. So the
// newest schema (its YearFrom is the priority) wins, then the most
// recently entered pattern, then the key with the fewest characters that
// are not '*'.
func (d *decoder) dedup(items []item) []item {
	best := make([]int, len(d.s.elements))
	for i := range best {
		best[i] = -1
	}
	for i := range items {
		e := items[i].elem
		if e < 0 || int(e) >= len(best) || multiValued(e) {
			continue
		}
		if b := best[e]; b < 0 || d.ranksBefore(&items[i], &items[b]) {
			best[e] = i
		}
	}
	out := items[:0]
	for i := range items {
		e := items[i].elem
		if e < 0 || int(e) >= len(best) || multiValued(e) || best[e] == i {
			out = append(out, items[i])
		}
	}
	return out
}

// ranksBefore reports whether a ranks before b, which was added earlier.
// A NULL CreatedOn ranks last, as in SQL Server, where vPIC runs.
func (d *decoder) ranksBefore(a, b *item) bool {
	if a.priority != b.priority {
		return a.priority > b.priority
	}
	if a.created != b.created {
		return a.created > b.created
	}
	ka, kb := d.keyText(a.key), d.keyText(b.key)
	la, lb := len(ka)-strings.Count(ka, "*"), len(kb)-strings.Count(kb, "*")
	if la != lb {
		return la < lb
	}
	return stripBrackets(ka) < stripBrackets(kb)
}

func (d *decoder) keyText(k int32) string {
	if k < 0 {
		return ""
	}
	return d.s.keys[k].text
}

func stripBrackets(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '[' || r == ']' {
			return -1
		}
		return r
	}, s)
}

// addMake adds the make: the model's make when a model was decoded (even
// when Make_Model has none for it), else the WMI's make when it has
// exactly one.
func (d *decoder) addMake(items []item) []item {
	for i := range items {
		if items[i].elem != elModel {
			continue
		}
		m := items[i]
		id, err := strconv.Atoi(strings.TrimSpace(m.attr))
		if err != nil {
			return items
		}
		for _, mk := range d.s.modelMakes[int32(id)] {
			items = append(items, item{attr: itoa(mk), value: strings.ToUpper(d.s.makeNames[mk]), priority: 1000,
				patternID: m.patternID, key: m.key, elem: elMake, src: srcModelMake})
		}
		return items
	}
	if w := d.wmi; len(w.makes) == 1 {
		mk := w.makes[0]
		items = append(items, item{created: w.created, attr: itoa(mk), value: strings.ToUpper(d.s.makeNames[mk]),
			priority: -100, key: -1, elem: elMake, src: srcMake})
	}
	return items
}

// addConversions derives missing elements from decoded ones (Conversion:
// displacement in cc, ci and l). vPIC walks the sources by Priority DESC,
// CreatedOn DESC, Conversion.Id and fills each target once.
func (d *decoder) addConversions(items []item) []item {
	type step struct {
		src int
		c   *conversion
	}
	var steps []step
	for i := range items {
		for j := range d.s.conversions {
			if d.s.conversions[j].from == items[i].elem {
				steps = append(steps, step{i, &d.s.conversions[j]})
			}
		}
	}
	slices.SortStableFunc(steps, func(a, b step) int {
		ia, ib := &items[a.src], &items[b.src]
		return cmp.Or(cmp.Compare(ib.priority, ia.priority), cmp.Compare(ib.created, ia.created), cmp.Compare(a.c.id, b.c.id))
	})
	for _, st := range steps {
		if slices.ContainsFunc(items, func(it item) bool { return it.elem == st.c.to }) {
			continue
		}
		src := items[st.src]
		result := evalFormula(strings.ReplaceAll(st.c.formula, "#x#", src.attr))
		items = append(items, item{attr: result, value: result, priority: 100, patternID: src.patternID,
			key: src.key, elem: st.c.to, src: srcConversion})
	}
	return items
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }
