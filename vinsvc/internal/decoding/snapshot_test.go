package decoding_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

// fakeSnapshot is a hand-written decoding.Snapshot: it knows the VINs whose WMI
// is "1HG" and counts its decodes.
type fakeSnapshot struct {
	DecodeFn func(ctx context.Context, v string) (vin.Decoded, error)
	decodes  atomic.Int32
}

var _ decoding.Snapshot = (*fakeSnapshot)(nil)

var errUnknownWMI = vin.NewKindError(vin.ErrUpstream, "wmi not in the snapshot")

func (f *fakeSnapshot) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	f.decodes.Add(1)
	if f.DecodeFn != nil {
		return f.DecodeFn(ctx, v)
	}
	if v[:3] != "1HG" {
		return vin.Decoded{}, errUnknownWMI
	}
	mk := "HONDA (snapshot)"
	return vin.Decoded{Result: vin.Result{VIN: v, Make: &mk, ErrorCode: "0"}, Raw: []byte(`{"VIN":"` + v + `","Make":"HONDA (snapshot)"}`)}, nil
}

func (f *fakeSnapshot) Date() time.Time { return time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC) }

const (
	cacheTTL    = 90 * 24 * time.Hour
	snapshotTTL = 24 * time.Hour
)

func mustSnapshotDecoder(tb testing.TB, up decoding.Upstream, snap decoding.Snapshot, mode vin.SnapshotMode, after time.Duration) (*decoding.Service, *cache.Cache, *clocktest.Clock) {
	tb.Helper()
	clk := clocktest.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	c, err := cache.Open(filepath.Join(tb.TempDir(), "c.db"), cacheTTL, logger, clk.Now)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	dec := decoding.Compose(c, up, decoding.NewSnapshots(snap, mode, snapshotTTL, logger), after, 10*time.Second, logger, clk.Now)
	tb.Cleanup(func() { dec.Wait(context.Background()) })
	return dec, c, clk
}

func failing() *fakeUpstream {
	return &fakeUpstream{
		DecodeFn: func(context.Context, string) (vin.Decoded, error) { return vin.Decoded{}, errBoom },
		DecodeBatchFn: func(context.Context, []string) ([]vin.Outcome, error) {
			return nil, errBoom
		},
	}
}

// TestSnapshotFallbackOnFailure: vPIC fails, the snapshot answers, and its
// answer is cached for SNAPSHOT_CACHE_TTL only; vPIC's answer replaces it.
func TestSnapshotFallbackOnFailure(t *testing.T) {
	up, snap := failing(), &fakeSnapshot{}
	dec, c, clk := mustSnapshotDecoder(t, up, snap, vin.SnapshotFallback, 0)
	ctx := context.Background()
	v := "1HGCM82633A004352"

	out, err := dec.Decode(ctx, v, true)
	if err != nil || out.Cached || vin.SourceOf(out.Result) != vin.SourceSnapshot || *out.Result.Make != "HONDA (snapshot)" || len(out.Raw) == 0 {
		t.Fatalf("Decode = %+v, %v; want the snapshot's answer with its raw record", out, err)
	}
	out, err = dec.Decode(ctx, v, false)
	if err != nil || !out.Cached || vin.SourceOf(out.Result) != vin.SourceSnapshot {
		t.Fatalf("second Decode = %+v, %v; want the cached snapshot answer, still marked snapshot", out, err)
	}
	if vp, sn := dec.SourceCounts(); vp != 0 || sn != 1 {
		t.Errorf("SourceCounts() = %d vpic, %d snapshot; want 0, 1", vp, sn)
	}

	// Past the snapshot's lifetime (but well within CACHE_TTL) it is gone,
	// and vPIC, now up, answers and is cached for CACHE_TTL.
	clk.Advance(snapshotTTL + time.Minute)
	if _, ok, _ := c.Get(ctx, v, false); ok {
		t.Fatal("the snapshot answer outlived SNAPSHOT_CACHE_TTL")
	}
	up.DecodeFn = nil
	out, err = dec.Decode(ctx, v, false)
	if err != nil || out.Cached || vin.SourceOf(out.Result) != vin.SourceVPIC || *out.Result.Make != "HONDA" {
		t.Fatalf("Decode after expiry = %+v, %v; want vPIC's fresh answer", out, err)
	}
	clk.Advance(30 * 24 * time.Hour)
	if got, ok, _ := c.Get(ctx, v, false); !ok || vin.SourceOf(got.Result) != vin.SourceVPIC {
		t.Fatalf("vPIC's answer after 30 days: ok=%v %+v; want it cached for CACHE_TTL", ok, got)
	}
}

