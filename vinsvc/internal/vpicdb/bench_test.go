package vpicdb_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpicdb"
)

// fixedVINs stand in for the corpus when it has not been generated.
var fixedVINs = []string{
	"1FTMW1T88MFA00001", "1HGCM82633A004352", "3VV3B7AXXNM077525", "KMHC85LCXHU026758", "WBA3A5C51CF256987",
	"1FBNE3BE1CDB23596", "1F96G50T5HN054117", "143MB2832WD882464", "4C9AB8CD96A111234", "U5YH2519LKL016670",
}

// corpusVINs returns the corpus's valid VINs, or fixedVINs without it.
func corpusVINs(tb testing.TB) []string {
	tb.Helper()
	raw, err := os.ReadFile(corpusPath)
	if err != nil {
		return fixedVINs
	}
	var entries []struct {
		VIN string `json:"vin"`
	}
	if json.Unmarshal(raw, &entries) != nil {
		return fixedVINs
	}
	var vins []string
	for _, e := range entries {
		if vin.Valid(e.VIN) {
			vins = append(vins, e.VIN)
		}
	}
	if len(vins) == 0 {
		return fixedVINs
	}
	return vins
}

// BenchmarkDecode decodes the corpus's VINs one at a time and reports the
// median and 99th-percentile latency of a decode (p50-ns, p99-ns).
func BenchmarkDecode(b *testing.B) {
	db := mustOpenShared(b)
	vins := corpusVINs(b)
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		v := vins[i%len(vins)]
		start := time.Now()
		_, err := db.Decode(ctx, v)
		lat = append(lat, time.Since(start))
		if err != nil && !errors.Is(err, vpicdb.ErrUnknownWMI) {
			b.Fatalf("Decode(%q) = %v", v, err)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// BenchmarkDecodeParallel decodes from GOMAXPROCS goroutines.
func BenchmarkDecodeParallel(b *testing.B) {
	db := mustOpenShared(b)
	vins := corpusVINs(b)
	ctx := context.Background()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			_, _ = db.Decode(ctx, vins[i%len(vins)])
			i++
		}
	})
}

// BenchmarkOpen loads the snapshot and reports the heap it keeps.
func BenchmarkOpen(b *testing.B) {
	path := snapshotPath(b)
	var before, after runtime.MemStats
	for range b.N {
		runtime.GC()
		runtime.ReadMemStats(&before)
		db, err := vpicdb.Open(context.Background(), path, discardLogger())
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
		runtime.KeepAlive(db)
	}
}
