package patent

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Publication is a patent a search returned, as an alert, a tracked
// company's history and the changes digest list it.
type Publication struct {
	PatentID        string
	Title           string
	PublicationDate string
	// PDFLink is "" when the search gave no usable PDF link.
	PDFLink string
}

// PatentChanges is what a tracked company's scheduled run found changed
// in its search answer since the company's earlier runs.
type PatentChanges struct {
	// New are the patents of this run never seen in an earlier run, in the
	// search's order.
	New []Publication
	// Dropped are the patent ids of the latest earlier run that this run
	// no longer returned, sorted.
	Dropped []string
}

// Empty reports whether nothing changed.
func (c PatentChanges) Empty() bool { return len(c.New) == 0 && len(c.Dropped) == 0 }

// NewIDs are the ids of the new patents.
func (c PatentChanges) NewIDs() []string {
	out := make([]string, len(c.New))
	for i, p := range c.New {
		out[i] = p.PatentID
	}
	return out
}

// DiffPublications is the run-to-run rule of tracking (decisions.md,
// "patentsvc: what changed, and what the portfolio covers"): of the
// patents current (this run's search answer), those never seen in the
// company's earlier runs (seen reports whether one was) are new; the
// patents of the latest earlier run (last) that current no longer holds
// are dropped. A patent that comes back after it was dropped is neither:
// it was seen. The order of current does not matter, nor do repeated ids
// (the first is kept); ids are compared as they are (publication numbers
// are upper case).
func DiffPublications(seen func(id string) bool, last []string, current []Publication) PatentChanges {
	ch := PatentChanges{New: []Publication{}, Dropped: []string{}}
	now := make(map[string]bool, len(current))
	for _, p := range current {
		if p.PatentID == "" || now[p.PatentID] {
			continue
		}
		now[p.PatentID] = true
		if !seen(p.PatentID) {
			ch.New = append(ch.New, p)
		}
	}
	dropped := map[string]bool{}
	for _, id := range last {
		if !now[id] && !dropped[id] {
			dropped[id] = true
			ch.Dropped = append(ch.Dropped, id)
		}
	}
	slices.Sort(ch.Dropped)
	return ch
}

// StartsBaseline reports whether a run whose search answered found
// publications starts a tracked company's record of what its runs see
// (its baseline: nothing is new on it). It does when no run has started it
// yet (seenSince nil) and either the company was never analysed before (its
// first run, whatever it found) or the run found patents: a company
// analysed before the record existed (tracked before migration 0011)
// starts on an answer with patents, since an empty one, a search's bad
// day maybe, would make its whole next page new.
func StartsBaseline(seenSince *time.Time, analysedBefore bool, found int) bool {
	return seenSince == nil && (!analysedBefore || found > 0)
}

// AlertTypeNewPatents is the alert of a scheduled run that found patents
// not seen in the company's earlier runs.
const AlertTypeNewPatents = "new_patents"

// MaxAlertPatents is the most patents a new_patents alert lists; its
// new_value counts them all.
const MaxAlertPatents = 50

// NewPatentsAlert is the new_patents alert of a run that found ch.New
// (none when it found none): new_value the number of new patents,
// old_value the count of the company's run before (previous), and the
// first MaxAlertPatents new patents. The message names the count and up to
// three ids, e.g. "2 new patents for Oticon: US11363389B2, US11140496B2".
func NewPatentsAlert(company string, previous int, ch PatentChanges) (Alert, bool) {
	n := len(ch.New)
	if n == 0 {
		return Alert{}, false
	}
	ids := ch.NewIDs()
	shown := strings.Join(ids[:min(n, 3)], ", ")
	if n > 3 {
		shown += fmt.Sprintf(" and %d more", n-3)
	}
	noun := "patents"
	if n == 1 {
		noun = "patent"
	}
	return Alert{
		CompanyName: company,
		AlertType:   AlertTypeNewPatents,
		Message:     fmt.Sprintf("%d new %s for %s: %s", n, noun, company, shown),
		OldValue:    float64(previous),
		NewValue:    float64(n),
		Patents:     append([]Publication(nil), ch.New[:min(n, MaxAlertPatents)]...),
	}, true
}

// PatentChangeRun is one scheduled run that found new or dropped patents,
// as the changes digest lists it (GET /admin/changes).
type PatentChangeRun struct {
	CompanyName string
	RunAt       time.Time
	Changes     PatentChanges
}