// TestSnapshotUnknownWMI: the snapshot does not answer a VIN it does not
// know; the request fails as before.
func TestSnapshotUnknownWMI(t *testing.T) {
	dec, c, _ := mustSnapshotDecoder(t, failing(), &fakeSnapshot{}, vin.SnapshotFallback, 0)
	v := "WBA3A5C51CF256987"
	if _, err := dec.Decode(context.Background(), v, false); !errors.Is(err, errBoom) {
		t.Fatalf("Decode error = %v, want vPIC's failure", err)
	}
	if _, ok, _ := c.Get(context.Background(), v, false); ok {
		t.Fatal("a VIN nobody could decode was cached")
	}
}

// TestSnapshotAfterDelay: vPIC is slow; after VPIC_SNAPSHOT_AFTER, on the
// fake clock of a synctest bubble, the snapshot answers (uncached), the
// vPIC call goes on and caches vPIC's answer, which later requests get.
func TestSnapshotAfterDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		up := &fakeUpstream{DecodeFn: func(ctx context.Context, v string) (vin.Decoded, error) {
			<-release
			return answer(v), nil
		}}
		const after = 2 * time.Second
		dec, c, _ := mustSnapshotDecoder(t, up, &fakeSnapshot{}, vin.SnapshotFallback, after)
		ctx := context.Background()
		v := "1HGCM82633A004352"
		start := time.Now()
		out, err := dec.Decode(ctx, v, false)
		if took := time.Since(start); took != after {
			t.Errorf("Decode of a slow VIN took %v, want the fallback delay %v", took, after)
		}
		if err != nil || out.Cached || vin.SourceOf(out.Result) != vin.SourceSnapshot {
			t.Fatalf("Decode of a slow VIN = %+v, %v; want the snapshot's answer", out, err)
		}
		if _, ok, _ := c.Get(ctx, v, false); ok {
			t.Fatal("the snapshot's stop-gap answer was cached while vPIC's call was still running")
		}
		if vp, sn := dec.SourceCounts(); vp != 0 || sn != 1 {
			t.Errorf("SourceCounts() = %d vpic, %d snapshot; want 0, 1", vp, sn)
		}
		close(release)
		if err := dec.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		got, ok, _ := c.Get(ctx, v, false)
		if !ok || vin.SourceOf(got.Result) != vin.SourceVPIC {
			t.Fatalf("after the vPIC call ended the cache holds %+v (ok=%v); want vPIC's answer", got, ok)
		}
		if out, err := dec.Decode(ctx, v, false); err != nil || !out.Cached || vin.SourceOf(out.Result) != vin.SourceVPIC {
			t.Errorf("Decode after the call ended = %+v, %v; want vPIC's cached answer", out, err)
		}
		if n := up.singles.Load(); n != 1 {
			t.Errorf("vPIC calls = %d, want 1", n)
		}
	})
}

