package vpicdb_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpicdb"
	"github.com/google/go-cmp/cmp"
)

// testNow is the date the tests decode at (the corpus was generated with
// corgi's clock pinned to it): the model-year window depends on it.
var testNow = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

// snapshotPath finds the real vPIC lite database: $TEST_VPIC_SNAPSHOT, or
// data/vpic/vpic.lite.db (VPIC_SNAPSHOT_PATH's default) under vinsvc or
// under the repository root, where `make vpic-snapshot` puts it. Without
// one the test is skipped, visibly; with REQUIRE_SNAPSHOT=1 it fails.
func snapshotPath(tb testing.TB) string {
	tb.Helper()
	if p := os.Getenv("TEST_VPIC_SNAPSHOT"); p != "" {
		if _, err := os.Stat(p); err != nil {
			tb.Fatalf("TEST_VPIC_SNAPSHOT=%s: %v", p, err)
		}
		return p
	}
	for _, p := range []string{"../../data/vpic/vpic.lite.db", "../../../data/vpic/vpic.lite.db"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "no vPIC snapshot: set TEST_VPIC_SNAPSHOT or run `make vpic-snapshot` (data/vpic/vpic.lite.db)"
	if os.Getenv("REQUIRE_SNAPSHOT") == "1" {
		tb.Fatal(msg + " (REQUIRE_SNAPSHOT=1)")
	}
	tb.Skip("SKIP: " + msg)
	return ""
}

// shared is the snapshot opened once for the whole test binary: loading it
// takes seconds, and a DB is read-only and safe for concurrent use, so
// tests share it instead of opening one each.
var shared struct {
	once sync.Once
	db   *vpicdb.DB
	err  error
}

// mustOpenShared returns the shared DB, with its clock at testNow.
func mustOpenShared(tb testing.TB) *vpicdb.DB {
	tb.Helper()
	path := snapshotPath(tb)
	shared.once.Do(func() {
		shared.db, shared.err = vpicdb.Open(context.Background(), path, discardLogger())
		if shared.err == nil {
			vpicdb.SetClock(shared.db, func() time.Time { return testNow })
		}
	})
	if shared.err != nil {
		tb.Fatalf("Open(%q) = %v", path, shared.err)
	}
	return shared.db
}

func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// mustDecode decodes v and returns the result and its flat record.
func mustDecode(tb testing.TB, db *vpicdb.DB, v string) (vin.Result, map[string]string) {
	tb.Helper()
	d, err := db.Decode(context.Background(), v)
	if err != nil {
		tb.Fatalf("Decode(%q) = %v", v, err)
	}
	var flat map[string]string
	if err := json.Unmarshal(d.Raw, &flat); err != nil {
		tb.Fatalf("Decode(%q).Raw is not a flat record of strings: %v", v, err)
	}
	return d.Result, flat
}

// sameText compares names as the research advises: trimmed, ignoring case.
func sameText(a, b string) bool { return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b)) }

func TestOpenMissingFile(t *testing.T) {
	t.Parallel()
	_, err := vpicdb.Open(t.Context(), filepath.Join(t.TempDir(), "nope.db"), discardLogger())
	if !errors.Is(err, vpicdb.ErrMissing) {
		t.Fatalf("Open(missing) = %v, want ErrMissing", err)
	}
}

func TestOpenBadFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tt := range []struct {
		name string
		path string
		want error
	}{
		{"empty", write("empty.db", nil), vpicdb.ErrCorrupt},
		{"text", write("text.db", []byte(strings.Repeat("not a database\n", 100))), vpicdb.ErrCorrupt},
		{"header-only", write("header.db", []byte("SQLite format 3\x00")), vpicdb.ErrCorrupt},
		{"directory", dir, vpicdb.ErrCorrupt},
		{"wrong-tables", wrongTablesDB(t, filepath.Join(dir, "wrong.db")), vpicdb.ErrSchema},
		{"missing-column", missingColumnDB(t, filepath.Join(dir, "column.db")), vpicdb.ErrSchema},
	} {
		t.Run(tt.name, func(t *testing.T) {
			db, err := vpicdb.Open(t.Context(), tt.path, discardLogger())
			if !errors.Is(err, tt.want) {
				t.Fatalf("Open(%s) = %v, %v, want %v", tt.name, db, err, tt.want)
			}
		})
	}
}

