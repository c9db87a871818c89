package decoding_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/clocktest"
	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/vin"
)

var errBoom = errors.New("boom")

// fakeUpstream is a hand-written decoding.Upstream with Fn fields; it answers
// every VIN with a clean decode unless told otherwise, and counts calls.
type fakeUpstream struct {
	DecodeFn      func(ctx context.Context, v string) (vin.Decoded, error)
	DecodeBatchFn func(ctx context.Context, vins []string) ([]vin.Outcome, error)

	singles, batches atomic.Int32
	mu               sync.Mutex
	batchSizes       []int
}

var _ decoding.Upstream = (*fakeUpstream)(nil)

func answer(v string) vin.Decoded {
	mk := "HONDA"
	return vin.Decoded{Result: vin.Result{VIN: v, Make: &mk, ErrorCode: "0"}, Raw: []byte(`{"VIN":"` + v + `","Make":"HONDA"}`)}
}

func (f *fakeUpstream) Decode(ctx context.Context, v string) (vin.Decoded, error) {
	f.singles.Add(1)
	if f.DecodeFn != nil {
		return f.DecodeFn(ctx, v)
	}
	return answer(v), nil
}

func (f *fakeUpstream) DecodeBatch(ctx context.Context, vins []string) ([]vin.Outcome, error) {
	f.batches.Add(1)
	f.mu.Lock()
	f.batchSizes = append(f.batchSizes, len(vins))
	f.mu.Unlock()
	if f.DecodeBatchFn != nil {
		return f.DecodeBatchFn(ctx, vins)
	}
	outs := make([]vin.Outcome, len(vins))
	for i, v := range vins {
		outs[i] = vin.Outcome{Decoded: answer(v)}
	}
	return outs, nil
}

func mustDecoder(tb testing.TB, up decoding.Upstream) (*decoding.Decoder, *cache.Cache, *clocktest.Clock) {
	tb.Helper()
	clk := clocktest.New(time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC))
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	c, err := cache.Open(filepath.Join(tb.TempDir(), "c.db"), 90*24*time.Hour, logger, clk.Now)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	return decoding.New(c, up, 10*time.Second, logger, clk.Now), c, clk
}

func vins(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("1HGCM8263%08d", i)
	}
	return out
}

func TestDecodeMissThenHit(t *testing.T) {
	up := &fakeUpstream{}
	dec, _, _ := mustDecoder(t, up)
	ctx := context.Background()
	v := "1HGCM82633A004352"

	out, err := dec.Decode(ctx, v, true)
	if err != nil || out.Cached || out.Result.VIN != v || len(out.Raw) == 0 {
		t.Fatalf("first Decode = %+v, %v; want a fresh answer with raw", out, err)
	}
	out, err = dec.Decode(ctx, v, false)
	if err != nil || !out.Cached || out.Raw != nil {
		t.Fatalf("second Decode = %+v, %v; want a cached answer without raw", out, err)
	}
	out, err = dec.Decode(ctx, v, true)
	if err != nil || !out.Cached || string(out.Raw) != `{"VIN":"`+v+`","Make":"HONDA"}` {
		t.Fatalf("third Decode raw = %s, %v; want the stored raw record", out.Raw, err)
	}
	if got := up.singles.Load(); got != 1 {
		t.Errorf("upstream single calls = %d, want 1", got)
	}
	if hits, misses := dec.Counts(); hits != 2 || misses != 1 {
		t.Errorf("Counts() = %d, %d; want 2, 1", hits, misses)
	}
	if got := dec.HitRate(); got < 0.66 || got > 0.67 {
		t.Errorf("HitRate() = %v, want 2/3", got)
	}
}

func TestDecodeFailureNotCached(t *testing.T) {
	up := &fakeUpstream{DecodeFn: func(context.Context, string) (vin.Decoded, error) { return vin.Decoded{}, errBoom }}
	dec, c, _ := mustDecoder(t, up)
	v := "1HGCM82633A004352"
	if _, err := dec.Decode(context.Background(), v, false); !errors.Is(err, errBoom) {
		t.Fatalf("Decode error = %v, want %v", err, errBoom)
	}
	if _, ok, _ := c.Get(context.Background(), v, false); ok {
		t.Fatal("a failed upstream call was cached")
	}
	up.DecodeFn = nil
	if out, err := dec.Decode(context.Background(), v, false); err != nil || out.Cached {
		t.Fatalf("Decode after failure = %+v, %v; want a fresh upstream answer", out, err)
	}
	if got := up.singles.Load(); got != 2 {
		t.Errorf("upstream calls = %d, want 2 (failure retried on the next request)", got)
	}
}

