package cache_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// testTTL is the lifetime used by most tests; t0 is the fake clock's start.
const testTTL = 24 * time.Hour

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// mustOpen opens a cache at path with the fake clock and closes it when the
// test ends.
func mustOpen(tb testing.TB, path string, ttl time.Duration, clk *clocktest.Clock) *cache.Cache {
	tb.Helper()
	c, err := cache.Open(path, ttl, slog.New(slog.DiscardHandler), clk.Now)
	if err != nil {
		tb.Fatalf("Open(%q) error: %v", path, err)
	}
	tb.Cleanup(func() {
		// Closing an already closed cache is a no-op, so tests may close
		// it themselves.
		if err := c.Close(); err != nil {
			tb.Errorf("Close() error: %v", err)
		}
	})
	return c
}

// mustOpenTemp opens a fresh cache in a temporary directory.
func mustOpenTemp(tb testing.TB, clk *clocktest.Clock) *cache.Cache {
	tb.Helper()
	return mustOpen(tb, filepath.Join(tb.TempDir(), "cache.db"), testTTL, clk)
}

func mustPut(tb testing.TB, c *cache.Cache, ds ...vin.Decoded) {
	tb.Helper()
	if err := c.Put(context.Background(), ds); err != nil {
		tb.Fatalf("Put(%d entries) error: %v", len(ds), err)
	}
}

// mustGet returns the entry for v and whether it was served.
func mustGet(tb testing.TB, c *cache.Cache, v string, withRaw bool) (vin.Decoded, bool) {
	tb.Helper()
	d, ok, err := c.Get(context.Background(), v, withRaw)
	if err != nil {
		tb.Fatalf("Get(%q, %t) error: %v", v, withRaw, err)
	}
	return d, ok
}

func mustSweep(tb testing.TB, c *cache.Cache, now time.Time, chunk int) cache.SweepStats {
	tb.Helper()
	st, err := c.Sweep(context.Background(), now, chunk)
	if err != nil {
		tb.Fatalf("Sweep(%v, %d) error: %v", now, chunk, err)
	}
	return st
}

// testVIN returns a distinct valid 17-character VIN for i.
func testVIN(i int) string { return fmt.Sprintf("1HGCM8263%08d", i) }

func ptr[T any](v T) *T { return &v }

// rawHonda is a real vPIC flat record (its first 86 keys, about 2 KB),
// compacted as the vpic package stores it.
const rawHonda = `{"VIN":"1HGCM82633A004352","SuggestedVIN":"","ErrorCode":"0","ErrorText":"0 - VIN decoded clean. Check Digit (9th position) is correct","AdditionalErrorText":"","PossibleValues":"","VehicleDescriptor":"1HGCM826*3A","Note":"","Make":"HONDA","MakeID":"474","Manufacturer":"AMERICAN HONDA MOTOR CO., INC.","ManufacturerId":"988","Model":"Accord","ModelID":"1861","ModelYear":"2003","Series":"","Series2":"","Trim":"EX-V6","Trim2":"","VehicleType":"PASSENGER CAR","BasePrice":"","DestinationMarket":"","CashForClunkers":"","NonLandUse":"","PlantCity":"MARYSVILLE","PlantState":"OHIO","PlantCountry":"UNITED STATES (USA)","PlantCompanyName":"","BodyClass":"Coupe","BodyCabType":"Not Applicable","Doors":"2","Windows":"","WheelBaseType":"","WheelBaseShort":"","WheelBaseLong":"","TrackWidth":"","GVWR":"Class 1C: 4,001 - 5,000 lb (1,814 - 2,268 kg)","GVWR_to":"Class 1: 6,000 lb or less (2,722 kg or less)","GCWR":"","GCWR_to":"","CurbWeightLB":"","BedLengthIN":"","BedType":"Not Applicable","Wheels":"","WheelSizeFront":"","WheelSizeRear":"","Axles":"","AxleConfiguration":"","SeatRows":"","Seats":"","SteeringLocation":"","EntertainmentSystem":"","TopSpeedMPH":"","BusFloorConfigType":"Not Applicable","BusLength":"","BusType":"Not Applicable","OtherBusInfo":"","TrailerBodyType":"Not Applicable","TrailerLength":"","TrailerType":"Not Applicable","OtherTrailerInfo":"","CustomMotorcycleType":"Not Applicable","MotorcycleChassisType":"Not Applicable","MotorcycleSuspensionType":"Not Applicable","OtherMotorcycleInfo":"","DisplacementCC":"2998.832712","DisplacementCI":"183","DisplacementL":"2.998832712","EngineCylinders":"6","EngineCycles":"","EngineConfiguration":"V-Shaped","EngineHP":"240","EngineHP_to":"","EngineKW":"","EngineManufacturer":"","EngineModel":"J30A4","FuelTypePrimary":"Gasoline","FuelTypeSecondary":"","FuelInjectionType":"","ValveTrainDesign":"Single Overhead Cam (SOHC)","CoolingType":"","Turbo":"","OtherEngineInfo":"","ElectrificationLevel":"","TransmissionStyle":"Automatic","TransmissionSpeeds":"5"}`