// wrongTablesDB writes a SQLite file whose tables are not vPIC's.
func wrongTablesDB(t *testing.T, path string) string {
	t.Helper()
	execSQL(t, path, "CREATE TABLE Patterns (Id INTEGER, Keys TEXT)", "INSERT INTO Patterns VALUES (1, '*')")
	return path
}

// missingColumnDB writes a SQLite file with all of vPIC's tables, one
// lacking a column (Pattern.Keys).
func missingColumnDB(t *testing.T, path string) string {
	t.Helper()
	execSQL(t, path,
		"CREATE TABLE Element (Id INTEGER, Code TEXT, LookupTable TEXT, Decode TEXT, IsPrivate INTEGER, weight INTEGER)",
		"CREATE TABLE Wmi (Id INTEGER, Wmi TEXT, ManufacturerId INTEGER, VehicleTypeId INTEGER, TruckTypeId INTEGER, PublicAvailabilityDate TEXT, CreatedOn TEXT, UpdatedOn TEXT)",
		"CREATE TABLE Wmi_VinSchema (WmiId INTEGER, VinSchemaId INTEGER, YearFrom INTEGER, YearTo INTEGER)",
		"CREATE TABLE VinSchema (Id INTEGER, TobeQCed INTEGER)",
		"CREATE TABLE Pattern (Id INTEGER, VinSchemaId INTEGER, ElementId INTEGER, AttributeId TEXT, CreatedOn TEXT, UpdatedOn TEXT)",
		"CREATE TABLE Wmi_Make (WmiId INTEGER, MakeId INTEGER)",
		"CREATE TABLE Make (Id INTEGER, Name TEXT)",
		"CREATE TABLE Model (Id INTEGER, Name TEXT)",
		"CREATE TABLE Make_Model (MakeId INTEGER, ModelId INTEGER)",
		"CREATE TABLE Manufacturer (Id INTEGER, Name TEXT)",
		"CREATE TABLE VehicleType (Id INTEGER, Name TEXT)",
		"CREATE TABLE EngineModel (Id INTEGER, Name TEXT)",
		"CREATE TABLE EngineModelPattern (Id INTEGER, EngineModelId INTEGER, ElementId INTEGER, AttributeId TEXT, CreatedOn TEXT, UpdatedOn TEXT)",
		"CREATE TABLE Conversion (Id INTEGER, FromElementId INTEGER, ToElementId INTEGER, Formula TEXT)",
	)
	return path
}

