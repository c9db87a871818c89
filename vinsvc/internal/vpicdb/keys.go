package vpicdb

import "strings"

// Pattern.Keys is matched against a VIN's "var keys": positions 4-8, '|',
// positions 10-17 (1HGCM82633A004352 → "CM826|3A004352"), so key position
// i stands for VIN position i+3 and the '|' sits over the check digit. A
// key matches when each of its positions admits the var key's character
// there; keys shorter than 14 leave the rest free (vPIC's
// `var_keys LIKE replace(keys, '*', '_') || '%'`). In a key:
//
//   - '*' and '_' admit any character;
//   - "[...]" is one position admitting a class of characters, with ranges
//     ("[A-HJ-NP]") and '^' negation as in T-SQL's LIKE;
//   - '#' admits only a '#', which no var key holds: such keys are vPIC's
//     "formula patterns", matched instead against the var keys with every
//     digit replaced by '#', whose value is the VIN's digits under the '#'s
//     (AttributeId is then the placeholder "TBD");
//   - anything else admits itself.
//
// Characters are kept as bits of a uint64: '0'..'Z' at bits 0..42, then
// '_', '|', '#', and one bit for anything else.
const (
	bitUnderscore = 43
	bitBar        = 44
	bitHash       = 45
	bitOther      = 46

	// varKeysLen is the length of a full VIN's var keys; a key with more
	// positions never matches.
	varKeysLen = 14

	anyChar = ^uint64(0)
)

// vinChars is vPIC's set of characters a VIN may hold (fValidCharsInKey's
// validchars: no I, O, Q).
var vinChars = maskOf("ABCDEFGHJKLMNPRSTUVWXYZ0123456789")

// digitChars is the set of digits.
var digitChars = maskOf("0123456789")

func charBit(c byte) uint64 {
	switch {
	case c >= '0' && c <= 'Z':
		return 1 << (c - '0')
	case c == '_':
		return 1 << bitUnderscore
	case c == '|':
		return 1 << bitBar
	case c == '#':
		return 1 << bitHash
	}
	return 1 << bitOther
}

func maskOf(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		m |= charBit(s[i])
	}
	return m
}

// maskChars lists a set's characters in the order vPIC prints them
// (SQL Server's collation: '_' first, then digits, then letters).
func maskChars(m uint64) string {
	var b strings.Builder
	if m&(1<<bitUnderscore) != 0 {
		b.WriteByte('_')
	}
	for c := byte('0'); c <= 'Z'; c++ {
		if m&charBit(c) != 0 {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// key is one distinct Pattern.Keys, compiled. Its masks live in
// snapshot.masks: match[i] = masks[off+i] says which var-key characters
// key position i admits; valid[i] = masks[off+n+i] says which VIN
// characters the key names at that position (vPIC's fValidCharsInKey: '*'
// names none, '#' the digits), used for the suggested-VIN corrections and
// the unused positions of error code 14.
type key struct {
	text      string
	off       int32
	n         uint8 // positions kept, at most varKeysLen
	never     bool  // more than varKeysLen positions, or an unclosed '[': matches nothing
	formula   bool  // holds a '#'
	lenNoStar int16 // LENGTH(REPLACE(Keys, '*', '')): a dedup tie-break
}

// compileKey compiles text (upper-cased, as vPIC compares) and appends its
// masks to masks.
func compileKey(text string, masks []uint64) (key, []uint64) {
	k := key{text: text, formula: strings.Contains(text, "#")}
	k.lenNoStar = int16(len(text) - strings.Count(text, "*"))
	var match, valid []uint64
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c != '[' {
			match = append(match, literalMatch(c))
			valid = append(valid, literalValid(c))
			continue
		}
		end := strings.IndexByte(text[i:], ']')
		if end < 0 {
			k.never = true // fValidCharsInKey drops an unclosed class
			break
		}
		body := text[i+1 : i+end]
		match = append(match, classMask(body))
		valid = append(valid, classValid(body))
		i += end
	}
	if len(match) > varKeysLen {
		k.never = true
		match, valid = match[:varKeysLen], valid[:varKeysLen]
	}
	k.off, k.n = int32(len(masks)), uint8(len(match))
	masks = append(masks, match...)
	return k, append(masks, valid...)
}

func literalMatch(c byte) uint64 {
	if c == '*' || c == '_' {
		return anyChar
	}
	return charBit(c)
}

func literalValid(c byte) uint64 {
	switch c {
	case '*':
		return 0
	case '#':
		return digitChars
	}
	return charBit(c) &^ (1 << bitOther)
}

// classMask is what a "[...]" position admits: its characters and ranges,
// or all others after a leading '^'.
func classMask(body string) uint64 {
	neg := strings.HasPrefix(body, "^")
	if neg {
		body = body[1:]
	}
	var m uint64
	for i := 0; i < len(body); i++ {
		if i+2 < len(body) && body[i+1] == '-' {
			for c := int(body[i]); c <= int(body[i+2]); c++ {
				m |= charBit(byte(c))
			}
			i += 2
			continue
		}
		m |= charBit(body[i])
	}
	if neg {
		return anyChar &^ m
	}
	return m
}

// classValid is fValidCharsInRegEx: a class without '-' or '^' names its
// characters as written; otherwise the VIN characters it admits. '*', '|'
// and unprintable characters are left out as vPIC leaves out the first two.
func classValid(body string) uint64 {
	var m uint64
	if !strings.ContainsAny(body, "-^") {
		m = maskOf(body)
	} else {
		m = classMask(body) & vinChars
	}
	return m &^ (1<<bitBar | 1<<bitOther)
}

// matches reports whether the key admits the var keys whose character bits
// are vk.
func (k *key) matches(masks []uint64, vk *[varKeysLen]uint64) bool {
	if k.never {
		return false
	}
	m := masks[k.off : k.off+int32(k.n)]
	for i, x := range m {
		if x&vk[i] == 0 {
			return false
		}
	}
	return true
}

// valid returns the key's per-position VIN characters.
func (k *key) valid(masks []uint64) []uint64 {
	return masks[k.off+int32(k.n) : k.off+2*int32(k.n)]
}

// formulaValue is the VIN text under a formula key's '#'s: vPIC's
// SUBSTRING(var_keys, first '#', last '#' - first '#' + 1), by the key's
// character offsets.
func formulaValue(varKeys, text string) string {
	first, last := strings.IndexByte(text, '#'), strings.LastIndexByte(text, '#')
	if first < 0 || first >= len(varKeys) {
		return ""
	}
	return varKeys[first:min(last+1, len(varKeys))]
}