// TestCoalescing: N concurrent requests for the same uncached VIN make one
// upstream call and all get its answer.
func TestCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		started := make(chan struct{}, 100)
		up := &fakeUpstream{DecodeFn: func(ctx context.Context, v string) (vin.Decoded, error) {
			started <- struct{}{}
			<-release
			return answer(v), nil
		}}
		dec, _, _ := mustDecoder(t, up)
		const n = 50
		v := "1HGCM82633A004352"
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for range n {
			wg.Go(func() {
				out, err := dec.Decode(context.Background(), v, false)
				if err == nil && out.Result.VIN != v {
					err = fmt.Errorf("got answer for %s", out.Result.VIN)
				}
				errs <- err
			})
		}
		<-started // the first call is upstream and held there
		// Every other request has missed the cache while the call is held,
		// and waits: for the shared call if they share it, at the upstream
		// if they do not.
		synctest.Wait()
		close(release)
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		if got := up.singles.Load(); got != 1 {
			t.Fatalf("upstream calls = %d for %d concurrent requests, want 1", got, n)
		}
	})
}

// TestBatchOneCall: a batch's misses go upstream in one batch call; cached
// VINs are not asked for again.
func TestBatchOneCall(t *testing.T) {
	up := &fakeUpstream{}
	dec, _, _ := mustDecoder(t, up)
	ctx := context.Background()
	all := vins(50)
	if _, err := dec.Decode(ctx, all[0], false); err != nil { // warm one
		t.Fatal(err)
	}
	outs := dec.DecodeBatch(ctx, all, false)
	if len(outs) != 50 {
		t.Fatalf("DecodeBatch returned %d outcomes, want 50", len(outs))
	}
	for i, o := range outs {
		if o.Err != nil || o.Result.VIN != all[i] {
			t.Fatalf("outcome %d = %+v, want answer for %s", i, o, all[i])
		}
		if o.Cached != (i == 0) {
			t.Errorf("outcome %d cached = %v, want %v", i, o.Cached, i == 0)
		}
	}
	if got := up.batches.Load(); got != 1 {
		t.Fatalf("upstream batch calls = %d, want 1", got)
	}
	if up.batchSizes[0] != 49 {
		t.Errorf("batch call asked for %d VINs, want the 49 misses", up.batchSizes[0])
	}
}

// TestBatchJoinsInflightSingle: a batch that needs a VIN a single request
// is already fetching waits for that call instead of asking again.
func TestBatchJoinsInflightSingle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		up := &fakeUpstream{DecodeFn: func(ctx context.Context, v string) (vin.Decoded, error) {
			<-release
			return answer(v), nil
		}}
		dec, _, _ := mustDecoder(t, up)
		all := vins(3)
		single := make(chan error, 1)
		go func() { _, err := dec.Decode(context.Background(), all[1], false); single <- err }()
		settled(t, "the single's upstream call", func() bool { return up.singles.Load() == 1 })

		batchDone := make(chan []vin.Outcome, 1)
		go func() { batchDone <- dec.DecodeBatch(context.Background(), all, false) }()
		settled(t, "the batch's upstream call", func() bool { return up.batches.Load() == 1 })
		close(release)
		outs := <-batchDone
		if err := <-single; err != nil {
			t.Fatal(err)
		}
		for i, o := range outs {
			if o.Err != nil || o.Result.VIN != all[i] {
				t.Fatalf("outcome %d = %+v", i, o)
			}
		}
		if up.batchSizes[0] != 2 {
			t.Errorf("batch asked upstream for %d VINs, want 2 (the third was in flight)", up.batchSizes[0])
		}
	})
}

func TestBatchPartialFailure(t *testing.T) {
	up := &fakeUpstream{DecodeBatchFn: func(_ context.Context, vs []string) ([]vin.Outcome, error) {
		outs := make([]vin.Outcome, len(vs))
		for i, v := range vs {
			if i == 1 {
				outs[i].Err = errBoom
				continue
			}
			outs[i].Decoded = answer(v)
		}
		return outs, nil
	}}
	dec, c, _ := mustDecoder(t, up)
	all := vins(3)
	outs := dec.DecodeBatch(context.Background(), all, false)
	if outs[0].Err != nil || !errors.Is(outs[1].Err, errBoom) || outs[2].Err != nil {
		t.Fatalf("outcomes = %+v, want only the second failed", outs)
	}
	for i, v := range all {
		_, ok, _ := c.Get(context.Background(), v, false)
		if ok != (i != 1) {
			t.Errorf("cached(%s) = %v, want %v", v, ok, i != 1)
		}
	}

	up.DecodeBatchFn = func(context.Context, []string) ([]vin.Outcome, error) { return nil, errBoom }
	outs = dec.DecodeBatch(context.Background(), vins(5)[3:], false)
	for i, o := range outs {
		if !errors.Is(o.Err, errBoom) {
			t.Errorf("outcome %d error = %v, want the whole-call failure", i, o.Err)
		}
	}
}

