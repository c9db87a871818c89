package vin_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// TestCheckDigit: real VINs' check digits (49 CFR 565.15), the classic
// all-ones VIN, X for a remainder of 10, and 0 for a character without a
// value.
func TestCheckDigit(t *testing.T) {
	for _, c := range []struct {
		vin  string
		want byte
	}{
		{"1HGCM82633A004352", '3'}, {"11111111111111111", '1'}, {"1M8GDM9AXKP042788", 'X'},
		{"5YJSA1DG9DFP14705", '9'}, {"1FTMW1T88MFA00001", '8'}, {"1HGCM8263IA004352", 0}, {"1HGCM82633A00435", 0},
	} {
		if got := vin.CheckDigit(c.vin); got != c.want {
			t.Errorf("CheckDigit(%s) = %q, want %q", c.vin, got, c.want)
		}
	}
	if !vin.CheckDigitOK("1HGCM82633A004352") || vin.CheckDigitOK("1HGCM82643A004352") {
		t.Error("CheckDigitOK does not follow the check digit of a North American VIN")
	}
	if !vin.CheckDigitOK("WBA3A5C51CF256987") || !vin.CheckDigitOK("WBA3A5C50CF256987") {
		t.Error("CheckDigitOK applied a check digit to a European WMI")
	}
	if vin.CheckDigitOK("WBA3A5C5OCF256987") {
		t.Error("CheckDigitOK passed a VIN holding O")
	}
}

