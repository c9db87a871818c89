package vpicdb

import (
	"slices"
	"strconv"
	"strings"
)

// Body classes (BodyStyle ids) vPIC warns about: off-road vehicles (error
// code 10) and incomplete vehicles (AdditionalErrorText); 64 is a glider
// (error code 9).
var (
	offRoadBodies    = []string{"69", "84", "86", "88", "97", "105", "113", "124", "126", "127"}
	incompleteBodies = []string{"65", "107", "70", "74", "63", "72", "112", "62", "64", "76", "78", "71", "77", "67", "116", "75"}
)

// maxText is the length vPIC cuts ErrorText and AdditionalErrorText to.
const maxText = 500

// assess adds the pass's error codes and vPIC's "Corrections" items
// (SuggestedVIN, ErrorCode, ErrorText, PossibleValues,
// AdditionalErrorText, VehicleDescriptor), then scores the pass.
//
// The corrections (codes 2-5, with SuggestedVIN and PossibleValues) and the
// unused positions (code 14 with its text) need the patterns of every
// element, and the lite file keeps those of 27 (doc.go): a character
// another element's key allows looks wrong, a position another element
// uses looks unused. So they are answered only for a VIN whose check digit
// fails (code 1), where a wrong character is likely, and on a VIN whose
// check digit holds they neither count nor weigh in the choice between two
// model years (where they favoured the year whose patterns the lite file
// happens to keep more of: a 2014 GMC Savana decoded as 1984). Held
// against 1,040 recorded live answers (TestRealAnswers), on VINs with a
// good check digit the lite file's 2-5 and 14 were wrong 349 times (vPIC
// "0" where the snapshot said "0,14", "2,14", "3,14" or "4,14") and right 3.
func (d *decoder) assess(p *pass, cs charset, conclusive bool) {
	var c correction
	if !slices.ContainsFunc(p.items, func(it item) bool { return it.patternID != 0 }) {
		c.codes.add(8) // nothing decoded beyond the WMI
	} else {
		c = d.correct(p.items, &cs)
	}
	carLT := d.vin[2] != '9' && d.wmi.carLT()
	if d.vin[8] == checkDigit(d.vin, carLT) {
		c = correction{codes: c.codes &^ (codeBit(2) | codeBit(3) | codeBit(4) | codeBit(5) | codeBit(14))}
	}
	body, vehType := attrOf(p.items, elBodyClass), attrOf(p.items, elVehicleType)
	if body == "64" {
		c.codes.add(9)
	}
	offRoad := slices.Contains(offRoadBodies, body)
	if offRoad {
		c.codes.add(10)
	}
	if p.year == 0 {
		c.codes.add(11)
	}
	invalid := d.invalidChars(&c, offRoad)
	if invalid != "" {
		c.codes.add(400)
	}
	if d.vin[8] != checkDigit(d.vin, carLT) {
		c.codes.add(1)
	}
	if rest := c.codes &^ (codeBit(9) | codeBit(10) | codeBit(12)); rest == 0 || rest == codeBit(14) {
		c.codes.add(0)
	}
	if c.codes.has(0) && !slices.ContainsFunc(p.items, func(it item) bool { return it.elem == elModel }) {
		c.codes.add(14) // clean, but no model
	}
	extra := additionalText(c, invalid, vehType == "10" || slices.Contains(incompleteBodies, body), conclusive)
	p.codes = c.codes
	p.items = append(p.items,
		correctionItem(elSuggestedVIN, c.suggested),
		correctionItem(elErrorCode, codeList(c.codes)),
		correctionItem(elErrorText, errorText(c.codes, offRoad)),
		correctionItem(elPossibleValues, c.possible),
		correctionItem(elAdditionalErrorText, extra),
		correctionItem(elVehicleDescriptor, d.descriptor()))
	p.sc = d.score(p)
}