// sampleDecoded returns a realistic answer for v: the Honda record with
// its VIN replaced, every mapped field set.
func sampleDecoded(v string) vin.Decoded {
	return vin.Decoded{
		Result: vin.Result{
			VIN:                  v,
			Make:                 ptr("HONDA"),
			Model:                ptr("Accord"),
			ModelYear:            ptr("2003"),
			Trim:                 ptr("EX-V6"),
			Series:               ptr(""),
			BodyClass:            ptr("Coupe"),
			DriveType:            nil,
			EngineDisplacementCC: ptr(2998.832712),
			EngineDisplacementL:  ptr(2.998832712),
			EngineCylinders:      ptr(6),
			FuelTypePrimary:      ptr("Gasoline"),
			TransmissionStyle:    ptr("Automatic"),
			TransmissionSpeeds:   ptr("5"),
			PlantCity:            ptr("MARYSVILLE"),
			PlantState:           ptr("OHIO"),
			PlantCountry:         ptr("UNITED STATES (USA)"),
			ManufacturerName:     ptr("AMERICAN HONDA MOTOR CO., INC."),
			VehicleType:          ptr("PASSENGER CAR"),
			ErrorCode:            "0",
		},
		Raw: []byte(strings.Replace(rawHonda, "1HGCM82633A004352", v, 1)),
	}
}

// sampleRange returns sampleDecoded for testVIN(from) .. testVIN(to-1).
func sampleRange(from, to int) []vin.Decoded {
	ds := make([]vin.Decoded, 0, to-from)
	for i := from; i < to; i++ {
		ds = append(ds, sampleDecoded(testVIN(i)))
	}
	return ds
}

// checkServed fails unless each of testVIN(from) .. testVIN(to-1) is
// served (want true) or missing (want false).
func checkServed(tb testing.TB, c *cache.Cache, from, to int, want bool) {
	tb.Helper()
	for i := from; i < to; i++ {
		v := testVIN(i)
		if _, ok := mustGet(tb, c, v, false); ok != want {
			tb.Errorf("Get(%q) ok = %t, want %t", v, ok, want)
		}
	}
}

// checkDecoded compares a served entry with the stored one: the result
// field by field, the raw record byte for byte (cmp is slow on 2 KB slices).
func checkDecoded(tb testing.TB, what string, want, got vin.Decoded) {
	tb.Helper()
	if diff := cmp.Diff(want.Result, got.Result); diff != "" {
		tb.Errorf("%s result mismatch (-want +got):\n%s", what, diff)
	}
	if !bytes.Equal(want.Raw, got.Raw) {
		tb.Errorf("%s.Raw = %q, want %q", what, got.Raw, want.Raw)
	}
}

func checkEntries(tb testing.TB, c *cache.Cache, want int64) {
	tb.Helper()
	if got := c.Stats().Entries; got != want {
		tb.Errorf("Stats().Entries = %d, want %d", got, want)
	}
}

func TestPutGet(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    vin.Decoded
	}{
		{
			name: "full record",
			d:    sampleDecoded("1HGCM82633A004352"),
		},
		{
			name: "no data",
			d: vin.Decoded{
				Result: vin.Result{
					VIN:       "1HGCM82633A004353",
					ErrorCode: "1,11",
					ErrorText: ptr("1 - Check Digit (9th position) does not calculate properly; 11 - Incorrect Model Year"),
				},
				Raw: []byte(`{"VIN":"1HGCM82633A004353","ErrorCode":"1,11","Make":""}`),
			},
		},
		{
			name: "zero values are not dropped",
			d: vin.Decoded{
				Result: vin.Result{
					VIN:                  "1FTMW1T88MFA00001",
					Make:                 ptr(""),
					Model:                ptr(""),
					DriveType:            ptr(""),
					EngineDisplacementCC: ptr(0.0),
					EngineDisplacementL:  ptr(0.0),
					EngineCylinders:      ptr(0),
					ErrorCode:            "",
					ErrorText:            ptr(""),
				},
				Raw: []byte(`{}`),
			},
		},
		{
			name: "awkward numbers and text",
			d: vin.Decoded{
				Result: vin.Result{
					VIN:                  "KMHC85LCXHU026758",
					Make:                 ptr(`FÖRD "<&>" 車`),
					BodyClass:            ptr("Pickup\n\ttab"),
					VehicleType:          ptr("TRUCK "),
					EngineDisplacementCC: ptr(0.1 + 0.2),
					EngineDisplacementL:  ptr(math.SmallestNonzeroFloat64),
					EngineCylinders:      ptr(math.MaxInt32), // vpic's bound
					PlantCity:            ptr(strings.Repeat("x", 300)),
					PlantCountry:         ptr(strings.Repeat("y", 20000)),
					ErrorCode:            "0",
				},
				// Not compact, with escapes: must come back byte for byte.
				Raw: []byte("{ \"Make\" : \"F\\u00d6RD\",\n  \"n\": [1, 2.50, 1e3] }"),
			},
		},
		{
			name: "negative numbers",
			d: vin.Decoded{
				Result: vin.Result{
					VIN:                  "3VV3B7AXXNM077525",
					EngineDisplacementCC: ptr(-math.MaxFloat64),
					EngineDisplacementL:  ptr(math.Copysign(0, -1)),
					EngineCylinders:      ptr(math.MinInt32),
					ErrorCode:            "1,11,400",
				},
				Raw: []byte(`[]`),
			},
		},
		{
			name: "no raw",
			d: vin.Decoded{
				Result: vin.Result{VIN: "WBA3A5C51CF256987", Make: ptr("BMW"), ErrorCode: "0"},
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.New(t0)
			c := mustOpenTemp(t, clk)
			mustPut(t, c, tt.d)
			v := tt.d.Result.VIN

			got, ok := mustGet(t, c, v, false)
			if !ok {
				t.Fatalf("Get(%q, false) ok = false, want true", v)
			}
			if diff := cmp.Diff(tt.d.Result, got.Result); diff != "" {
				t.Errorf("Get(%q, false) result mismatch (-want +got):\n%s", v, diff)
			}
			if got.Raw != nil {
				t.Errorf("Get(%q, false).Raw = %q, want nil", v, got.Raw)
			}

			got, ok = mustGet(t, c, v, true)
			if !ok {
				t.Fatalf("Get(%q, true) ok = false, want true", v)
			}
			if diff := cmp.Diff(tt.d.Result, got.Result); diff != "" {
				t.Errorf("Get(%q, true) result mismatch (-want +got):\n%s", v, diff)
			}
			if !bytes.Equal(got.Raw, tt.d.Raw) {
				t.Errorf("Get(%q, true).Raw = %q, want %q", v, got.Raw, tt.d.Raw)
			}
		})
	}
}