// TestSnapshotAfterDelayBatch: the late answer is per VIN. In one batch,
// on a synctest bubble's fake clock: a hit answers at once; VINs whose
// call answers in time get vPIC's answer; a VIN whose call (a single
// request's, which the batch joined) is still running after the delay
// gets the snapshot's; one the snapshot does not know waits for its call.
func TestSnapshotAfterDelayBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			hit     = "1HGCM82633A000001" // cached before the batch
			slow    = "1HGCM82633A000002" // its call is held; the snapshot knows it
			slowBMW = "WBA3A5C51CF256987" // its call is held; the snapshot does not know it
			fast1   = "1HGCM82633A000003" // in the batch's own call, which answers at once
			fast2   = "WBA3A5C51CF256988"
		)
		releaseSlow, releaseBMW := make(chan struct{}), make(chan struct{})
		up := &fakeUpstream{DecodeFn: func(ctx context.Context, v string) (vin.Decoded, error) {
			switch v {
			case slow:
				<-releaseSlow
			case slowBMW:
				<-releaseBMW
			}
			return answer(v), nil
		}}
		const after = 2 * time.Second
		dec, c, _ := mustSnapshotDecoder(t, up, &fakeSnapshot{}, vin.SnapshotFallback, after)
		ctx := context.Background()
		if _, err := dec.Decode(ctx, hit, false); err != nil {
			t.Fatal(err)
		}
		// Two single requests start the held calls, which the batch joins.
		for _, v := range []string{slow, slowBMW} {
			go dec.Decode(ctx, v, false)
		}
		synctest.Wait()

		start := time.Now()
		done := make(chan []vin.Outcome, 1)
		go func() { done <- dec.DecodeBatch(ctx, []string{hit, slow, fast1, slowBMW, fast2}, false) }()
		time.Sleep(after + time.Second)
		synctest.Wait()
		select {
		case outs := <-done:
			t.Fatalf("the batch ended before the call of a VIN the snapshot does not know: %+v", outs)
		default:
		}
		close(releaseBMW)
		outs := <-done
		if took := time.Since(start); took < after+time.Second {
			t.Errorf("the batch took %v, want until its last call answered (after %v)", took, after+time.Second)
		}
		want := []struct {
			cached bool
			source string
		}{{true, vin.SourceVPIC}, {false, vin.SourceSnapshot}, {false, vin.SourceVPIC}, {false, vin.SourceVPIC}, {false, vin.SourceVPIC}}
		for i, o := range outs {
			if o.Err != nil || o.Cached != want[i].cached || vin.SourceOf(o.Result) != want[i].source {
				t.Errorf("batch VIN %d = %+v (err %v); want cached %v, source %s", i, o.Result, o.Err, want[i].cached, want[i].source)
			}
		}
		if _, ok, _ := c.Get(ctx, slow, false); ok {
			t.Error("the snapshot's late answer was cached")
		}
		close(releaseSlow)
		if err := dec.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		if got, ok, _ := c.Get(ctx, slow, false); !ok || vin.SourceOf(got.Result) != vin.SourceVPIC {
			t.Errorf("after the held call ended the cache holds %+v (ok=%v); want vPIC's answer", got.Result, ok)
		}
	})
}

// TestSnapshotAfterDelayHitsCostNoTimer: with a fallback delay and a
// snapshot, a cache hit allocates no more than the Decoder's own (a timer
// would), single or batch, and a batch of hits returns at once.
func TestSnapshotAfterDelayHitsCostNoTimer(t *testing.T) {
	up := &fakeUpstream{}
	svc, c, _ := mustSnapshotDecoder(t, up, &fakeSnapshot{}, vin.SnapshotFallback, time.Hour)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	bare := decoding.New(c, up, 10*time.Second, logger, time.Now)
	ctx := context.Background()
	vins := []string{"1HGCM82633A004352", "1HGCM82633A004353"}
	if outs := svc.DecodeBatch(ctx, vins, false); outs[0].Err != nil || outs[1].Err != nil {
		t.Fatalf("warming DecodeBatch = %+v", outs)
	}
	single := func(dec interface {
		Decode(context.Context, string, bool) (vin.Outcome, error)
	}) func() {
		return func() {
			if out, err := dec.Decode(ctx, vins[0], false); err != nil || !out.Cached {
				t.Fatalf("Decode of a cached VIN = %+v, %v", out, err)
			}
		}
	}
	batch := func(dec interface {
		DecodeBatch(context.Context, []string, bool) []vin.Outcome
	}) func() {
		return func() {
			if outs := dec.DecodeBatch(ctx, vins, false); !outs[0].Cached || !outs[1].Cached {
				t.Fatalf("DecodeBatch of cached VINs = %+v", outs)
			}
		}
	}
	if got, want := testing.AllocsPerRun(200, single(svc)), testing.AllocsPerRun(200, single(bare)); got > want {
		t.Errorf("a hit with a fallback delay allocates %v times, the Decoder's own %v", got, want)
	}
	if got, want := testing.AllocsPerRun(200, batch(svc)), testing.AllocsPerRun(200, batch(bare)); got > want {
		t.Errorf("a batch of hits with a fallback delay allocates %v times, the Decoder's own %v", got, want)
	}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		batch(svc)()
		if took := time.Since(start); took != 0 {
			t.Errorf("a batch of hits took %v, want no wait", took)
		}
	})
}