// invalidChars checks each position's character class as vPIC does after
// the corrections: positions 13-17 (14-17 but for cars, MPVs and light
// trucks; 15-17 for a six-character WMI) must be digits, position 9 a
// digit or X (unless the body is off-road), position 10 a model-year code.
// Each offender is marked '!' in the suggested VIN; the list reads
// "10:0, 14:A".
func (d *decoder) invalidChars(c *correction, offRoad bool) string {
	start := 14
	switch {
	case d.vin[2] == '9':
		start = 15
	case d.wmi.carLT():
		start = 13
	}
	var bad []string
	for j := 1; j <= len(d.vin); j++ {
		ch := d.vin[j-1]
		digit := ch >= '0' && ch <= '9'
		wrong := (j != 9 && j >= start && !digit) ||
			(j == 9 && !offRoad && !digit && ch != 'X') ||
			(j == 10 && !isMYChar(ch))
		if !wrong {
			continue
		}
		if c.suggested == "" {
			c.suggested = d.vin
		}
		c.suggested = c.suggested[:j-1] + "!" + c.suggested[j:]
		bad = append(bad, strconv.Itoa(j)+":"+string(ch))
	}
	return strings.Join(bad, ", ")
}

// additionalText is AdditionalErrorText: the explanation of codes 4 and 5,
// the unused positions (code 14), the invalid characters (code 400), and
// the incomplete-vehicle and uncertain-model-year warnings, each appended
// and the whole trimmed and cut to 500 characters. As in vPIC, code 14
// without unused positions (clean but no model) blanks what came before.
func additionalText(c correction, invalid string, incompleteVehicle, conclusive bool) string {
	var text string
	for _, ec := range c.codes.list() {
		if ec.extra != "" {
			text = ec.extra
		}
	}
	add := func(s string) { text = cut(strings.Trim(text+s, " ")) }
	if c.codes.has(14) {
		if !c.hasUnused {
			text = ""
		} else {
			add(unusedText + c.unused + ". ")
		}
	}
	if invalid != "" {
		add(invalidText + invalid + ". ")
	}
	if incompleteVehicle {
		add(incomplete)
	}
	if !conclusive {
		add(yearMayBeBad)
	}
	return text
}

// errorText is ErrorText: the codes' texts joined by "; ".
func errorText(codes codeSet, offRoad bool) string {
	var parts []string
	for _, ec := range codes.list() {
		t := ec.text
		if offRoad && ec.id == 1 {
			t += offRoadNote
		}
		parts = append(parts, strings.TrimSpace(t))
	}
	return cut(strings.Join(parts, "; "))
}

// codeList is ErrorCode: the codes joined by ",", ascending.
func codeList(codes codeSet) string {
	var parts []string
	for _, ec := range codes.list() {
		parts = append(parts, strconv.Itoa(ec.id))
	}
	return strings.Join(parts, ",")
}

func cut(s string) string {
	if r := []rune(s); len(r) > maxText {
		return string(r[:maxText])
	}
	return s
}

func correctionItem(elem int16, v string) item {
	return item{attr: v, value: v, priority: 999, key: -1, elem: elem, src: srcCorrection}
}

// attrOf returns the attribute of the first item of the element.
func attrOf(items []item, elem int16) string {
	for i := range items {
		if items[i].elem == elem {
			return items[i].attr
		}
	}
	return ""
}

// descriptor is vPIC's VehicleDescriptor: positions 1-8, '*', 10-11
// ("1HGCM826*3A"), through position 14 when position 3 is '9'.
func (d *decoder) descriptor() string {
	n := 11
	if d.vin[2] == '9' {
		n = 14
	}
	return d.vin[:8] + "*" + d.vin[9:n]
}

// score scores a pass (spVinDecode's table x).
func (d *decoder) score(p *pass) score {
	var sc score
	for _, ec := range p.codes.list() {
		sc.errors += ec.weight
	}
	seen := make([]bool, len(d.s.elements))
	for i := range p.items {
		it := &p.items[i]
		if e := d.s.element(it.elem); e != nil && it.nonEmpty() && !seen[it.elem] {
			seen[it.elem] = true
			sc.weight += e.weight
		}
		if it.src.scored() && it.nonEmpty() && it.value != "Not Applicable" {
			sc.patterns++
		}
	}
	sc.year = p.year
	return sc
}