func TestPutManyGetEach(t *testing.T) {
	clk := clocktest.New(t0)
	c := mustOpenTemp(t, clk)
	want := sampleRange(0, 50)
	mustPut(t, c, want...)
	checkEntries(t, c, 50)
	for _, w := range want {
		got, ok := mustGet(t, c, w.Result.VIN, true)
		if !ok {
			t.Fatalf("Get(%q) ok = false, want true", w.Result.VIN)
		}
		checkDecoded(t, "Get("+w.Result.VIN+")", w, got)
	}
}

func TestPutEmpty(t *testing.T) {
	c := mustOpenTemp(t, clocktest.New(t0))
	if err := c.Put(context.Background(), nil); err != nil {
		t.Errorf("Put(nil) = %v, want nil", err)
	}
	checkEntries(t, c, 0)
}

// The raw bytes are copied on the way in and on the way out: neither the
// caller's slice nor a returned one aliases the cache.
func TestRawIsCopied(t *testing.T) {
	c := mustOpenTemp(t, clocktest.New(t0))
	d := sampleDecoded(testVIN(1))
	want := bytes.Clone(d.Raw)
	mustPut(t, c, d)
	for i := range d.Raw {
		d.Raw[i] = 'X'
	}

	got, _ := mustGet(t, c, testVIN(1), true)
	if !bytes.Equal(got.Raw, want) {
		t.Fatalf("Get(%q).Raw after caller changed its slice = %q, want %q", testVIN(1), got.Raw, want)
	}
	for i := range got.Raw {
		got.Raw[i] = 'Y'
	}
	got, _ = mustGet(t, c, testVIN(1), true)
	if !bytes.Equal(got.Raw, want) {
		t.Errorf("Get(%q).Raw after caller changed a returned slice = %q, want %q", testVIN(1), got.Raw, want)
	}
}

func TestGetMissing(t *testing.T) {
	for _, tt := range []struct {
		name    string
		stored  []vin.Decoded
		lookup  string
		withRaw bool
	}{
		{name: "empty cache", lookup: "1HGCM82633A004352"},
		{name: "empty cache with raw", lookup: "1HGCM82633A004352", withRaw: true},
		{name: "other VINs stored", stored: sampleRange(0, 3), lookup: testVIN(3), withRaw: true},
		{name: "prefix of a stored VIN", stored: sampleRange(10, 11), lookup: testVIN(10)[:16]},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := mustOpenTemp(t, clocktest.New(t0))
			if len(tt.stored) > 0 {
				mustPut(t, c, tt.stored...)
			}
			got, ok, err := c.Get(context.Background(), tt.lookup, tt.withRaw)
			if err != nil || ok {
				t.Errorf("Get(%q) ok, err = %t, %v, want false, nil", tt.lookup, ok, err)
			}
			if diff := cmp.Diff(vin.Decoded{}, got); diff != "" {
				t.Errorf("Get(%q) returned a non-zero entry (-want +got):\n%s", tt.lookup, diff)
			}
		})
	}
}

