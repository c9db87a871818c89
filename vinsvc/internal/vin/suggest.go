package vin

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The edits a suggestion undoes (decisions.md, "vinsvc: suggestions for a
// mistyped VIN"): the suggested VIN is the typed one with one character
// replaced, two neighbours swapped, one character removed (an 18-character
// input) or one added (a 16-character input).
const (
	EditSubstitution  = "substitution"
	EditTransposition = "transposition"
	EditDeletion      = "deletion"
	EditInsertion     = "insertion"
)

// ErrNoSnapshot is the answer to a suggestion request without a loaded
// snapshot: suggestions are the snapshot's to make (decisions.md, "vinsvc:
// suggestions for a mistyped VIN"), never vPIC's, which would take a call
// per candidate.
var ErrNoSnapshot = errors.New("suggestions need the vPIC snapshot, and none is loaded (VPIC_SNAPSHOT_MODE=off, or no snapshot file)")

// MaxSuggestions is how many suggestions an answer holds at most.
const MaxSuggestions = 5

// ParseTyped normalises s, a VIN as a person typed it or a camera read it,
// for suggestions: 16 to 18 characters of A-Z and 0-9 once upper-cased
// (I, O and Q allowed: they are the usual misreadings of 1 and 0). It
// returns an error wrapping ErrInvalid that says what is wrong otherwise.
func ParseTyped(s string) (string, error) {
	v := Normalize(s)
	if n := utf8.RuneCountInString(v); n < Len-1 || n > Len+1 {
		return v, fmt.Errorf("%w: must be %d to %d characters, got %d", ErrInvalid, Len-1, Len+1, n)
	}
	for i, r := range v {
		if !(r >= '0' && r <= '9') && !(r >= 'A' && r <= 'Z') {
			return v, fmt.Errorf("%w: character %q at position %d is not allowed (only A-Z and 0-9)", ErrInvalid, r, i+1)
		}
	}
	return v, nil
}

// CheckDigitApplies reports whether position 9 of v is a check digit: a
// VIN of a North American WMI (first character 1 to 5; 49 CFR 565.15).
// Elsewhere the ninth character need not be one.
func CheckDigitApplies(v string) bool { return v != "" && v[0] >= '1' && v[0] <= '5' }

// CheckDigit is what position 9 of v, a 17-character VIN, must hold: the
// sum of its characters' values (transliterated: A=1 ... Z=9, no I, O, Q)
// times their positions' weights, modulo 11, with 10 written X (49 CFR
// 565.15(c)). It is 0 when v has a character without a value.
func CheckDigit(v string) byte {
	const weights = "\x08\x07\x06\x05\x04\x03\x02\x0a\x00\x09\x08\x07\x06\x05\x04\x03\x02"
	if len(v) != Len {
		return 0
	}
	sum := 0
	for i := range Len {
		n := Transliterate(v[i])
		if n < 0 {
			return 0
		}
		sum += n * int(weights[i])
	}
	if r := sum % 11; r < 10 {
		return byte('0' + r)
	}
	return 'X'
}

// CheckDigitOK reports whether v is a well-formed VIN whose check digit
// calculates, or one of a WMI where it does not apply.
func CheckDigitOK(v string) bool {
	return Valid(v) && (!CheckDigitApplies(v) || v[8] == CheckDigit(v))
}

// Transliterate is a VIN character's check-digit value (49 CFR
// 565.15(c): A=1 ... Z=9, digits their own), -1 for I, O, Q and anything
// that is not a VIN character.
func Transliterate(c byte) int {
	const letters = "12345678-12345-7-923456789" // A..Z
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'A' && c <= 'Z' && letters[c-'A'] != '-':
		return int(letters[c-'A'] - '0')
	}
	return -1
}

// Candidate is a VIN one edit away from a typed input: well-formed, with
// its check digit right where it applies. Cost orders the likelier
// mistakes first (Cost constants); Positions are the 1-based positions of
// VIN that differ from the input (for a deletion or an insertion, the
// place of the character removed or the one added).
type Candidate struct {
	VIN       string
	Edit      string
	Positions []int
	Cost      int
	// Doubled marks an insertion that doubles its neighbour (one of a
	// double typed once): among candidates of one cost that decode as
	// fully, it comes first.
	Doubled bool
}

// The costs of the mistakes a candidate undoes, likeliest first.
const (
	// CostInvalidLetter replaces I, O or Q, which no VIN holds, with the
	// digit it is misread for (I for 1, O and Q for 0).
	CostInvalidLetter = iota
	// CostConfusable swaps a character for one that looks like it
	// (0/O/D/Q, 1/I/L, 2/Z, 5/S, 6/G, 8/B, U/V), or removes a character
	// typed twice.
	CostConfusable
	// CostSlip is a neighbouring key, or two neighbours swapped.
	CostSlip
	// CostOther is any other character, removed or added anywhere.
	CostOther
)

