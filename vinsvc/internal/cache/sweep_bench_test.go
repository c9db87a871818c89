package cache_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// BenchmarkSweep1M measures one sweep of a million expired entries (about
// 2 KB of raw record each) while a reader and a writer keep using the cache,
// and reports the longest single Get and Put seen during the sweep: doc.go
// promises readers never wait for the sweep and a writer waits at most one
// chunk. The fill runs with the timer stopped; each iteration sweeps a fresh
// fill, so run it with -benchtime 1x.
func BenchmarkSweep1M(b *testing.B) {
	const (
		total  = 1_000_000
		batch  = 20_000 // VINs per Put while filling: fewer, larger commits fill fastest
		nFresh = 100    // unexpired entries the reader reads
	)
	ctx := context.Background()
	var (
		sweepTime, fillTime time.Duration
		reads, writes       latencies
		deleted, chunks, k  int
	)
	for b.Loop() {
		b.StopTimer()
		k++
		dir := b.TempDir()
		clk := clocktest.New(t0)
		c := mustOpen(b, filepath.Join(dir, "cache.db"), testTTL, clk)

		fillStart := time.Now()
		fill(b, c, clk, total, batch)
		fillTime += time.Since(fillStart)
		if got := c.Stats().Entries; got != total {
			b.Fatalf("Stats().Entries after fill = %d, want %d", got, total)
		}

		// Everything filled has expired; the reader's entries have not.
		clk.Set(t0.Add(testTTL + 24*time.Hour))
		fresh := freshVINs(nFresh)
		for _, v := range fresh {
			mustPut(b, c, sampleDecoded(v))
		}
		runtime.GC() // the fill's garbage is not the sweep's cost

		l := startLoad(b, c, fresh)

		b.StartTimer()
		start := time.Now()
		st, err := c.Sweep(ctx, clk.Now(), cache.DefaultSweepChunk)
		sweepTime += time.Since(start)
		b.StopTimer()

		l.stop()
		if err != nil {
			b.Fatalf("Sweep: %v", err)
		}
		if st.Deleted != total {
			b.Fatalf("Sweep deleted %d, want %d", st.Deleted, total)
		}
		if got, want := c.Stats().Entries, int64(nFresh+len(l.writes)); got != want {
			b.Fatalf("Stats().Entries after sweep = %d, want %d", got, want)
		}
		deleted += st.Deleted
		chunks += st.Chunks
		reads = append(reads, l.reads...)
		writes = append(writes, l.writes...)

		// Free the disk (several GB) before the next iteration.
		if err := c.Close(); err != nil {
			b.Fatalf("Close: %v", err)
		}
		if err := os.RemoveAll(dir); err != nil {
			b.Fatalf("RemoveAll: %v", err)
		}
		b.StartTimer()
	}
	b.Logf("fill of %d entries took %v per iteration", total, fillTime/time.Duration(k))
	b.ReportMetric(sweepTime.Seconds()/float64(k), "sweep-s")
	b.ReportMetric(float64(deleted)/float64(k), "deleted")
	b.ReportMetric(ms(sweepTime)/float64(chunks), "chunk-ms")
	b.ReportMetric(fillTime.Seconds()/float64(k), "fill-s")
	b.ReportMetric(float64(len(reads))/float64(k), "reads")
	b.ReportMetric(ms(reads.quantile(0.99)), "p99-read-ms")
	b.ReportMetric(ms(reads.quantile(1)), "max-read-ms")
	b.ReportMetric(float64(len(writes))/float64(k), "writes")
	b.ReportMetric(ms(writes.quantile(0.5)), "p50-write-ms")
	b.ReportMetric(ms(writes.quantile(0.99)), "p99-write-ms")
	b.ReportMetric(ms(writes.quantile(1)), "max-write-ms")
}