// An entry is served until stored+TTL and never from then on, whether or
// not a sweep ran.
func TestTTL(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after time.Duration // since the entry was stored
		want  bool
	}{
		{name: "just stored", after: 0, want: true},
		{name: "half way", after: testTTL / 2, want: true},
		{name: "one nanosecond before expiry", after: testTTL - time.Nanosecond, want: true},
		{name: "at expiry", after: testTTL, want: false},
		{name: "one nanosecond after expiry", after: testTTL + time.Nanosecond, want: false},
		{name: "long after expiry", after: 30 * testTTL, want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.New(t0)
			c := mustOpenTemp(t, clk)
			d := sampleDecoded(testVIN(7))
			mustPut(t, c, d)

			clk.Advance(tt.after)
			for _, withRaw := range []bool{false, true} {
				got, ok := mustGet(t, c, testVIN(7), withRaw)
				if ok != tt.want {
					t.Errorf("Get(%q, %t) at stored+%v: ok = %t, want %t", testVIN(7), withRaw, tt.after, ok, tt.want)
				}
				if !ok && (got.Result.VIN != "" || got.Raw != nil) {
					t.Errorf("Get(%q, %t) at stored+%v returned data for an expired entry: %+v", testVIN(7), withRaw, tt.after, got)
				}
			}
		})
	}
}

func TestSweep(t *testing.T) {
	// Old entries are stored at t0, fresh ones at t0+12h.
	const nOld, nFresh = 5, 3
	for _, tt := range []struct {
		name        string
		at          time.Time // sweep time
		wantDeleted int
		wantLeft    int64
	}{
		{name: "before any expiry", at: t0.Add(testTTL - time.Nanosecond), wantDeleted: 0, wantLeft: nOld + nFresh},
		{name: "at old expiry", at: t0.Add(testTTL), wantDeleted: nOld, wantLeft: nFresh},
		{name: "between expiries", at: t0.Add(testTTL + 6*time.Hour), wantDeleted: nOld, wantLeft: nFresh},
		{name: "at fresh expiry", at: t0.Add(12*time.Hour + testTTL), wantDeleted: nOld + nFresh, wantLeft: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.New(t0)
			c := mustOpenTemp(t, clk)
			mustPut(t, c, sampleRange(0, nOld)...)
			clk.Advance(12 * time.Hour)
			mustPut(t, c, sampleRange(100, 100+nFresh)...)
			before := c.Stats()
			if before.Entries != nOld+nFresh {
				t.Fatalf("Stats().Entries before sweep = %d, want %d", before.Entries, nOld+nFresh)
			}

			clk.Set(tt.at)
			st := mustSweep(t, c, tt.at, 0)
			if st.Deleted != tt.wantDeleted {
				t.Errorf("Sweep(%v).Deleted = %d, want %d", tt.at, st.Deleted, tt.wantDeleted)
			}
			after := c.Stats()
			if after.Entries != tt.wantLeft {
				t.Errorf("Stats().Entries after sweep = %d, want %d", after.Entries, tt.wantLeft)
			}
			if got, want := after.Evictions-before.Evictions, uint64(tt.wantDeleted); got != want {
				t.Errorf("Stats().Evictions grew by %d, want %d", got, want)
			}

			// With the clock moved back to when everything was fresh, only
			// what the sweep left is served: deleted means gone.
			clk.Set(t0.Add(12 * time.Hour))
			oldLeft := tt.wantDeleted == 0
			freshLeft := tt.wantDeleted < nOld+nFresh
			checkServed(t, c, 0, nOld, oldLeft)
			checkServed(t, c, 100, 100+nFresh, freshLeft)

			// A second sweep at the same time finds nothing more.
			if st := mustSweep(t, c, tt.at, 0); st.Deleted != 0 {
				t.Errorf("second Sweep(%v).Deleted = %d, want 0", tt.at, st.Deleted)
			}
			checkEntries(t, c, tt.wantLeft)
		})
	}
}

func TestSweepChunks(t *testing.T) {
	const nFresh = 7
	for _, tt := range []struct {
		name       string
		expired    int
		chunk      int
		wantChunks int
	}{
		{name: "95 in chunks of 10", expired: 95, chunk: 10, wantChunks: 10},
		{name: "100 in chunks of 10", expired: 100, chunk: 10, wantChunks: 10},
		{name: "fewer than a chunk", expired: 5, chunk: 10, wantChunks: 1},
		{name: "chunk of one", expired: 12, chunk: 1, wantChunks: 12},
		{name: "default chunk", expired: 95, chunk: 0, wantChunks: 1},
		{name: "nothing expired", expired: 0, chunk: 10, wantChunks: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clk := clocktest.New(t0)
			c := mustOpenTemp(t, clk)
			if tt.expired > 0 {
				mustPut(t, c, sampleRange(0, tt.expired)...)
			}
			clk.Advance(time.Hour)
			mustPut(t, c, sampleRange(1000, 1000+nFresh)...)

			clk.Set(t0.Add(testTTL))
			st := mustSweep(t, c, clk.Now(), tt.chunk)
			want := cache.SweepStats{Deleted: tt.expired, Chunks: tt.wantChunks}
			if st != want {
				t.Errorf("Sweep(chunk %d) = %+v, want %+v", tt.chunk, st, want)
			}
			checkEntries(t, c, nFresh)
			checkServed(t, c, 1000, 1000+nFresh, true)
			clk.Set(t0) // everything would be fresh: only deletion hides them
			checkServed(t, c, 0, tt.expired, false)
		})
	}
}