// TestSnapshotBatchPerItem: a batch whose vPIC call failed decodes each
// miss from the snapshot; one batch call; unknown WMIs fail on their own.
func TestSnapshotBatchPerItem(t *testing.T) {
	up, snap := failing(), &fakeSnapshot{}
	dec, _, _ := mustSnapshotDecoder(t, up, snap, vin.SnapshotFallback, 0)
	in := []string{"1HGCM82633A004352", "WBA3A5C51CF256987", "1HGCM82633A004353"}
	outs := dec.DecodeBatch(context.Background(), in, false)
	if outs[0].Err != nil || vin.SourceOf(outs[0].Result) != vin.SourceSnapshot ||
		!errors.Is(outs[1].Err, errBoom) ||
		outs[2].Err != nil || vin.SourceOf(outs[2].Result) != vin.SourceSnapshot {
		t.Fatalf("DecodeBatch = %+v; want snapshot, failure, snapshot", outs)
	}
	if n := up.batches.Load(); n != 1 {
		t.Errorf("vPIC batch calls = %d, want 1", n)
	}
}

// TestSnapshotOnly never calls vPIC.
func TestSnapshotOnly(t *testing.T) {
	up, snap := &fakeUpstream{}, &fakeSnapshot{}
	dec, _, _ := mustSnapshotDecoder(t, up, snap, vin.SnapshotOnly, 0)
	ctx := context.Background()
	out, err := dec.Decode(ctx, "1HGCM82633A004352", false)
	if err != nil || vin.SourceOf(out.Result) != vin.SourceSnapshot {
		t.Fatalf("Decode = %+v, %v; want the snapshot's answer", out, err)
	}
	if out, err := dec.Decode(ctx, "1HGCM82633A004352", false); err != nil || !out.Cached {
		t.Fatalf("second Decode = %+v, %v; want it cached", out, err)
	}
	if _, err := dec.Decode(ctx, "WBA3A5C51CF256987", false); !errors.Is(err, vin.ErrUpstream) {
		t.Fatalf("Decode of an unknown WMI error = %v, want a kind of ErrUpstream", err)
	}
	outs := dec.DecodeBatch(ctx, []string{"1HGCM82633A004359", "WBA3A5C51CF256987"}, false)
	if outs[0].Err != nil || outs[1].Err == nil {
		t.Fatalf("DecodeBatch = %+v; want an answer and a failure", outs)
	}
	if s, b := up.singles.Load(), up.batches.Load(); s+b != 0 {
		t.Errorf("vPIC was called %d times in only mode", s+b)
	}
	// Without a snapshot file, only fails every miss.
	none, _, _ := mustSnapshotDecoder(t, up, nil, vin.SnapshotOnly, 0)
	if _, err := none.Decode(ctx, "1HGCM82633A004352", false); !errors.Is(err, vin.ErrUpstream) {
		t.Fatalf("only without a snapshot: error = %v, want ErrUpstream", err)
	}
}

// TestSnapshotReadErrorCounted: a failing snapshot read counts, and the
// request falls through to the old behaviour.
func TestSnapshotReadErrorCounted(t *testing.T) {
	snap := &fakeSnapshot{DecodeFn: func(context.Context, string) (vin.Decoded, error) {
		return vin.Decoded{}, errors.New("disk I/O error")
	}}
	dec, _, _ := mustSnapshotDecoder(t, failing(), snap, vin.SnapshotFallback, 0)
	if _, err := dec.Decode(context.Background(), "1HGCM82633A004352", false); !errors.Is(err, errBoom) {
		t.Fatalf("Decode error = %v, want vPIC's failure", err)
	}
	if e := dec.SnapshotErrors(); e != 1 {
		t.Errorf("snapshot errors = %d, want 1", e)
	}
}

// TestSnapshotOff ignores the snapshot.
func TestSnapshotOff(t *testing.T) {
	snap := &fakeSnapshot{}
	dec, _, _ := mustSnapshotDecoder(t, failing(), snap, vin.SnapshotOff, 0)
	if _, err := dec.Decode(context.Background(), "1HGCM82633A004352", false); !errors.Is(err, errBoom) {
		t.Fatalf("Decode error = %v, want vPIC's failure", err)
	}
	if n := snap.decodes.Load(); n != 0 {
		t.Errorf("snapshot decodes = %d in off mode", n)
	}
	if info := dec.Snapshot(); info.Mode != vin.SnapshotOff {
		t.Errorf("Snapshot() = %+v", info)
	}
}