func execSQL(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(t.Context(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

func TestOpenSchemaErrorNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	path := missingColumnDB(t, filepath.Join(t.TempDir(), "column.db"))
	_, err := vpicdb.Open(t.Context(), path, discardLogger())
	if err == nil || !strings.Contains(err.Error(), "Pattern.Keys") {
		t.Fatalf("Open(missing Pattern.Keys) = %v, want an error naming Pattern.Keys", err)
	}
}

// TestOpenTruncated opens copies of the real snapshot cut after a few
// sizes: each must fail with ErrCorrupt, never panic or load half.
func TestOpenTruncated(t *testing.T) {
	src := snapshotPath(t)
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dir := t.TempDir()
	for _, kb := range []int64{1, 64, 4096} {
		dst := filepath.Join(dir, "cut.db")
		out, err := os.Create(dst)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(out, io.NewSectionReader(f, 0, kb<<10)); err != nil {
			t.Fatal(err)
		}
		out.Close()
		if _, err := vpicdb.Open(t.Context(), dst, discardLogger()); !errors.Is(err, vpicdb.ErrCorrupt) {
			t.Errorf("Open(first %d KiB) = %v, want ErrCorrupt", kb, err)
		}
	}
	// A cut copy whose header claims the cut size gets past the size check
	// and fails in SQLite, when the tables' pages are missing.
	dst := filepath.Join(dir, "lying.db")
	data := make([]byte, 4<<20)
	if _, err := io.ReadFull(f, data); err != nil {
		t.Fatal(err)
	}
	pageSize := int(data[16])<<8 | int(data[17])
	binary.BigEndian.PutUint32(data[28:32], uint32(len(data)/pageSize))
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = vpicdb.Open(t.Context(), dst, discardLogger())
	if !errors.Is(err, vpicdb.ErrCorrupt) {
		t.Errorf("Open(cut copy with a fitting header) = %v, want ErrCorrupt", err)
	}
	t.Logf("cut copy with a fitting header: %v", err)
}

func TestOpenCanceled(t *testing.T) {
	path := snapshotPath(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := vpicdb.Open(ctx, path, discardLogger()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Open(canceled) = %v, want context.Canceled", err)
	}
}

func TestDate(t *testing.T) {
	db := mustOpenShared(t)
	if got, want := db.Date().Format(time.DateOnly), "2026-03-12"; got != want {
		t.Errorf("Date() = %s, want %s", got, want)
	}
}

// TestFlatRecordKeys checks the raw record: every key of vPIC's 2026 flat
// record, in vPIC's order (byte order, as vPIC sends them), all strings.
func TestFlatRecordKeys(t *testing.T) {
	db := mustOpenShared(t)
	d, err := db.Decode(t.Context(), "1HGCM82633A004352")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(strings.NewReader(string(d.Raw)))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v string
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("value of %v is not a string: %v", k, err)
		}
		keys = append(keys, k.(string))
	}
	if len(keys) != 154 {
		t.Errorf("the record has %d keys, want 154", len(keys))
	}
	if !slices.IsSorted(keys) {
		t.Errorf("keys are not in vPIC's (byte) order: %v", keys)
	}
	for _, k := range []string{"VIN", "MakeID", "ModelID", "ManufacturerId", "SuggestedVIN", "PossibleValues", "VehicleDescriptor", "WheelieMitigation", "NCSAMake"} {
		if !slices.Contains(keys, k) {
			t.Errorf("the record lacks %s", k)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	db := mustOpenShared(t)
	for _, tt := range []struct {
		name, vin string
		want      error
	}{
		{"unknown-wmi", "11111111111111111", vpicdb.ErrUnknownWMI},
		{"unknown-wmi-valid-check-digit", "ZZZ1M82633A004352", vpicdb.ErrUnknownWMI},
		// LRW and XP7 are corgi's community additions: no public
		// availability date, so vPIC would not decode them either.
		{"unpublished-wmi", "LRW3E7FA1MC000001", vpicdb.ErrUnknownWMI},
		{"short", "1HGCM82633A00435", vin.ErrInvalid},
		{"lowercase", "1hgcm82633a004352", vin.ErrInvalid},
		{"letter-o", "1HGCM82633AO04352", vin.ErrInvalid},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := db.Decode(t.Context(), tt.vin)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Decode(%q) = %v, want %v", tt.vin, err, tt.want)
			}
		})
	}
	if !errors.Is(vpicdb.ErrUnknownWMI, vin.ErrUpstream) {
		t.Error("ErrUnknownWMI is not of the kind vin.ErrUpstream")
	}
}

func TestDecodeCanceled(t *testing.T) {
	db := mustOpenShared(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := db.Decode(ctx, "1HGCM82633A004352"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Decode(canceled) = %v, want context.Canceled", err)
	}
}

// TestDecodeConcurrently decodes from many goroutines (run it with -race)
// and checks every answer equals the sequential one.
func TestDecodeConcurrently(t *testing.T) {
	db := mustOpenShared(t)
	vins := []string{"1FTMW1T88MFA00001", "1HGCM82633A004352", "3VV3B7AXXNM077525", "KMHC85LCXHU026758", "WBA3A5C51CF256987", "1FBNE3BE1CDB23596", "U5YH2519LKL016670"}
	want := map[string]string{}
	for _, v := range vins {
		d, err := db.Decode(t.Context(), v)
		if err != nil {
			t.Fatal(err)
		}
		want[v] = string(d.Raw)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			for i := range 40 {
				v := vins[(g+i)%len(vins)]
				d, err := db.Decode(t.Context(), v)
				if err != nil {
					t.Errorf("Decode(%q) = %v", v, err)
					return
				}
				if string(d.Raw) != want[v] {
					t.Errorf("Decode(%q) differs when run concurrently", v)
				}
			}
		})
	}
	wg.Wait()
}

// TestResultMatchesRaw: Decode maps its values without reading the JSON
// record back; the result must be exactly what reading it back gives.
func TestResultMatchesRaw(t *testing.T) {
	db := mustOpenShared(t)
	for _, v := range corpusVINs(t) {
		d, err := db.Decode(context.Background(), v)
		if err != nil {
			continue
		}
		rec, err := vin.ParseFlatRecord(d.Raw)
		if err != nil {
			t.Fatalf("Decode(%s) raw does not parse: %v", v, err)
		}
		want, err := rec.Decoded(v)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want.Result, d.Result); diff != "" {
			t.Errorf("Decode(%s) result differs from its raw record (-raw +result):\n%s", v, diff)
		}
	}
}
