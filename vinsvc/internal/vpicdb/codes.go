package vpicdb

import (
	"strconv"
	"strings"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// errorCode is a row of vPIC's ErrorCode table: the text of a code, the
// weight a pass loses for it, and the explanation it adds to
// AdditionalErrorText. The snapshot lacks the table; these are NHTSA's
// rows (vPIC's standalone database, 2026).
type errorCode struct {
	id     int
	text   string
	weight int
	extra  string
}

var errorCodes = []errorCode{
	{0, "0 - VIN decoded clean. Check Digit (9th position) is correct", 0, ""},
	{1, "1 - Check Digit (9th position) does not calculate properly", -5, ""},
	{2, "2 - VIN corrected, error in one position", -100, ""},
	{3, "3 - VIN corrected, error in one position (assuming Check Digit is correct)", -100, ""},
	{4, "4 - VIN corrected, error in one position only (indicated by ! in Suggested VIN), multiple matches found", -200,
		"In the Possible values section, the Numeric value before the : indicates the position in error and the values after the : indicate the possible values that are allowed in this position."},
	{5, "5 - VIN has errors in few positions", -300,
		"The error positions are indicated by ! in Suggested VIN. In the Possible values section, each pair of parenthesis indicate information about each error position in VIN . The Numeric value before the : indicates the position in error and the values after the : indicate the possible values that are allowed in this position"},
	{6, "6 - Incomplete VIN", -10, ""},
	{7, "7 - Manufacturer is not registered with NHTSA for sale or importation in the U.S. for use on U.S roads; Please contact the manufacturer directly for more information", -10000, ""},
	{8, "8 - No detailed data available currently", -1000, ""},
	{9, `9 - Glider Warning - A "Glider" is not a "motor vehicle", as defined in 49 U.S.C. 30102(a)(6), and cannot be assigned a VIN that meets 49 CFR Part 565 requirements`, 0, ""},
	{10, "10 - Off-Road Vehicle Warning – This is not a Vehicle Identification Number (VIN) for a motor vehicle. This indicates that the manufacturer did not certify this product as complying with the Federal Motor Vehicle Safety Standards that are applicable to motor vehicles as defined in 49 U.S.C. 30102.", 0, ""},
	{11, "11 - Incorrect Model Year - Position 10 does not match valid model year codes (I, O, Q, U, Z, 0). Decoded data may not be accurate.", -20, ""},
	{12, "12 - Model Year Warning - Model Year entered for decoding with VIN does not match the model year based on the 10th position in VIN.", -20, ""},
	{14, "14 - Unable to provide information for some of the characters in the VIN, based on the manufacturer submission.", -30, ""},
	{400, "400 - Invalid Characters Present", -40, ""},
}

const (
	offRoadNote  = " NOTE: Disregard if this is an off-road vehicle PIN, as check digit calculation may not be accurate."
	unusedText   = " Unused position(s): "
	invalidText  = " Invalid character(s): "
	incomplete   = " Incomplete Vehicle Warning - Please be advised that the vehicle may have been altered and may not be an accurate representation of the vehicle in its current condition. "
	yearMayBeBad = " The Model Year decoded for this VIN may be incorrect. If you know the Model year, please enter it and decode again to get more accurate information. "
)

// codeSet is a set of vPIC error codes; it iterates in ascending order,
// the order vPIC lists them in ("1,11,14,400").
type codeSet uint32

func codeBit(code int) codeSet {
	if code == 400 {
		return 1 << 15
	}
	return 1 << code
}

func (c *codeSet) add(code int)     { *c |= codeBit(code) }
func (c codeSet) has(code int) bool { return c&codeBit(code) != 0 }

// list returns the codes' table rows in ascending order.
func (c codeSet) list() []errorCode {
	var out []errorCode
	for _, ec := range errorCodes {
		if c.has(ec.id) {
			out = append(out, ec)
		}
	}
	return out
}

// yearPlan is the model years vPIC decodes a VIN for: year, and other
// (year-30) when position 10 alone cannot tell the two apart.
type yearPlan struct {
	year, other int // 0: none
	conclusive  bool
	moved       bool // year is the other 30-year cycle's: the WMI has no schema for position 7's
}

// years is vPIC's fVinModelYear2 plus spVinDecode's choice of candidate
// years. Position 10 names a year of 2010-2039. For passenger cars, MPVs
// and light trucks (by the WMI's vehicle type) position 7 decides between
// the two 30-year cycles (49 CFR 565.15: a digit means 1980-2009, a letter
// 2010-2039), and a year later than next calendar year is taken 30 years
// earlier (decisions.md, "vinsvc: snapshot answers as vPIC gives them":
// live vPIC decodes a 1998 trailer's "W" as 1998 in 2026, not 2028). That leaves other vehicles (heavy trucks, buses, motorcycles,
// trailers), where position 7 tells nothing, with two candidates: vPIC
// decodes both and keeps the better decode (see score), the later year
// when they decode equally well, and says the year may be incorrect. (The
// published fVinModelYear2 reads NOW() + 2 years; the live service's
// answers keep to next year, and they are what the snapshot must match.)
// When position 7 did decide, a year without any schema for the WMI
// yields to the other cycle's year if that has one.
func (d *decoder) years() yearPlan {
	my := yearOf(d.vin[9])
	if my == 0 {
		return yearPlan{conclusive: true}
	}
	conclusive := false
	carLT, pos7 := d.wmi.carLT(), d.vin[6]
	switch {
	case carLT && pos7 >= '0' && pos7 <= '9':
		my -= 30
		conclusive = true
	case carLT && pos7 >= 'A' && pos7 <= 'Z':
		conclusive = true
	}
	if my > d.year+1 {
		my -= 30
		conclusive = true
	}
	if !conclusive {
		return yearPlan{year: my, other: my - 30}
	}
	limit, alt := d.year+1, 0
	switch {
	case my >= 1980 && my <= limit-30:
		alt = my + 30
	case my >= 2010 && my <= limit:
		alt = my - 30
	}
	if alt != 0 && d.wmi.schemaCount(my) == 0 && d.wmi.schemaCount(alt) > 0 {
		return yearPlan{year: alt, conclusive: true, moved: true}
	}
	return yearPlan{year: my, conclusive: true}
}

// yearOf maps position 10 to its 2010-2039 model year, 0 for characters
// that code no year (U, Z, 0).
func yearOf(c byte) int {
	const cycle = "ABCDEFGHJKLMNPRSTVWXY123456789"
	if i := strings.IndexByte(cycle, c); i >= 0 {
		return 2010 + i
	}
	return 0
}

// charset holds, per var-key position (VIN position 4 onwards), the
// characters the keys of the WMI's schemas for the model year name.
type charset [varKeysLen]uint64

func (c *charset) add(valid []uint64) {
	for i, m := range valid {
		c[i] |= m
	}
}

// pass is one decode pass: its items, codes and score.
type pass struct {
	year  int
	items []item
	codes codeSet
	sc    score
}

// score ranks passes: the fewer and lighter error codes, then the heavier
// decoded elements (Element.weight), then the more pattern values, then
// the later model year.
type score struct{ errors, weight, patterns, year int }

func (a score) better(b score) bool {
	switch {
	case a.errors != b.errors:
		return a.errors > b.errors
	case a.weight != b.weight:
		return a.weight > b.weight
	case a.patterns != b.patterns:
		return a.patterns > b.patterns
	}
	return a.year > b.year
}

// correction is what vPIC's spVinDecode_ErrorCode finds.
type correction struct {
	codes     codeSet
	suggested string
	possible  string
	unused    string
	hasUnused bool
}

// correct compares positions 4-8 and 11-14 (4-8 and 11 for a
// six-character WMI) with the characters the WMI's keys allow for the
// year (cs), suggests a corrected VIN (codes 2-5), and lists the positions
// 4-8 and 11 no decoded pattern used (code 14).
func (d *decoder) correct(items []item, cs *charset) correction {
	var c correction
	last := 14
	if len(d.wmi.wmi) == 6 {
		last = 11
	}
	fixed := []byte(d.vin)
	var possible strings.Builder
	errs, errPos, errSet := 0, 0, uint64(0)
	for i := 4; i <= last; i++ {
		set := cs[i-4]
		if i == 9 || i == 10 || set == 0 || set&charBit(d.vin[i-1]) != 0 {
			continue
		}
		fixed[i-1] = '!'
		possible.WriteString("(" + strconv.Itoa(i) + ":" + maskChars(set) + ")")
		errs, errPos, errSet = errs+1, i, set
	}
	switch {
	case errs == 1:
		c.codes, c.suggested, c.possible = d.correctOne(errPos, errSet, string(fixed), possible.String())
	case errs > 1:
		c.codes.add(5)
		c.suggested, c.possible = string(fixed), possible.String()
	}
	c.unused, c.hasUnused = d.unused(items)
	if c.hasUnused {
		c.codes.add(14)
	}
	return c
}

// correctOne handles a single wrong position: one allowed character
// corrects it (code 2); several, of which exactly one makes the check
// digit right, correct it too (code 3); else code 4.
func (d *decoder) correctOne(pos int, set uint64, marked, possible string) (codeSet, string, string) {
	var codes codeSet
	chars := maskChars(set)
	with := func(c byte) string { return d.vin[:pos-1] + string(c) + d.vin[pos:] }
	if len(chars) == 1 {
		codes.add(2)
		return codes, with(chars[0]), possible
	}
	var good []byte
	var fixed string
	for i := 0; i < len(chars); i++ {
		if v := with(chars[i]); v[8] == checkDigit(v, true) {
			good, fixed = append(good, chars[i]), v
		}
	}
	pre := "(" + strconv.Itoa(pos) + ":"
	if len(good) == 1 {
		codes.add(3)
		return codes, fixed, pre + string(good) + ")"
	}
	codes.add(4)
	return codes, marked, pre + chars + ")"
}

// unused lists positions 4-8 and 11 whose character no pattern-sourced
// item's key names at that position.
func (d *decoder) unused(items []item) (string, bool) {
	var used charset
	for i := range items {
		if items[i].src.fromPattern() && items[i].key >= 0 {
			used.add(d.s.keys[items[i].key].valid(d.s.masks))
		}
	}
	var out []string
	for _, pos := range []int{4, 5, 6, 7, 8, 11} {
		if used[pos-4]&charBit(d.vin[pos-1]) == 0 {
			out = append(out, strconv.Itoa(pos))
		}
	}
	return strings.Join(out, ","), len(out) > 0
}

// checkDigit computes position 9 as vPIC's fVINCheckDigit (digits13) or
// fVINCheckDigit2 (digits13 = passenger car, MPV or light truck): '?' when
// a character is not allowed at its position (position 10 a model-year
// code, the last five or four positions digits), else the weighted sum of
// transliterated characters modulo 11, 10 written 'X' (research §6.1).
func checkDigit(v string, digits13 bool) byte {
	const weights = "\x08\x07\x06\x05\x04\x03\x02\x0a\x00\x09\x08\x07\x06\x05\x04\x03\x02"
	sum := 0
	for i := 0; i < len(v) && i < 17; i++ {
		c, pos := v[i], i+1
		numeric := pos >= 15 || (pos == 14 && v[2] != '9') || (pos == 13 && v[2] != '9' && digits13)
		switch {
		case pos == 10 && yearOf(c) == 0,
			numeric && (c < '0' || c > '9'):
			return '?'
		}
		n := vin.Transliterate(c)
		if n < 0 {
			return '?'
		}
		sum += n * int(weights[i])
	}
	if r := sum % 11; r < 10 {
		return byte('0' + r)
	}
	return 'X'
}

// isMYChar reports whether c codes a model year in position 10.
func isMYChar(c byte) bool { return yearOf(c) != 0 }