// TestSnapshotSetLater: the snapshot loads after start; until then the
// Decoder answers without it and health says it is not available.
func TestSnapshotSetLater(t *testing.T) {
	dec, _, _ := mustSnapshotDecoder(t, &fakeUpstream{}, nil, vin.SnapshotOnly, 0)
	ctx := context.Background()
	if _, err := dec.Decode(ctx, "1HGCM82633A004352", false); !errors.Is(err, vin.ErrUpstream) {
		t.Fatalf("Decode before the snapshot is set: error = %v, want ErrUpstream", err)
	}
	if info := dec.Snapshot(); info.Available || info.Mode != vin.SnapshotOnly {
		t.Fatalf("Snapshot() before = %+v", info)
	}
	dec.Snapshots().Set(&fakeSnapshot{})
	if out, err := dec.Decode(ctx, "1HGCM82633A004352", false); err != nil || vin.SourceOf(out.Result) != vin.SourceSnapshot {
		t.Fatalf("Decode after Snapshots.Set = %+v, %v", out, err)
	}
	if info := dec.Snapshot(); !info.Available || info.Date.IsZero() {
		t.Fatalf("Snapshot() after = %+v", info)
	}
}

// TestOnlyBatchWaitsOnce: in only mode, a batch sent while the snapshot
// loads waits for it once, at most the load's wait, not once per VIN.
func TestOnlyBatchWaitsOnce(t *testing.T) {
	dec, _, _ := mustSnapshotDecoder(t, &fakeUpstream{}, nil, vin.SnapshotOnly, 0)
	dec.Snapshots().Expect(200 * time.Millisecond)
	vins := []string{"1HGCM82633A004352", "1HGCM82633A004353", "1HGCM82633A004354", "1HGCM82633A004355", "1HGCM82633A004356"}
	start := time.Now()
	outs := dec.DecodeBatch(context.Background(), vins, false)
	if took := time.Since(start); took > 150*time.Millisecond*time.Duration(len(vins)) {
		t.Errorf("a %d-VIN batch waited %v for a snapshot that never loaded, want about one 200ms wait", len(vins), took)
	}
	for i, o := range outs {
		if !errors.Is(o.Err, vin.ErrUpstream) {
			t.Errorf("VIN %d: %+v, want the upstream error", i, o)
		}
	}
}

// TestFallbackWaitsForALoadingSnapshot: in fallback mode, a decode whose
// vPIC call fails while the snapshot still loads (a service started
// offline) waits for the snapshot and is answered from it, not with vPIC's
// error; a batch too, waiting once. The decodes are blocked on the load
// (synctest.Wait) before it ends.
func TestFallbackWaitsForALoadingSnapshot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dec, _, _ := mustSnapshotDecoder(t, failing(), nil, vin.SnapshotFallback, 0)
		dec.Snapshots().Expect(time.Minute)
		type answer struct {
			out vin.Outcome
			err error
		}
		one := make(chan answer, 1)
		go func() {
			out, err := dec.Decode(context.Background(), "1HGCM82633A004352", false)
			one <- answer{out, err}
		}()
		batch := make(chan []vin.Outcome, 1)
		go func() {
			batch <- dec.DecodeBatch(context.Background(), []string{"1HGCM82633A004353", "1HGCM82633A004354"}, false)
		}()
		synctest.Wait() // both wait for the snapshot now
		select {
		case a := <-one:
			t.Fatalf("the decode ended before the snapshot loaded: %+v, %v", a.out, a.err)
		case <-batch:
			t.Fatal("the batch ended before the snapshot loaded")
		default:
		}
		dec.Snapshots().Loaded(&fakeSnapshot{})
		if a := <-one; a.err != nil || vin.SourceOf(a.out.Result) != vin.SourceSnapshot {
			t.Errorf("Decode while the snapshot loaded = %+v, %v; want the snapshot's answer", a.out, a.err)
		}
		for i, o := range <-batch {
			if o.Err != nil || vin.SourceOf(o.Result) != vin.SourceSnapshot {
				t.Errorf("batch VIN %d = %+v, want the snapshot's answer", i, o)
			}
		}
	})
}