// Storing a VIN again restamps it: it lives for a TTL from the new store,
// counts once, and a sweep at the old expiry leaves it alone.
func TestPutRefreshesLifetime(t *testing.T) {
	clk := clocktest.New(t0)
	c := mustOpenTemp(t, clk)
	v := testVIN(42)
	first := sampleDecoded(v)
	mustPut(t, c, first)

	clk.Advance(testTTL / 2)
	second := sampleDecoded(v)
	second.Result.Model = ptr("Civic")
	second.Result.EngineCylinders = ptr(4)
	second.Raw = []byte(`{"VIN":"` + v + `","Model":"Civic"}`)
	mustPut(t, c, second)
	checkEntries(t, c, 1)

	// At the first stamp's expiry: still served, and the newer answer.
	clk.Set(t0.Add(testTTL))
	got, ok := mustGet(t, c, v, true)
	if !ok {
		t.Fatalf("Get(%q) at first expiry ok = false, want true", v)
	}
	checkDecoded(t, "Get("+v+") after refresh", second, got)
	if st := mustSweep(t, c, clk.Now(), 10); st.Deleted != 0 {
		t.Errorf("Sweep at first expiry deleted %d, want 0", st.Deleted)
	}
	checkEntries(t, c, 1)
	if _, ok := mustGet(t, c, v, false); !ok {
		t.Errorf("Get(%q) after sweep at first expiry ok = false, want true", v)
	}

	// At the second stamp's expiry it goes, exactly once.
	clk.Set(t0.Add(testTTL/2 + testTTL))
	if _, ok := mustGet(t, c, v, false); ok {
		t.Errorf("Get(%q) at second expiry ok = true, want false", v)
	}
	if st := mustSweep(t, c, clk.Now(), 10); st.Deleted != 1 {
		t.Errorf("Sweep at second expiry deleted %d, want 1", st.Deleted)
	}
	checkEntries(t, c, 0)
}

// Refreshed entries leave nothing behind in the expiry index that could
// make a chunked sweep stop before the expired entries after them.
func TestSweepAfterRefreshes(t *testing.T) {
	clk := clocktest.New(t0)
	c := mustOpenTemp(t, clk)
	mustPut(t, c, sampleRange(0, 20)...) // refreshed below
	clk.Advance(time.Hour)
	mustPut(t, c, sampleRange(0, 20)...)
	clk.Advance(time.Hour)
	mustPut(t, c, sampleRange(100, 135)...)
	clk.Advance(time.Hour)
	mustPut(t, c, sampleRange(200, 205)...) // still fresh at the sweep
	checkEntries(t, c, 60)

	clk.Set(t0.Add(2*time.Hour + testTTL))
	st := mustSweep(t, c, clk.Now(), 10)
	if want := (cache.SweepStats{Deleted: 55, Chunks: 6}); st != want {
		t.Errorf("Sweep = %+v, want %+v", st, want)
	}
	checkEntries(t, c, 5)
	checkServed(t, c, 200, 205, true)
}

// The same VIN twice in one Put counts once and leaves one expiry entry.
func TestPutDuplicateInOneCall(t *testing.T) {
	clk := clocktest.New(t0)
	c := mustOpenTemp(t, clk)
	mustPut(t, c, sampleDecoded(testVIN(1)), sampleDecoded(testVIN(1)), sampleDecoded(testVIN(2)))
	checkEntries(t, c, 2)
	clk.Advance(testTTL)
	if st := mustSweep(t, c, clk.Now(), 10); st.Deleted != 2 {
		t.Errorf("Sweep deleted %d, want 2", st.Deleted)
	}
	checkEntries(t, c, 0)
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	clk := clocktest.New(t0)

	c := mustOpen(t, path, testTTL, clk)
	mustPut(t, c, sampleRange(0, 10)...)
	clk.Advance(time.Hour)
	mustPut(t, c, sampleRange(10, 15)...)
	if err := c.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}

	clk.Advance(time.Hour)
	c = mustOpen(t, path, testTTL, clk)
	checkEntries(t, c, 15)
	for i := range 15 {
		want := sampleDecoded(testVIN(i))
		got, ok := mustGet(t, c, testVIN(i), true)
		if !ok {
			t.Fatalf("Get(%q) after reopen ok = false, want true", testVIN(i))
		}
		checkDecoded(t, "Get("+testVIN(i)+") after reopen", want, got)
	}

	// Store times survived: the first ten expire at t0+TTL, the rest an
	// hour later.
	clk.Set(t0.Add(testTTL))
	checkServed(t, c, 0, 10, false)
	checkServed(t, c, 10, 15, true)
	if st := mustSweep(t, c, clk.Now(), 3); st.Deleted != 10 {
		t.Errorf("Sweep after reopen deleted %d, want 10", st.Deleted)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}

	// The count written by the sweep survives too.
	c = mustOpen(t, path, testTTL, clk)
	checkEntries(t, c, 5)
	checkServed(t, c, 10, 15, true)
	if err := c.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}

	// A shorter TTL at open applies to entries stored before (doc.go).
	c = mustOpen(t, path, time.Hour, clk)
	checkServed(t, c, 10, 15, false)
	if st := mustSweep(t, c, clk.Now(), 0); st.Deleted != 5 {
		t.Errorf("Sweep with shorter TTL deleted %d, want 5", st.Deleted)
	}
	checkEntries(t, c, 0)
}

func TestOpenCreatesDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "var", "lib", "vinsvc", "cache.db")
	c := mustOpen(t, path, testTTL, clocktest.New(t0))
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Stat(%q) after Open: %v", path, err)
	}
	mustPut(t, c, sampleDecoded(testVIN(1)))
	if _, ok := mustGet(t, c, testVIN(1), false); !ok {
		t.Errorf("Get(%q) ok = false, want true", testVIN(1))
	}
}

// A second Open of a file in use gives up (bbolt's one-second lock timeout)
// instead of hanging, and leaves the first cache working.
func TestOpenLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cache.db")
	clk := clocktest.New(t0)
	first := mustOpen(t, path, testTTL, clk)
	mustPut(t, first, sampleDecoded(testVIN(1)))

	errc := make(chan error, 1)
	go func() {
		second, err := cache.Open(path, testTTL, slog.New(slog.DiscardHandler), clk.Now)
		if err == nil {
			_ = second.Close()
		}
		errc <- err
	}()
	select {
	case err := <-errc:
		if err == nil {
			t.Fatalf("second Open(%q) = nil error, want an error while the file is locked", path)
		}
	case <-time.After(30 * time.Second):
		// Only here so that a regression fails instead of hanging the run.
		t.Fatalf("second Open(%q) did not return", path)
	}

	if _, ok := mustGet(t, first, testVIN(1), false); !ok {
		t.Errorf("Get(%q) on the first cache ok = false, want true", testVIN(1))
	}
}

// A file another process holds (here: opened with bbolt directly, which
// takes the same lock) is reported as such, naming the file, not as
// bbolt's bare "timeout".
func TestOpenLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "vincache.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	c, err := cache.Open(path, testTTL, slog.New(slog.DiscardHandler), clocktest.New(t0).Now)
	if err == nil {
		c.Close()
		t.Fatalf("Open(%q) = nil error, want %v", path, cache.ErrLocked)
	}
	if !errors.Is(err, cache.ErrLocked) {
		t.Errorf("Open(%q) = %v, want an error matching %v", path, err, cache.ErrLocked)
	}
	want := "cache file " + path + " is locked by another process (another vinsvc running with the same CACHE_PATH?)"
	if err.Error() != want {
		t.Errorf("Open(%q) error = %q, want %q", path, err, want)
	}
}

func TestOpenSchemaMismatch(t *testing.T) {
	be := func(n uint64) []byte { return binary.BigEndian.AppendUint64(nil, n) }
	for _, tt := range []struct {
		name    string
		version []byte
	}{
		{name: "newer version", version: be(2)},
		{name: "version zero", version: be(0)},
		{name: "short value", version: []byte{0, 0, 0, 1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.db")
			writeMeta(t, path, tt.version)

			c, err := cache.Open(path, testTTL, slog.New(slog.DiscardHandler), clocktest.New(t0).Now)
			if err == nil {
				_ = c.Close()
				t.Fatalf("Open(%q) = nil error, want %v", path, cache.ErrSchema)
			}
			if !errors.Is(err, cache.ErrSchema) {
				t.Fatalf("Open(%q) = %v, want an error wrapping %v", path, err, cache.ErrSchema)
			}

			// The file is left as it was: no buckets added, version kept.
			db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second, ReadOnly: true})
			if err != nil {
				t.Fatalf("bolt.Open(%q) after failed Open: %v", path, err)
			}
			defer db.Close()
			err = db.View(func(tx *bolt.Tx) error {
				var names []string
				if err := tx.ForEach(func(name []byte, _ *bolt.Bucket) error {
					names = append(names, string(name))
					return nil
				}); err != nil {
					return err
				}
				if diff := cmp.Diff([]string{"meta"}, names); diff != "" {
					t.Errorf("buckets after failed Open (-want +got):\n%s", diff)
				}
				if got := tx.Bucket([]byte("meta")).Get([]byte("version")); !bytes.Equal(got, tt.version) {
					t.Errorf("meta version after failed Open = %x, want %x", got, tt.version)
				}
				return nil
			})
			if err != nil {
				t.Fatalf("View: %v", err)
			}
		})
	}
}