// fill stores testVIN(0) .. testVIN(total-1), batch VINs per Put, the
// clock moving a second per Put so that store times are spread out as in
// service.
func fill(tb testing.TB, c *cache.Cache, clk *clocktest.Clock, total, batch int) {
	tb.Helper()
	ds := make([]vin.Decoded, 0, batch)
	for i := 0; i < total; i += batch {
		ds = ds[:0]
		for j := i; j < min(i+batch, total); j++ {
			ds = append(ds, sampleDecoded(testVIN(j)))
		}
		mustPut(tb, c, ds...)
		clk.Advance(time.Second)
	}
}

// latencies holds the duration of each call.
type latencies []time.Duration

// quantile returns the q-quantile (1 is the maximum), 0 when empty.
func (l latencies) quantile(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// load is a reader, which Gets the fresh VINs in turn, and a writer, which
// Puts one new VIN per call as a cache miss does, each timing every call.
type load struct {
	reads, writes latencies // final once stop has returned
	done          chan struct{}
	wg            sync.WaitGroup
}

// startLoad starts the load and returns once both have completed a call.
func startLoad(tb testing.TB, c *cache.Cache, fresh []string) *load {
	ctx := context.Background()
	l := &load{
		reads:  make(latencies, 0, 1<<22),
		writes: make(latencies, 0, 1<<12),
		done:   make(chan struct{}),
	}
	var ready sync.WaitGroup
	ready.Add(2)
	l.wg.Go(func() {
		for i := 0; ; i++ {
			v := fresh[i%len(fresh)]
			start := time.Now()
			_, ok, err := c.Get(ctx, v, true) // with raw: always a bbolt read, never the memory tier
			l.reads = append(l.reads, time.Since(start))
			if err != nil || !ok {
				tb.Errorf("Get(%q) = %t, %v, want true, nil", v, ok, err)
			}
			if i == 0 {
				ready.Done()
			}
			select {
			case <-l.done:
				return
			default:
			}
		}
	})
	l.wg.Go(func() {
		for i := 0; ; i++ {
			d := sampleDecoded(fmt.Sprintf("3HGCM8263%08d", i))
			start := time.Now()
			err := c.Put(ctx, []vin.Decoded{d})
			l.writes = append(l.writes, time.Since(start))
			if err != nil {
				tb.Errorf("Put(%q): %v", d.Result.VIN, err)
			}
			if i == 0 {
				ready.Done()
			}
			select {
			case <-l.done:
				return
			default:
			}
		}
	})
	ready.Wait()
	return l
}

// stop ends the load and waits for it.
func (l *load) stop() {
	close(l.done)
	l.wg.Wait()
}

// freshVINs returns n VINs distinct from testVIN's.
func freshVINs(n int) []string {
	vs := make([]string, n)
	for i := range vs {
		vs[i] = fmt.Sprintf("2HGCM8263%08d", i)
	}
	return vs
}

// BenchmarkGetHit measures one Get of an unexpired entry, with and without
// its raw record.
func BenchmarkGetHit(b *testing.B) {
	clk := clocktest.New(t0)
	c := mustOpenTemp(b, clk)
	mustPut(b, c, sampleRange(0, 10_000)...)
	ctx := context.Background()
	for _, withRaw := range []bool{false, true} {
		b.Run(fmt.Sprintf("raw=%t", withRaw), func(b *testing.B) {
			b.ReportAllocs()
			v := testVIN(4242)
			for b.Loop() {
				if _, ok, err := c.Get(ctx, v, withRaw); err != nil || !ok {
					b.Fatalf("Get(%q) = %t, %v, want true, nil", v, ok, err)
				}
			}
		})
	}
}

// BenchmarkPutOne measures one Put of a single new VIN, as a cache miss
// stores it, with no sweep running: the base to compare the writer's
// latencies in BenchmarkSweep1M with.
func BenchmarkPutOne(b *testing.B) {
	clk := clocktest.New(t0)
	c := mustOpenTemp(b, clk)
	mustPut(b, c, sampleRange(0, 10_000)...)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d := sampleDecoded(fmt.Sprintf("3HGCM8263%08d", i))
		if err := c.Put(ctx, []vin.Decoded{d}); err != nil {
			b.Fatalf("Put(%q): %v", d.Result.VIN, err)
		}
		i++
	}
}
