package patent_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func shares(kv ...any) []patent.CPCShare {
	var out []patent.CPCShare
	for i := 0; i < len(kv); i += 2 {
		out = append(out, patent.CPCShare{Code: kv[i].(string), Share: kv[i+1].(float64)})
	}
	return out
}

// TestSimilarity: the cosine over the union of codes, by hand; the same
// mix is 1 whatever the scale, no code in common 0, a company without CPC
// shares 0, order and a repeated code change nothing.
func TestSimilarity(t *testing.T) {
	// a = (H04L .5, G06F .3, H04W .2), b = (H04L .4, G06F .1, B60L .5):
	// dot = .2 + .03 = .23; |a| = sqrt(.38), |b| = sqrt(.42).
	a, b := shares("H04L", 0.5, "G06F", 0.3, "H04W", 0.2), shares("H04L", 0.4, "G06F", 0.1, "B60L", 0.5)
	want := math.Round(0.23/math.Sqrt(0.38*0.42)*1000) / 1000
	for _, c := range []struct {
		name string
		a, b []patent.CPCShare
		want float64
	}{
		{"by hand", a, b, want},
		{"symmetric", b, a, want},
		{"order", shares("H04W", 0.2, "H04L", 0.5, "G06F", 0.3), b, want},
		{"same mix, other scale", a, shares("H04L", 0.25, "G06F", 0.15, "H04W", 0.1), 1},
		{"itself", a, a, 1},
		{"nothing shared", a, shares("A61B", 1.0), 0},
		{"no shares", a, nil, 0},
		{"both empty", nil, []patent.CPCShare{}, 0},
		{"zero shares only", a, shares("H04L", 0.0), 0},
		{"a repeated code counts once", shares("H04L", 0.5, "H04L", 0.9, "G06F", 0.3, "H04W", 0.2), b, want},
	} {
		if got := patent.Similarity(c.a, c.b); got != c.want {
			t.Errorf("%s: Similarity = %v, want %v", c.name, got, c.want)
		}
	}
	if want <= 0 || want >= 1 {
		t.Fatalf("the hand-computed case should be strictly between 0 and 1: %v", want)
	}
}

// TestCompare: pairs in request order with their shared codes by the
// smaller share (ties by code), distinctive codes per company largest
// first, a company without CPC shares compared at 0 with nothing shared.
func TestCompare(t *testing.T) {
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	cs := []patent.ComparedCompany{
		{Name: "Acme", Portfolio: patent.Portfolio{CPC: shares("H04L", 0.5, "G06F", 0.3, "H04W", 0.2)}},
		{Name: "Globex", Portfolio: patent.Portfolio{CPC: shares("H04L", 0.4, "B60L", 0.3, "G06F", 0.2, "A61B", 0.1)}},
		{Name: "Initech"}, // no CPC shares
	}
	c := patent.Compare(cs, now)
	if len(c.Pairs) != 3 || c.Pairs[0].A != "Acme" || c.Pairs[0].B != "Globex" || c.Pairs[1].B != "Initech" || c.Pairs[2].A != "Globex" {
		t.Fatalf("pairs = %+v, want Acme-Globex, Acme-Initech, Globex-Initech", c.Pairs)
	}
	wantShared := []patent.SharedCode{{Code: "H04L", ShareA: 0.5, ShareB: 0.4}, {Code: "G06F", ShareA: 0.3, ShareB: 0.2}}
	if !reflect.DeepEqual(c.Pairs[0].Shared, wantShared) {
		t.Errorf("shared = %+v, want %+v", c.Pairs[0].Shared, wantShared)
	}
	if p := c.Pairs[1]; p.Similarity != 0 || len(p.Shared) != 0 || p.Shared == nil {
		t.Errorf("a pair with a company without shares = %+v, want 0 and an empty list", p)
	}
	wantDistinct := []patent.DistinctiveCodes{
		{Company: "Acme", Codes: shares("H04W", 0.2)},
		{Company: "Globex", Codes: shares("B60L", 0.3, "A61B", 0.1)},
		{Company: "Initech", Codes: []patent.CPCShare{}},
	}
	if !reflect.DeepEqual(c.Distinctive, wantDistinct) {
		t.Errorf("distinctive = %+v, want %+v", c.Distinctive, wantDistinct)
	}
	// Ties: equal smaller shares go by code.
	tie := patent.Compare([]patent.ComparedCompany{
		{Name: "A", Portfolio: patent.Portfolio{CPC: shares("Y02E", 0.2, "B60L", 0.2, "H01M", 0.6)}},
		{Name: "B", Portfolio: patent.Portfolio{CPC: shares("H01M", 0.2, "Y02E", 0.4, "B60L", 0.4)}},
	}, now)
	var codes []string
	for _, s := range tie.Pairs[0].Shared {
		codes = append(codes, s.Code)
	}
	if strings.Join(codes, ",") != "B60L,H01M,Y02E" {
		t.Errorf("tied shared codes in order %v, want B60L,H01M,Y02E", codes)
	}
}

// TestParseCompared: 2 to 5 valid, distinct (case-insensitively) names,
// in request order; anything else ErrInvalid saying why.
func TestParseCompared(t *testing.T) {
	names, err := patent.ParseCompared([]string{"Tesla Inc", "Apple Inc."})
	if err != nil || len(names) != 2 || names[0] != "Tesla Inc" || names[1] != "Apple Inc." {
		t.Fatalf("ParseCompared = %v, %v", names, err)
	}
	for _, c := range []struct {
		in   []string
		says string
	}{
		{nil, "got 0"}, {[]string{"Tesla"}, "got 1"}, {[]string{"A1", "B2", "C3", "D4", "E5", "F6"}, "got 6"},
		{[]string{"Tesla", "TESLA"}, "company 2 (TESLA) is company 1 again"},
		{[]string{"Tesla", "<script>"}, "company 2:"},
	} {
		_, err := patent.ParseCompared(c.in)
		if !errors.Is(err, patent.ErrInvalid) || !strings.Contains(err.Error(), c.says) {
			t.Errorf("ParseCompared(%q) = %v, want ErrInvalid saying %q", c.in, err, c.says)
		}
	}
}