// writeMeta creates a bbolt file holding only a "meta" bucket with the
// given schema version.
func writeMeta(tb testing.TB, path string, version []byte) {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatalf("bolt.Open(%q): %v", path, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("meta"))
		if err != nil {
			return err
		}
		return b.Put([]byte("version"), version)
	})
	if err != nil {
		tb.Fatalf("write meta: %v", err)
	}
	if err := db.Close(); err != nil {
		tb.Fatalf("bolt Close: %v", err)
	}
}

// Concurrent writers, readers, sweepers and a moving clock leave a cache
// whose count matches what is in it.
func TestConcurrentAccess(t *testing.T) {
	const (
		nOld     = 200 // stored at t0, expired when the race starts
		writers  = 4
		perWrite = 100 // VINs per writer, from nOld/2 up: half refresh old ones
		readers  = 3
		sweepers = 2
	)
	path := filepath.Join(t.TempDir(), "cache.db")
	clk := clocktest.New(t0)
	c := mustOpen(t, path, testTTL, clk)
	mustPut(t, c, sampleRange(0, nOld)...)
	clk.Set(t0.Add(testTTL)) // every old entry is now expired

	ctx := context.Background()
	first, last := nOld/2, nOld/2+writers*perWrite // VINs the writers store
	stop := make(chan struct{})
	var wg, bg sync.WaitGroup

	for w := range writers {
		wg.Go(func() {
			base := first + w*perWrite
			for i := 0; i < perWrite; i += 10 {
				if err := c.Put(ctx, sampleRange(base+i, base+i+10)); err != nil {
					t.Errorf("Put: %v", err)
					return
				}
				clk.Advance(time.Millisecond) // time moves, nothing new expires
			}
		})
	}
	for r := range readers {
		bg.Go(func() {
			for i := r; ; i = (i + 7) % last {
				select {
				case <-stop:
					return
				default:
				}
				v := testVIN(i)
				d, ok, err := c.Get(ctx, v, i%2 == 0)
				if err != nil {
					t.Errorf("Get(%q): %v", v, err)
					return
				}
				if ok {
					if diff := cmp.Diff(sampleDecoded(v).Result, d.Result); diff != "" {
						t.Errorf("Get(%q) mismatch (-want +got):\n%s", v, diff)
						return
					}
				}
			}
		})
	}
	for range sweepers {
		bg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Sweep(ctx, clk.Now(), 7); err != nil {
					t.Errorf("Sweep: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	bg.Wait()

	// Whatever the interleaving, one last sweep leaves exactly the VINs
	// the writers stored.
	mustSweep(t, c, clk.Now(), 0)
	want := int64(last - first)
	checkEntries(t, c, want)
	checkServed(t, c, 0, first, false)
	checkServed(t, c, first, last, true)
	clk.Set(t0) // old stamps would be fresh again: the old entries are gone
	checkServed(t, c, 0, first, false)

	// The persisted count agrees with the in-memory one.
	if err := c.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	c = mustOpen(t, path, testTTL, clk)
	checkEntries(t, c, want)
}

func TestCheckAndStats(t *testing.T) {
	c := mustOpenTemp(t, clocktest.New(t0))
	ctx := context.Background()
	if err := c.Check(ctx); err != nil {
		t.Errorf("Check() on a new cache = %v, want nil", err)
	}
	if s := c.Stats(); s.SizeBytes <= 0 {
		t.Errorf("Stats().SizeBytes = %d, want > 0", s.SizeBytes)
	}
	mustPut(t, c, sampleRange(0, 20)...)
	if err := c.Check(ctx); err != nil {
		t.Errorf("Check() after Put = %v, want nil", err)
	}
	want := vin.CacheStats{Entries: 20, Evictions: 0}
	got := c.Stats()
	if got.SizeBytes <= 0 {
		t.Errorf("Stats().SizeBytes = %d, want > 0", got.SizeBytes)
	}
	got.SizeBytes = 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Stats() mismatch (-want +got):\n%s", diff)
	}

	if err := c.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil", err)
	}
	if err := c.Check(ctx); err == nil {
		t.Errorf("Check() after Close = nil, want an error")
	}
}

// countdownCtx is a context that reports itself cancelled once it has been
// consulted (Err or Done) more than allow times.
type countdownCtx struct {
	context.Context
	mu    sync.Mutex
	allow int
	done  chan struct{}
}

func newCountdownCtx(allow int) *countdownCtx {
	return &countdownCtx{Context: context.Background(), allow: allow, done: make(chan struct{})}
}

func (c *countdownCtx) tick() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.allow > 0 {
		c.allow--
		return false
	}
	select {
	case <-c.done:
	default:
		close(c.done)
	}
	return true
}

func (c *countdownCtx) Done() <-chan struct{} {
	c.tick()
	return c.done
}

func (c *countdownCtx) Err() error {
	if c.tick() {
		return context.Canceled
	}
	return nil
}