// confusable lists, for each character, those it is misread as or for.
var confusable = func() map[byte]string {
	m := map[byte]string{}
	for _, g := range []string{"0ODQ", "1IL", "2Z", "5S", "6G", "8B", "UV"} {
		for i := range len(g) {
			m[g[i]] += g[:i] + g[i+1:]
		}
	}
	return m
}()

// keyboard is a QWERTY layout: rows and their offsets in quarter keys.
var keyboard = [...]struct {
	keys   string
	offset int
}{{"1234567890", 0}, {"QWERTYUIOP", 2}, {"ASDFGHJKL", 3}, {"ZXCVBNM", 5}}

// neighbours reports whether a and b are next to each other on a QWERTY
// keyboard: the same row one key apart, or adjacent rows less than a key
// apart.
func neighbours(a, b byte) bool {
	ra, xa := keyAt(a)
	rb, xb := keyAt(b)
	if ra < 0 || rb < 0 || a == b {
		return false
	}
	dx := xa - xb
	if dx < 0 {
		dx = -dx
	}
	switch ra - rb {
	case 0:
		return dx == 4
	case 1, -1:
		return dx < 4
	}
	return false
}

// keyAt returns c's keyboard row and its position in quarter keys, -1 when
// it has none.
func keyAt(c byte) (row, x int) {
	for r, k := range keyboard {
		if i := strings.IndexByte(k.keys, c); i >= 0 {
			return r, k.offset + 4*i
		}
	}
	return -1, 0
}

// substitutionCost is the cost of typed having been written for want.
func substitutionCost(typed, want byte) int {
	switch {
	case (typed == 'I' && want == '1') || ((typed == 'O' || typed == 'Q') && want == '0'):
		return CostInvalidLetter
	case strings.IndexByte(confusable[typed], want) >= 0:
		return CostConfusable
	case neighbours(typed, want):
		return CostSlip
	}
	return CostOther
}

// vinAlphabet is every character a VIN may hold.
const vinAlphabet = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"

// Candidates returns every VIN one edit away from typed (as ParseTyped
// gives it) that is well-formed and passes its check digit where it
// applies, cheapest first, then by position: substitutions and
// transpositions of a 17-character input, deletions from an 18-character
// one, insertions into a 16-character one. There are at most 33 per
// position (561 for 17 positions), fewer where a check digit applies
// (about one in eleven passes).
func Candidates(typed string) []Candidate {
	var out []Candidate
	add := func(v, edit string, cost int, positions ...int) {
		if CheckDigitOK(v) {
			out = append(out, Candidate{VIN: v, Edit: edit, Positions: positions, Cost: cost})
		}
	}
	b := []byte(typed)
	switch len(typed) {
	case Len:
		for i := range Len {
			for j := range len(vinAlphabet) {
				if c := vinAlphabet[j]; c != typed[i] {
					add(typed[:i]+string(c)+typed[i+1:], EditSubstitution, substitutionCost(typed[i], c), i+1)
				}
			}
		}
		for i := range Len - 1 {
			if typed[i] != typed[i+1] {
				b[i], b[i+1] = b[i+1], b[i]
				add(string(b), EditTransposition, CostSlip, i+1, i+2)
				b[i], b[i+1] = b[i+1], b[i]
			}
		}
	case Len + 1:
		for i := range Len + 1 {
			if i > 0 && typed[i] == typed[i-1] {
				continue // the same VIN as removing its twin before it
			}
			cost := CostOther
			if i+1 < len(typed) && typed[i] == typed[i+1] {
				cost = CostConfusable
			}
			add(typed[:i]+typed[i+1:], EditDeletion, cost, i+1)
		}
	case Len - 1:
		for i := range Len {
			for j := range len(vinAlphabet) {
				c := vinAlphabet[j]
				if i > 0 && typed[i-1] == c {
					continue // the same VIN as adding it before its twin
				}
				v := typed[:i] + string(c) + typed[i:]
				if CheckDigitOK(v) {
					// One of a double typed once is likelier than another
					// character missed, but not likelier than a fuller
					// decode: it only breaks ties (Doubled).
					doubled := i < len(typed) && typed[i] == c
					out = append(out, Candidate{VIN: v, Edit: EditInsertion, Positions: []int{i + 1}, Cost: CostOther, Doubled: doubled})
				}
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Candidate) int { return cmp.Compare(a.Cost, b.Cost) })
	return out
}

// Suggestion is a candidate the snapshot decodes to a make and a model
// year, with what it decodes to.
type Suggestion struct {
	Candidate
	Make, Model, ModelYear string
}

// Suggestions answers a typed VIN: whether it is valid as typed, and if
// not, the likeliest VINs it was meant to be (at most MaxSuggestions,
// best first). Decoded counts the snapshot decodes it took.
type Suggestions struct {
	VIN         string
	Valid       bool
	Suggestions []Suggestion
	Decoded     int
}
