package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/service"
	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpicdb"
)

// realVINs are the valid VINs of the project's real-answer set (live vPIC
// answers recorded by public repositories) that vPIC decoded cleanly
// (error code 0), in the set's order.
func realVINs(tb testing.TB) []string {
	tb.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "internal", "vpicdb", "testdata", "real", "answers.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var entries []struct {
		VIN    string            `json:"vin"`
		Fields map[string]string `json:"fields"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if v := vin.Normalize(e.VIN); vin.Valid(v) && e.Fields["ErrorCode"] == "0" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// mistakeClass is a way of typing a VIN wrong: its name, and every wrong
// input of the kind made from a VIN.
type mistakeClass struct {
	name string
	make func(v string) []string
}

// confusables of the suggestion benchmark: each character and those it is
// misread as (decisions.md's list).
var confusables = map[byte]string{
	'0': "ODQ", 'O': "0DQ", 'D': "0O", 'Q': "0O", '1': "IL", 'I': "1L", 'L': "1I",
	'2': "Z", 'Z': "2", '5': "S", 'S': "5", '6': "G", 'G': "6", '8': "B", 'B': "8", 'U': "V", 'V': "U",
}

// mistakeClasses are the benchmark's classes, as the issue names them.
var mistakeClasses = []mistakeClass{
	{"confusable substitution", func(v string) (out []string) {
		for i := range len(v) {
			for _, c := range confusables[v[i]] {
				out = append(out, v[:i]+string(c)+v[i+1:])
			}
		}
		return out
	}},
	{"I/O/Q typed", func(v string) (out []string) {
		for i := range len(v) {
			switch v[i] {
			case '1':
				out = append(out, v[:i]+"I"+v[i+1:])
			case '0':
				out = append(out, v[:i]+"O"+v[i+1:], v[:i]+"Q"+v[i+1:])
			}
		}
		return out
	}},
	{"other substitution", func(v string) (out []string) {
		const alphabet = "0123456789ABCDEFGHJKLMNPRSTUVWXYZ"
		for i := range len(v) {
			for _, c := range alphabet {
				if byte(c) != v[i] && !strings.ContainsRune(confusables[v[i]], c) {
					out = append(out, v[:i]+string(c)+v[i+1:])
				}
			}
		}
		return out
	}},
	{"adjacent transposition", func(v string) (out []string) {
		for i := range len(v) - 1 {
			if v[i] != v[i+1] {
				out = append(out, v[:i]+v[i+1:i+2]+v[i:i+1]+v[i+2:])
			}
		}
		return out
	}},
	{"deletion (16 characters)", func(v string) (out []string) {
		for i := range len(v) {
			if i == 0 || v[i] != v[i-1] {
				out = append(out, v[:i]+v[i+1:])
			}
		}
		return out
	}},
	{"duplicated character (18)", func(v string) (out []string) {
		for i := range len(v) {
			out = append(out, v[:i+1]+v[i:])
		}
		return out
	}},
	{"inserted character (18)", func(v string) (out []string) {
		for i := range len(v) + 1 {
			for _, c := range "0123456789ABCDEFGHJKLMNPRSTUVWXYZ" {
				if (i == 0 || v[i-1] != byte(c)) && (i == len(v) || v[i] != byte(c)) {
					out = append(out, v[:i]+string(c)+v[i:])
				}
			}
		}
		return out
	}},
}

// sampleSize bounds the inputs of one class in BenchmarkSuggestAccuracy.
const sampleSize = 4000

// accuracy is how the suggestions did on one class's inputs.
type accuracy struct {
	inputs, valid int                 // inputs not valid as typed; valid ones, apart
	first, top5   int                 // true VIN first; among the five
	na, naTop5    int                 // of the inputs, those where a check digit applies
	decoded, most int                 // snapshot decodes, in all and in one request
	byPos         [vin.Len + 1][2]int // among five, and inputs, by the first position the input differs at
}

// measure asks h for the suggestions of at most sample inputs of class,
// made from vins and evenly spread over them (every VIN, every position).
func measure(tb testing.TB, h *decoding.Snapshots, vins []string, class mistakeClass, sample int) accuracy {
	tb.Helper()
	var all []struct{ v, typed string }
	for _, v := range vins {
		for _, typed := range class.make(v) {
			all = append(all, struct{ v, typed string }{v, typed})
		}
	}
	var a accuracy
	for k := 0; k < len(all); k += max(1, len(all)/sample) {
		v, typed := all[k].v, all[k].typed
		s, err := h.Suggest(context.Background(), typed)
		if err != nil {
			tb.Fatalf("Suggest(%s): %v", typed, err)
		}
		a.decoded += s.Decoded
		a.most = max(a.most, s.Decoded)
		if s.Valid {
			a.valid++
			continue
		}
		a.inputs++
		i := slices.IndexFunc(s.Suggestions, func(x vin.Suggestion) bool { return x.VIN == v })
		p := firstDifference(v, typed)
		a.byPos[p][1]++
		if i >= 0 {
			a.top5++
			a.byPos[p][0]++
		}
		if i == 0 {
			a.first++
		}
		if vin.CheckDigitApplies(v) {
			a.na++
			if i >= 0 {
				a.naTop5++
			}
		}
	}
	return a
}

// openSuggester opens the real snapshot at path for suggestions.
func openSuggester(tb testing.TB, path string) *decoding.Snapshots {
	tb.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := vpicdb.Open(context.Background(), path, logger)
	if err != nil {
		tb.Fatal(err)
	}
	return decoding.NewSnapshots(db, vin.SnapshotOnly, 0, logger)
}

// BenchmarkSuggestAccuracy makes every VIN of the real-answer set wrong in
// every way of each class (at most sampleSize of them a class, evenly
// spread) and asks the suggestions for each wrong input from the real
// snapshot: per class, the share of inputs whose true VIN is the first
// suggestion and the share with it among the five, the same by the
// position the input first differs at, and the snapshot decodes a request
// took (mean and most). Inputs that are valid VINs themselves (another
// real vehicle, or a check digit that does not apply) are counted apart:
// nothing is to be suggested for them. Run:
//
//	cd vinsvc && go test -run '^$' -bench SuggestAccuracy -benchtime 1x ./cmd/vinsvc/
func BenchmarkSuggestAccuracy(b *testing.B) {
	h := openSuggester(b, benchSnapshotPath(b))
	vins := realVINs(b)
	for _, class := range mistakeClasses {
		b.Run(strings.ReplaceAll(class.name, " ", "_"), func(b *testing.B) {
			a := measure(b, h, vins, class, sampleSize)
			total := a.inputs + a.valid
			b.Logf("%-27s %6d inputs (%5d valid as typed): true VIN first %5.1f%%, among five %5.1f%% (check digit applies: %5.1f%% of %d); decodes a request: mean %.0f, most %d",
				class.name, total, a.valid, pct(a.first, a.inputs), pct(a.top5, a.inputs), pct(a.naTop5, a.na), a.na, float64(a.decoded)/float64(max(total, 1)), a.most)
			var positions strings.Builder
			for p := 1; p <= vin.Len; p++ {
				if a.byPos[p][1] == 0 {
					fmt.Fprintf(&positions, " %d:-", p) // no input of the class differs first there
					continue
				}
				fmt.Fprintf(&positions, " %d:%.0f", p, pct(a.byPos[p][0], a.byPos[p][1]))
			}
			b.Logf("%-27s among five by the first position that differs (%%):%s", class.name, positions.String())
			b.ReportMetric(pct(a.top5, a.inputs), "%-among-five")
			b.ReportMetric(pct(a.first, a.inputs), "%-first")
		})
	}
}

// TestSuggestSnapshot holds the suggestions on the real snapshot to the
// shares docs/performance.md reports, on 300 inputs a class (a few seconds;
// the benchmark measures 4,000): the true VIN among the five at least as
// often as the goals ask (the missed character at its measured
// 78%, below the goal's 80%, for the reason the table gives), first for
// 70% of look-alikes, and no request decoding more than the candidates of
// one edit. make test runs it without the race detector, with the other
// snapshot tests.
func TestSuggestSnapshot(t *testing.T) {
	h := openSuggester(t, snapshotPath(t))
	vins := realVINs(t)
	floors := map[string]float64{ // among five, %
		"confusable substitution": 95, "I/O/Q typed": 95, "adjacent transposition": 90,
		"deletion (16 characters)": 74, "duplicated character (18)": 95, "inserted character (18)": 95,
		"other substitution": 35,
	}
	for _, class := range mistakeClasses {
		a := measure(t, h, vins, class, 300)
		top5 := pct(a.top5, a.inputs)
		t.Logf("%-27s %d inputs: among five %.1f%%, first %.1f%%, most decodes %d", class.name, a.inputs, top5, pct(a.first, a.inputs), a.most)
		if top5 < floors[class.name] {
			t.Errorf("%s: the true VIN among the five for %.1f%% of %d inputs, want at least %.0f%%", class.name, top5, a.inputs, floors[class.name])
		}
		if class.name == "confusable substitution" && pct(a.first, a.inputs) < 70 {
			t.Errorf("look-alikes: the true VIN first for %.1f%%, want at least 70%%", pct(a.first, a.inputs))
		}
		if a.most > 562 {
			t.Errorf("%s: a request decoded %d candidates, more than one edit makes", class.name, a.most)
		}
	}
}

// firstDifference is the 1-based position of v where typed first differs
// from it (vin.Len when typed only adds characters after it).
func firstDifference(v, typed string) int {
	for i := range min(len(v), len(typed)) {
		if v[i] != typed[i] {
			return i + 1
		}
	}
	return min(len(v), len(typed))
}

func pct(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// benchSnapshotPath is snapshotPath for a benchmark.
func benchSnapshotPath(b *testing.B) string {
	p := os.Getenv("TEST_VPIC_SNAPSHOT")
	if p == "" {
		p = filepath.Join("..", "..", "..", "data", "vpic", "vpic.lite.db")
	}
	if _, err := os.Stat(p); err != nil {
		b.Skipf("no vPIC snapshot at %s (make vpic-snapshot): %v", p, err)
	}
	return p
}

// BenchmarkSuggestLatency runs the service on the real snapshot
// (VPIC_SNAPSHOT_MODE=only, limits off) and, side by side in one run,
// sends over loopback HTTP one decode of each real VIN (each a snapshot
// decode: every VIN once, so none is a cache hit) and one suggestion
// request for a mistyped form of it (the classes of
// BenchmarkSuggestAccuracy in turn, at a position that moves along the
// VIN). It reports the p50 and p99 of each and the ratio of the p99s.
// Run:
//
//	cd vinsvc && go test -run '^$' -bench SuggestLatency -benchtime 1x ./cmd/vinsvc/
func BenchmarkSuggestLatency(b *testing.B) {
	path := benchSnapshotPath(b)
	env := map[string]string{
		"VPIC_SNAPSHOT_PATH": path, "VPIC_SNAPSHOT_MODE": "only", "RATE_LIMITS": "off",
		"CACHE_PATH": filepath.Join(b.TempDir(), "c.db"), "LOG_LEVEL": "WARN",
	}
	s := service.Start(b, func(ctx context.Context, ln net.Listener, logs io.Writer) error {
		return serve(ctx, func(int) (net.Listener, error) { return ln, nil }, func(k string) string { return env[k] }, logs)
	}, service.Options{Name: "vinsvc", Ready: []string{"/readyz"}, StartWithin: 2 * time.Minute})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	timed := func(target string) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, s.URL+target, nil)
		req.Header.Set("X-Gateway-Proxy-Secret", "dev-proxy-secret")
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s = %d", target, resp.StatusCode)
		}
		return d
	}
	vins := realVINs(b)
	for range b.N {
		var decodes, suggests []time.Duration
		for i, v := range vins {
			decodes = append(decodes, timed("/v1/decode?vin="+v))
			wrong := mistakeClasses[i%len(mistakeClasses)].make(v)
			if len(wrong) == 0 { // no 1 or 0 to misread as I, O or Q
				continue
			}
			suggests = append(suggests, timed("/v1/suggest?vin="+wrong[(i/len(mistakeClasses))%len(wrong)]))
		}
		slices.Sort(decodes)
		slices.Sort(suggests)
		p := func(ds []time.Duration, q int) time.Duration { return ds[len(ds)*q/100] }
		b.ReportMetric(float64(p(decodes, 50).Microseconds()), "decode-p50-µs")
		b.ReportMetric(float64(p(decodes, 99).Microseconds()), "decode-p99-µs")
		b.ReportMetric(float64(p(suggests, 50).Microseconds()), "suggest-p50-µs")
		b.ReportMetric(float64(p(suggests, 99).Microseconds()), "suggest-p99-µs")
		b.ReportMetric(float64(p(suggests, 99))/float64(p(decodes, 99)), "p99-ratio")
	}
}
