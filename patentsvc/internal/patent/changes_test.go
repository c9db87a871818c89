package patent_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

func pubs(ids ...string) []patent.Publication {
	out := make([]patent.Publication, len(ids))
	for i, id := range ids {
		out[i] = patent.Publication{PatentID: id, Title: "Title of " + id}
	}
	return out
}

func seenIn(ids ...string) func(string) bool {
	m := map[string]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return func(id string) bool { return m[id] }
}

func TestDiffPublications(t *testing.T) {
	for _, tt := range []struct {
		name        string
		seen, last  []string
		current     []string
		wantNew     []string
		wantDropped []string
	}{
		{"first run: all new to the rule (the caller skips the alert)", nil, nil, []string{"A1", "B1"}, []string{"A1", "B1"}, []string{}},
		{"same set", []string{"A1", "B1"}, []string{"A1", "B1"}, []string{"A1", "B1"}, []string{}, []string{}},
		{"reordered", []string{"A1", "B1", "C1"}, []string{"A1", "B1", "C1"}, []string{"C1", "A1", "B1"}, []string{}, []string{}},
		{"three new, in the search's order", []string{"A1"}, []string{"A1"}, []string{"N3", "A1", "N1", "N2"}, []string{"N3", "N1", "N2"}, []string{}},
		{"only drops", []string{"A1", "B1", "C1"}, []string{"A1", "B1", "C1"}, []string{"B1"}, []string{}, []string{"A1", "C1"}},
		{"replaced: as many new as dropped, count unchanged", []string{"A1", "B1"}, []string{"A1", "B1"}, []string{"C1", "D1"}, []string{"C1", "D1"}, []string{"A1", "B1"}},
		{"back after a drop: neither new nor dropped", []string{"A1", "B1"}, []string{"A1"}, []string{"A1", "B1"}, []string{}, []string{}},
		{"dropped once, not again", []string{"A1", "B1"}, []string{"A1"}, []string{"A1"}, []string{}, []string{}},
		{"repeated ids count once", []string{}, []string{}, []string{"A1", "A1", "", "B1"}, []string{"A1", "B1"}, []string{}},
		{"empty answer drops the last run", []string{"A1", "B1"}, []string{"B1", "A1"}, nil, []string{}, []string{"A1", "B1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ch := patent.DiffPublications(seenIn(tt.seen...), tt.last, pubs(tt.current...))
			if got := ch.NewIDs(); !reflect.DeepEqual(got, tt.wantNew) {
				t.Errorf("new = %q, want %q", got, tt.wantNew)
			}
			if !reflect.DeepEqual(ch.Dropped, tt.wantDropped) {
				t.Errorf("dropped = %q, want %q", ch.Dropped, tt.wantDropped)
			}
			if ch.Empty() != (len(tt.wantNew) == 0 && len(tt.wantDropped) == 0) {
				t.Errorf("Empty() = %v", ch.Empty())
			}
			for _, p := range ch.New {
				if p.Title != "Title of "+p.PatentID {
					t.Errorf("new patent %+v lost its details", p)
				}
			}
		})
	}
}

func TestNewPatentsAlert(t *testing.T) {
	if _, ok := patent.NewPatentsAlert("Oticon", 10, patent.PatentChanges{Dropped: []string{"A1"}}); ok {
		t.Error("a run that only dropped patents raised an alert")
	}
	a, ok := patent.NewPatentsAlert("Oticon", 10, patent.PatentChanges{New: pubs("US11363389B2")})
	if !ok || a.AlertType != patent.AlertTypeNewPatents || a.NewValue != 1 || a.OldValue != 10 ||
		a.Message != "1 new patent for Oticon: US11363389B2" || len(a.Patents) != 1 {
		t.Errorf("one new patent: %+v, %v", a, ok)
	}
	a, _ = patent.NewPatentsAlert("Oticon", 14, patent.PatentChanges{New: pubs("A1", "B1", "C1")})
	if a.Message != "3 new patents for Oticon: A1, B1, C1" {
		t.Errorf("message = %q", a.Message)
	}
	var ids []string
	for i := range 120 {
		ids = append(ids, fmt.Sprintf("US%08dB2", i))
	}
	a, _ = patent.NewPatentsAlert("Acme", 0, patent.PatentChanges{New: pubs(ids...)})
	if a.NewValue != 120 || len(a.Patents) != patent.MaxAlertPatents || a.Patents[0].PatentID != ids[0] ||
		!strings.HasSuffix(a.Message, "and 117 more") {
		t.Errorf("120 new: new_value %v, %d listed, message %q", a.NewValue, len(a.Patents), a.Message)
	}
}

func TestStartsBaseline(t *testing.T) {
	since := time.Now()
	for _, tt := range []struct {
		name           string
		since          *time.Time
		analysedBefore bool
		found          int
		want           bool
	}{
		{"a new company's first run", nil, false, 3, true},
		{"a new company's first run, nothing found", nil, false, 0, true},
		{"tracked before the record existed, patents found", nil, true, 3, true},
		{"tracked before the record existed, an empty answer", nil, true, 0, false},
		{"the record started already", &since, true, 3, false},
		{"the record started already, empty", &since, false, 0, false},
	} {
		if got := patent.StartsBaseline(tt.since, tt.analysedBefore, tt.found); got != tt.want {
			t.Errorf("%s: StartsBaseline = %v, want %v", tt.name, got, tt.want)
		}
	}
}