func TestSweepCancelled(t *testing.T) {
	const n = 95
	t.Run("before the call", func(t *testing.T) {
		clk := clocktest.New(t0)
		c := mustOpenTemp(t, clk)
		mustPut(t, c, sampleRange(0, n)...)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()

		st, err := c.Sweep(ctx, t0.Add(testTTL), 10)
		if st.Deleted != 0 || st.Chunks != 0 {
			t.Errorf("Sweep(cancelled ctx) = %+v, %v, want nothing deleted", st, err)
		}
		checkEntries(t, c, n)
		if got := c.Stats().Evictions; got != 0 {
			t.Errorf("Stats().Evictions = %d, want 0", got)
		}
		checkServed(t, c, 0, n, true) // the clock is still at t0
	})

	t.Run("during the call", func(t *testing.T) {
		clk := clocktest.New(t0)
		c := mustOpenTemp(t, clk)
		mustPut(t, c, sampleRange(0, n)...)
		now := t0.Add(testTTL)

		st, err := c.Sweep(newCountdownCtx(1), now, 10)
		if st.Deleted >= n {
			t.Fatalf("Sweep(ctx cancelled after one check) = %+v, %v, want it to stop early", st, err)
		}
		checkEntries(t, c, int64(n-st.Deleted))

		// What it did is kept; a later sweep does the rest.
		rest := mustSweep(t, c, now, 10)
		if got := st.Deleted + rest.Deleted; got != n {
			t.Errorf("Deleted by the two sweeps = %d + %d, want %d in all", st.Deleted, rest.Deleted, n)
		}
		checkEntries(t, c, 0)
	})
}

// TestRunSweeper runs the sweeper on synctest's clock: its ticker fires
// when the test moves time, so a sweep is known to have run, or not, at
// each step (the cache's own clock, clk, decides what has expired).
func TestRunSweeper(t *testing.T) {
	// startSweeper runs c.RunSweeper until the returned stop is called,
	// which is also done, before the cache closes, when the test ends.
	startSweeper := func(t *testing.T, c *cache.Cache, interval time.Duration) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			c.RunSweeper(ctx, interval)
		}()
		var once sync.Once
		stop = func() {
			once.Do(func() {
				cancel()
				select {
				case <-done:
				case <-time.After(30 * time.Second):
					// Only here so that a regression fails instead of
					// hanging the run.
					t.Errorf("RunSweeper did not return after its ctx was cancelled")
				}
			})
		}
		t.Cleanup(stop) // registered after mustOpen's, so it runs first
		return stop
	}

	t.Run("sweeps at start", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			clk := clocktest.New(t0)
			c := mustOpenTemp(t, clk)
			mustPut(t, c, sampleRange(0, 30)...)
			clk.Set(t0.Add(100 * testTTL))

			// With an interval this long, only the sweep at start can run.
			stop := startSweeper(t, c, time.Hour)
			synctest.Wait() // the sweep at start is done, the ticker not due
			checkEntries(t, c, 0)
			if got := c.Stats().Evictions; got != 30 {
				t.Errorf("Stats().Evictions after the sweep at start = %d, want 30", got)
			}
			stop()
		})
	})

	t.Run("sweeps every interval", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const interval = 5 * time.Millisecond
			clk := clocktest.New(t0)
			c := mustOpenTemp(t, clk)
			stop := startSweeper(t, c, interval)
			synctest.Wait() // the sweep at start: nothing to do

			mustPut(t, c, sampleRange(0, 30)...)
			checkEntries(t, c, 30) // nothing has expired yet
			clk.Advance(testTTL)
			synctest.Wait()
			checkEntries(t, c, 30) // expired, but no tick yet
			time.Sleep(interval)
			synctest.Wait()
			checkEntries(t, c, 0) // the tick's sweep

			mustPut(t, c, sampleRange(100, 110)...)
			checkEntries(t, c, 10)
			clk.Advance(testTTL)
			time.Sleep(interval)
			synctest.Wait()
			checkEntries(t, c, 0) // the next tick's sweep
			if got := c.Stats().Evictions; got != 40 {
				t.Errorf("Stats().Evictions = %d, want 40", got)
			}
			checkServed(t, c, 0, 30, false)
			checkServed(t, c, 100, 110, false)
			stop()
		})
	})
}

// TestPutLargeInt: Put never stores what Get then reports as corrupt.
func TestPutLargeInt(t *testing.T) {
	c := mustOpenTemp(t, clocktest.New(t0))
	d := sampleDecoded(testVIN(1))
	d.Result.EngineCylinders = ptr(math.MaxInt32 + 1)
	if err := c.Put(context.Background(), []vin.Decoded{d}); err != nil {
		t.Fatal(err)
	}
	got, ok, err := c.Get(context.Background(), testVIN(1), false)
	if err != nil || !ok || got.Result.EngineCylinders == nil || *got.Result.EngineCylinders != math.MaxInt32+1 {
		t.Errorf("Get(%q) = %+v, %v, %v; want the stored cylinder count", testVIN(1), got.Result.EngineCylinders, ok, err)
	}
}
