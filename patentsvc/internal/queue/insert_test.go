package queue_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/queue"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestInsertTxInOrder: a batch insert answers each unit with its own row,
// whatever order the database returns them in: 200 scheduled runs in a
// shuffled order, a third of them queued already (Duplicate, the earlier
// unit) and job starts mixed in, each answer's row holding that unit's
// arguments.
func TestInsertTxInOrder(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			st, q := storetest.OpenQueue(t, d, time.Now, queue.Config{}, queue.Handlers{}) // no workers: units stay
			db, err := st.SQL()
			if err != nil {
				t.Fatal(err)
			}
			due := time.Date(2026, 11, 27, 8, 30, 0, 123456000, time.UTC)
			insert := func(units []patent.Unit) []patent.Queued {
				t.Helper()
				tx, err := db.BeginTx(context.Background(), nil)
				if err != nil {
					t.Fatal(err)
				}
				defer tx.Rollback()
				got, err := q.InsertTx(context.Background(), tx, units...)
				if err != nil || len(got) != len(units) {
					t.Fatalf("InsertTx = %d answers, %v; want %d", len(got), err, len(units))
				}
				if err := tx.Commit(); err != nil {
					t.Fatal(err)
				}
				return got
			}
			var earlier []patent.Unit
			for id := int64(1); id <= 200; id += 3 {
				earlier = append(earlier, patent.ScheduledRun{TrackedID: id, DueAt: due})
			}
			first := insert(earlier)
			firstID := map[int64]int64{}
			for i, u := range earlier {
				firstID[u.(patent.ScheduledRun).TrackedID] = first[i].UnitID
			}

			var units []patent.Unit
			for id := int64(1); id <= 200; id++ {
				units = append(units, patent.ScheduledRun{TrackedID: id, DueAt: due})
				if id%10 == 0 {
					units = append(units, patent.JobStart{JobID: "job-" + string(rune('a'+id/10))})
				}
			}
			rand.Shuffle(len(units), func(i, j int) { units[i], units[j] = units[j], units[i] })
			got := insert(units)
			for i, u := range units {
				kind, args := unitRow(t, db, d, got[i].UnitID)
				switch u := u.(type) {
				case patent.ScheduledRun:
					var a struct {
						TrackedID int64     `json:"tracked_id"`
						DueAt     time.Time `json:"due_at"`
					}
					json.Unmarshal(args, &a)
					if kind != queue.KindScheduledRun || a.TrackedID != u.TrackedID || !a.DueAt.Equal(due) {
						t.Fatalf("run of company %d answered with unit %d: %s %s", u.TrackedID, got[i].UnitID, kind, args)
					}
					if id, queued := firstID[u.TrackedID]; got[i].Duplicate != queued || queued && got[i].UnitID != id {
						t.Errorf("run of company %d: unit %d, duplicate %v; queued before as %d (%v)", u.TrackedID, got[i].UnitID, got[i].Duplicate, id, queued)
					}
				case patent.JobStart:
					var a struct {
						JobID string `json:"job_id"`
					}
					json.Unmarshal(args, &a)
					if kind != queue.KindJobStart || a.JobID != u.JobID || got[i].Duplicate {
						t.Fatalf("start of %s answered with unit %d: %s %s", u.JobID, got[i].UnitID, kind, args)
					}
				}
			}
		})
	}
}

// unitRow reads a unit's kind and arguments (JSON) from River's table.
func unitRow(t *testing.T, db *sql.DB, dialect string, id int64) (string, []byte) {
	t.Helper()
	query := "SELECT kind, CAST(args AS TEXT) FROM river_job WHERE id = $1"
	if dialect == "sqlite" {
		query = "SELECT kind, json(args) FROM river_job WHERE id = ?"
	}
	var kind, args string
	if err := db.QueryRow(query, id).Scan(&kind, &args); err != nil {
		t.Fatalf("unit %d: %v", id, err)
	}
	return kind, []byte(args)
}
