package vpicdb_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vpicdb"
)

// TestVocabularyCurrent holds every name the decoder answers from the
// snapshot's lookup tables against vPIC's current lists
// (testdata/vocabulary-research.json: NHTSA's 2026_08 release, with its
// source per variable), Id by Id: after vocabulary.json's renames none may
// differ (decisions.md, "vinsvc: snapshot answers as vPIC gives them").
// Vehicle Type is compared without regard to case: the decoder upper-cases
// it, as vPIC's answers do.
func TestVocabularyCurrent(t *testing.T) {
	db := mustOpenShared(t)
	raw, err := os.ReadFile("testdata/vocabulary-research.json")
	if err != nil {
		t.Fatal(err)
	}
	var research struct {
		Variables []struct {
			Variable      string `json:"variable"`
			SnapshotTable string `json:"snapshot_table"`
			Values        []struct {
				ID   int32  `json:"id"`
				Name string `json:"name"`
			} `json:"values"`
		} `json:"variables"`
	}
	if err := json.Unmarshal(raw, &research); err != nil {
		t.Fatal(err)
	}
	checked, tables := 0, 0
	for _, v := range research.Variables {
		names := vpicdb.LookupNames(db, v.SnapshotTable)
		if v.SnapshotTable == "" || names == nil {
			continue // the lite snapshot lacks the table: the decoder never names these values
		}
		tables++
		for _, want := range v.Values {
			got, ok := names[want.ID]
			if !ok {
				continue // a value newer than the snapshot: no pattern of it can name it
			}
			checked++
			if got != want.Name && !(v.SnapshotTable == "VehicleType" && strings.EqualFold(got, want.Name)) {
				t.Errorf("%s (%s) %d = %q, vPIC's current name is %q", v.Variable, v.SnapshotTable, want.ID, got, want.Name)
			}
		}
	}
	if tables < 20 || checked < 500 {
		t.Errorf("checked %d names in %d tables: the research file did not match the snapshot's tables", checked, tables)
	}
	t.Logf("%d names in %d lookup tables are vPIC's current ones", checked, tables)
}