// TestParseTyped: 16 to 18 letters and digits, I, O and Q allowed,
// upper-cased; anything else is ErrInvalid with what is wrong.
func TestParseTyped(t *testing.T) {
	for in, want := range map[string]string{
		"1hgcm82633a004352": "1HGCM82633A004352", " 1HGCM8263IA00435 ": "1HGCM8263IA00435", "1HGCM82633A0043522": "1HGCM82633A0043522",
		"OQIOQIOQIOQIOQIOQ": "OQIOQIOQIOQIOQIOQ",
	} {
		if got, err := vin.ParseTyped(in); err != nil || got != want {
			t.Errorf("ParseTyped(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"": "got 0", "1HGCM82633A0043": "got 15", "1HGCM82633A00435222": "got 19",
		"1HGCM82633A-04352": `character '-' at position 12`, "1HGCM82633A00435Ä": `character 'Ä' at position 17`,
	} {
		_, err := vin.ParseTyped(in)
		if !errors.Is(err, vin.ErrInvalid) || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTyped(%q) = %v, want ErrInvalid saying %q", in, err, msg)
		}
	}
}

// TestCandidates: every candidate is one edit away, well-formed, passes
// its check digit where it applies, and says which positions differ; the
// likelier mistakes come first.
func TestCandidates(t *testing.T) {
	const real = "1HGCM82633A004352"
	at := func(cs []vin.Candidate, v string) int {
		return slices.IndexFunc(cs, func(c vin.Candidate) bool { return c.VIN == v })
	}
	// I for 1: the only well-formed substitution at that place, cost 0.
	cs := vin.Candidates("IHGCM82633A004352")
	if len(cs) == 0 || cs[0].VIN != real || cs[0].Edit != vin.EditSubstitution || cs[0].Cost != vin.CostInvalidLetter || !slices.Equal(cs[0].Positions, []int{1}) {
		t.Errorf("Candidates(I for 1) starts %+v, want %s by substitution at 1", cs[:min(len(cs), 1)], real)
	}
	// S for 5 (a confusable, both VIN characters): found, ahead of every
	// other kind of mistake.
	cs = vin.Candidates("1HGCM82633A0043S2")
	i := at(cs, real)
	if i < 0 || cs[i].Cost != vin.CostConfusable || !slices.Equal(cs[i].Positions, []int{16}) {
		t.Fatalf("Candidates(S for 5) has the real VIN at %d: %+v", i, cs)
	}
	for _, c := range cs[:i] {
		if c.Cost > vin.CostConfusable {
			t.Errorf("%+v ranks before a confusable", c)
		}
	}
	// A swap, a deletion (18 in), an insertion (16 in).
	for typed, want := range map[string]struct {
		edit      string
		positions []int
	}{
		"1HGCM82363A004352":  {vin.EditTransposition, []int{8, 9}},
		"1HGCM826333A004352": {vin.EditDeletion, []int{9}},  // the first of the three 3s
		"1HGCM8263A004352":   {vin.EditInsertion, []int{9}}, // before the one 3 left
	} {
		cs := vin.Candidates(typed)
		i := at(cs, real)
		if i < 0 || cs[i].Edit != want.edit || !slices.Equal(cs[i].Positions, want.positions) {
			t.Errorf("Candidates(%s): the real VIN at %d (%+v), want by %s at %v", typed, i, cs, want.edit, want.positions)
		}
	}
	// Every candidate of every kind of input.
	for _, typed := range []string{"1HGCM82643A004352", "WBA3A5C51CF256987", "1HGCM826333A004352", "1HGCM8263A004352", "OQIOQIOQIOQIOQIOQ"} {
		cs := vin.Candidates(typed)
		seen := map[string]bool{}
		for j, c := range cs {
			if !vin.CheckDigitOK(c.VIN) || seen[c.VIN] || c.VIN == typed {
				t.Fatalf("Candidates(%s)[%d] = %+v: not well-formed, its check digit wrong, or given twice", typed, j, c)
			}
			seen[c.VIN] = true
			if j > 0 && c.Cost < cs[j-1].Cost {
				t.Fatalf("Candidates(%s) not cheapest first at %d", typed, j)
			}
			if d := differ(typed, c); d != len(c.Positions) || d == 0 {
				t.Fatalf("Candidates(%s)[%d] = %+v: %d positions differ", typed, j, c, d)
			}
		}
		if len(cs) > 561 {
			t.Errorf("Candidates(%s): %d, more than one edit can make", typed, len(cs))
		}
	}
	if cs := vin.Candidates("OQIOQIOQIOQIOQIOQ"); len(cs) != 0 {
		t.Errorf("an input of many I, O and Q has no VIN one edit away, got %d", len(cs))
	}
	// A European VIN: no check digit, so every well-formed substitution
	// and swap is a candidate (17 x 32 + 16 swaps of different
	// neighbours), but for the five that make its WMI North American (1-5
	// first), whose check digit then applies and fails.
	if n := len(vin.Candidates("WBA3A5C51CF256987")); n != 17*32+16-5 {
		t.Errorf("Candidates of a European VIN = %d, want %d", n, 17*32+16-5)
	}
}

// differ counts the positions of a candidate that differ from typed as its
// edit says: one for a substitution, deletion or insertion (the character
// removed or added), two for a swap.
func differ(typed string, c vin.Candidate) int {
	switch c.Edit {
	case vin.EditSubstitution, vin.EditTransposition:
		n := 0
		for i := range len(typed) {
			if typed[i] != c.VIN[i] {
				n++
			}
		}
		return n
	case vin.EditDeletion:
		if p := c.Positions[0] - 1; typed[:p]+typed[p+1:] == c.VIN {
			return 1
		}
	case vin.EditInsertion:
		if p := c.Positions[0] - 1; c.VIN[:p]+c.VIN[p+1:] == typed {
			return 1
		}
	}
	return -1
}

// FuzzSuggestInput: whatever is typed, ParseTyped accepts only 16 to 18
// letters and digits, upper-cased, and refuses the rest with ErrInvalid;
// every candidate of an accepted input is a well-formed VIN passing its
// check digit where it applies, one edit away as its positions say, none
// twice, at most 561, cheapest first.
func FuzzSuggestInput(f *testing.F) {
	for _, s := range []string{"1HGCM82633A004352", "IHGCM82633A004352", "1HGCM8263A004352", "1HGCM826333A004352", "wba3a5c51cf256987", "", "1HGCM82633A-04352", "ſHGCM82633A004352"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		typed, err := vin.ParseTyped(s)
		if err != nil {
			if !errors.Is(err, vin.ErrInvalid) {
				t.Fatalf("ParseTyped(%q) = %v, not ErrInvalid", s, err)
			}
			return
		}
		if len(typed) < vin.Len-1 || len(typed) > vin.Len+1 || strings.Trim(typed, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" {
			t.Fatalf("ParseTyped(%q) accepted %q", s, typed)
		}
		cs := vin.Candidates(typed)
		if len(cs) > 561 {
			t.Fatalf("%d candidates for %q", len(cs), typed)
		}
		seen := map[string]bool{}
		for j, c := range cs {
			if !vin.CheckDigitOK(c.VIN) || seen[c.VIN] || c.VIN == typed || differ(typed, c) != len(c.Positions) {
				t.Fatalf("Candidates(%q)[%d] = %+v", typed, j, c)
			}
			if j > 0 && c.Cost < cs[j-1].Cost {
				t.Fatalf("Candidates(%q) not cheapest first at %d", typed, j)
			}
			seen[c.VIN] = true
		}
	})
}