// TestCallerLeavesCallContinues: a request that gives up does not cancel
// the shared call; the answer is cached for the next request.
func TestCallerLeavesCallContinues(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		up := &fakeUpstream{DecodeFn: func(ctx context.Context, v string) (vin.Decoded, error) {
			select {
			case <-release:
			case <-ctx.Done():
				return vin.Decoded{}, ctx.Err()
			}
			return answer(v), nil
		}}
		dec, c, _ := mustDecoder(t, up)
		v := "1HGCM82633A004352"
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := dec.Decode(ctx, v, false); done <- err }()
		settled(t, "the single's upstream call", func() bool { return up.singles.Load() == 1 })
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("Decode error = %v, want context.Canceled", err)
		}
		close(release)
		if err := dec.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := c.Get(context.Background(), v, false); !ok {
			t.Fatal("answer of a call whose requester left was not cached")
		}
	})
}

// TestRequestWaitUntilAnswer: a policy waits for a request's calls with a
// stop of its own (WaitUntil), answers the VINs still waiting in their
// call's place (Answer), and Wait returns those answers at once while the
// call goes on and caches the upstream's.
func TestRequestWaitUntilAnswer(t *testing.T) {
	release := make(chan struct{})
	up := &fakeUpstream{DecodeBatchFn: func(_ context.Context, vs []string) ([]vin.Outcome, error) {
		<-release
		outs := make([]vin.Outcome, len(vs))
		for i, v := range vs {
			outs[i] = vin.Outcome{Decoded: answer(v)}
		}
		return outs, nil
	}}
	dec, c, _ := mustDecoder(t, up)
	ctx := context.Background()
	all := vins(3)
	if _, err := dec.Decode(ctx, all[0], false); err != nil { // a hit for the batch
		t.Fatal(err)
	}
	r := dec.StartBatch(ctx, all, false)
	if !r.Pending() {
		t.Fatal("Pending() = false for a batch with misses")
	}
	stop := make(chan time.Time)
	close(stop)
	left := r.WaitUntil(ctx, stop)
	if len(left) != 2 || left[0] != 1 || left[1] != 2 {
		t.Fatalf("WaitUntil left %v waiting, want [1 2] (the held misses)", left)
	}
	mk := "STOP-GAP"
	for _, i := range left {
		r.Answer(i, vin.Outcome{Decoded: vin.Decoded{Result: vin.Result{VIN: r.VIN(i), Make: &mk}}})
	}
	if r.Pending() {
		t.Fatal("Pending() = true with every VIN answered")
	}
	done := make(chan []vin.Outcome, 1)
	go func() { done <- r.Wait(ctx) }()
	var outs []vin.Outcome
	select {
	case outs = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait waited for the held call of VINs already answered")
	}
	if !outs[0].Cached || *outs[1].Result.Make != mk || *outs[2].Result.Make != mk {
		t.Errorf("Wait = %+v; want the hit, then the policy's two answers", outs)
	}
	if _, ok, _ := c.Get(ctx, all[1], false); ok {
		t.Error("a VIN was cached before its call answered")
	}
	close(release)
	if err := dec.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, v := range all[1:] {
		if got, ok, _ := c.Get(ctx, v, false); !ok || *got.Result.Make != "HONDA" {
			t.Errorf("cache holds %+v (ok=%v) for %s; want the upstream's answer", got.Result, ok, v)
		}
	}
}

func TestHitRateWindow(t *testing.T) {
	dec, _, clk := mustDecoder(t, &fakeUpstream{})
	ctx := context.Background()
	v := "1HGCM82633A004352"
	if got := dec.HitRate(); got != 0 {
		t.Fatalf("HitRate() with no lookups = %v, want 0", got)
	}
	dec.Decode(ctx, v, false) // miss
	dec.Decode(ctx, v, false) // hit
	if got := dec.HitRate(); got != 0.5 {
		t.Fatalf("HitRate() = %v, want 0.5", got)
	}
	clk.Advance(23 * time.Hour)
	dec.Decode(ctx, v, false) // hit
	if got := dec.HitRate(); got < 0.66 || got > 0.67 {
		t.Fatalf("HitRate() after 23h = %v, want 2/3", got)
	}
	clk.Advance(90 * time.Minute) // the first two lookups leave the window
	if got := dec.HitRate(); got != 1 {
		t.Fatalf("HitRate() after 24.5h = %v, want 1 (only the last hit is in the window)", got)
	}
	clk.Advance(25 * time.Hour)
	if got := dec.HitRate(); got != 0 {
		t.Fatalf("HitRate() after the window emptied = %v, want 0", got)
	}
}

// settled waits, in a synctest bubble, until every goroutine of the test
// is blocked, and fails the test unless cond then holds.
func settled(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("every goroutine blocked before %s", what)
	}
}
