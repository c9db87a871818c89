package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/observe"
	"github.com/gatewayapis/vinsvc/internal/cache"
	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

const (
	benchConns    = 64
	benchDuration = 4 * time.Second
	pacedRate     = 5000 // requests per second over all connections
)

// serveLoopback serves h on a real loopback listener until the benchmark
// ends and returns its base URL.
func serveLoopback(b *testing.B, h http.Handler) string {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	b.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String()
}

// benchService is the real service (bbolt cache, rate limiter, logging to
// a discarding JSON handler, metrics) behind a fake upstream.
func benchService(b *testing.B, upstream string) (string, *decoding.Service) {
	b.Helper()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	c, err := cache.Open(filepath.Join(b.TempDir(), "vincache.db"), 90*24*time.Hour, logger, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	reg := observe.NewRegistry()
	client := vpic.NewClient(upstream, 10*time.Second, 2, 1000, logger, vpic.NewMetrics(reg))
	dec := decoding.Compose(c, client, decoding.NewSnapshots(nil, vin.SnapshotOff, 0, logger), 0, client.MaxCallDuration(), logger, time.Now)
	mon := vpic.NewMonitor(client.Ping, time.Second, logger, time.Now)
	plans, _ := ratelimit.Parse("default=1000000000/1m", ratelimit.Limit{N: 60, Per: time.Minute})
	e := httpapi.NewServer(logger, httpapi.Options{ProxySecrets: []string{secret}, Docs: true}, httpapi.Deps{
		Decoder: dec, Cache: c, Limiter: ratelimit.New(plans, time.Now), Upstream: mon, Shared: fixedShared("disabled"),
		Registry: reg, Started: time.Now(), Now: time.Now,
	})
	return serveLoopback(b, e), dec
}

type loadResult struct {
	rps float64
	p50 time.Duration
	p99 time.Duration
	n   int
}

// load runs benchConns keep-alive connections against url for d and
// returns the throughput and latency percentiles. Any non-200 fails. Each
// connection is driven by a minimal HTTP/1.1 client (one prepared request,
// responses read by Content-Length), so the load generator, which shares
// the machine's cores with the server, costs as little CPU as it can.
func load(b *testing.B, rawURL string, hdr http.Header, d time.Duration) loadResult {
	return loadAt(b, rawURL, hdr, d, 0)
}

// loadAt is load with an aggregate request rate: 0 sends as fast as the
// server answers (closed loop, for throughput); a positive rate sends each
// connection's requests on a fixed schedule and measures latency from the
// scheduled time, so a stalled server is charged for the requests it
// delayed (no coordinated omission).
func loadAt(b *testing.B, rawURL string, hdr http.Header, d time.Duration, rate float64) loadResult {
	b.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		b.Fatal(err)
	}
	var req bytes.Buffer
	fmt.Fprintf(&req, "GET %s HTTP/1.1\r\nHost: %s\r\n", u.RequestURI(), u.Host)
	hdr.Write(&req)
	req.WriteString("\r\n")
	raw := req.Bytes()

	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		all  []time.Duration
		fail error
	)
	deadline := time.Now().Add(d)
	start := time.Now()
	for i := range benchConns {
		wg.Go(func() {
			// Stagger the connections' schedules so the load is even, not
			// bursts of benchConns requests at once.
			offset := time.Duration(i) * time.Duration(float64(time.Second)/max(rate, 1))
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				mu.Lock()
				fail = err
				mu.Unlock()
				return
			}
			defer conn.Close()
			br := bufio.NewReaderSize(conn, 16<<10)
			lat := make([]time.Duration, 0, 1<<15)
			var interval time.Duration
			if rate > 0 {
				interval = time.Duration(float64(benchConns) / rate * float64(time.Second))
			}
			next := start.Add(offset)
			for time.Now().Before(deadline) {
				t0 := time.Now()
				if interval > 0 {
					time.Sleep(time.Until(next))
					t0 = next
					next = next.Add(interval)
				}
				if _, err = conn.Write(raw); err == nil {
					err = readResponse(br)
				}
				if err != nil {
					mu.Lock()
					fail = err
					mu.Unlock()
					return
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if fail != nil {
		b.Fatal(fail)
	}
	slices.Sort(all)
	return loadResult{
		rps: float64(len(all)) / elapsed.Seconds(),
		p50: all[len(all)/2],
		p99: all[len(all)*99/100],
		n:   len(all),
	}
}

// readResponse reads one HTTP/1.1 response with a Content-Length body and
// fails unless its status is 200.
func readResponse(br *bufio.Reader) error {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
		return fmt.Errorf("status line %q", line)
	}
	n := -1
	for {
		line, err = br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 {
			break
		}
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && bytes.EqualFold(k, []byte("Content-Length")) {
			n, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return err
			}
		}
	}
	if n < 0 {
		return fmt.Errorf("response without Content-Length")
	}
	_, err = br.Discard(n)
	return err
}

// BenchmarkDecodeHitVsBareEcho measures cache-hit GET /v1/decode over real
// HTTP on loopback with 64 connections, beside a bare Echo handler that
// returns the same JSON body with no middleware (the framework ceiling).
// Each server runs in its own process (this test binary, re-executed), as
// in production, so the load generator's garbage collection and the other
// server do not count against it; the two are measured in alternation,
// three rounds each, and the best round of each is compared. Reported:
// requests per second of each and their ratio, latency percentiles at
// saturation, and latency at a fixed 5,000 requests per second.
func BenchmarkDecodeHitVsBareEcho(b *testing.B) {
	svc := startServerProcess(b, "vinsvc")
	bareURL := startServerProcess(b, "bare")
	hdr := http.Header{"X-Gateway-Proxy-Secret": {secret}, "X-Gateway-Subscription": {"MEGA"}, "X-Gateway-User": {"bench"}}
	target := "/v1/decode?vin=" + vpictest.VINHondaAccord
	for b.Loop() {
		var ours, base []loadResult
		for range 3 {
			base = append(base, load(b, bareURL+target, hdr, benchDuration))
			ours = append(ours, load(b, svc+target, hdr, benchDuration))
		}
		o, bb := best(ours), best(base)
		b.ReportMetric(o.rps, "vinsvc-req/s")
		b.ReportMetric(bb.rps, "bare-echo-req/s")
		b.ReportMetric(o.rps/bb.rps, "ratio")
		b.ReportMetric(float64(o.p50.Microseconds())/1000, "vinsvc-p50-ms")
		b.ReportMetric(float64(o.p99.Microseconds())/1000, "vinsvc-p99-ms")
		b.ReportMetric(float64(bb.p99.Microseconds())/1000, "bare-echo-p99-ms")

		// Latency at a fixed load below saturation, where it measures the
		// service rather than the queue in front of it.
		paced := loadAt(b, svc+target, hdr, benchDuration, pacedRate)
		pacedBare := loadAt(b, bareURL+target, hdr, benchDuration, pacedRate)
		b.ReportMetric(float64(paced.p50.Microseconds())/1000, "vinsvc-p50-ms@5000rps")
		b.ReportMetric(float64(paced.p99.Microseconds())/1000, "vinsvc-p99-ms@5000rps")
		b.ReportMetric(float64(pacedBare.p99.Microseconds())/1000, "bare-echo-p99-ms@5000rps")
	}
}

// serverProcessEnv names the server a re-executed test binary runs.
const serverProcessEnv = "VINSVC_BENCH_SERVER"

// TestMain turns the test binary into a benchmark server when asked.
func TestMain(m *testing.M) {
	if kind := os.Getenv(serverProcessEnv); kind != "" {
		if err := runBenchServer(kind); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// startServerProcess runs this test binary as a server of the given kind
// and returns its base URL; the process is killed when the benchmark ends.
func startServerProcess(b *testing.B, kind string) string {
	b.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serverProcessEnv+"="+kind)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("%s server did not start: %v", kind, err)
	}
	return strings.TrimSpace(line)
}

// runBenchServer serves until killed: "vinsvc" is the real service with a
// warm cache (bbolt file, rate limiter, access log to a discarding JSON
// handler, metrics) behind a fake upstream; "bare" is a bare Echo handler
// answering the same body. It prints the base URL on stdout.
func runBenchServer(kind string) error {
	up := vpictest.Start()
	defer up.Close()
	dir, err := os.MkdirTemp("", "vinsvc-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	c, err := cache.Open(filepath.Join(dir, "vincache.db"), 90*24*time.Hour, logger, time.Now)
	if err != nil {
		return err
	}
	reg := observe.NewRegistry()
	client := vpic.NewClient(up.BaseURL(), 10*time.Second, 2, 1000, logger, vpic.NewMetrics(reg))
	dec := decoding.Compose(c, client, decoding.NewSnapshots(nil, vin.SnapshotOff, 0, logger), 0, client.MaxCallDuration(), logger, time.Now)
	out, err := dec.Decode(context.Background(), vpictest.VINHondaAccord, false) // warm the cache
	if err != nil {
		return err
	}
	var h http.Handler
	switch kind {
	case "vinsvc":
		mon := vpic.NewMonitor(client.Ping, time.Second, logger, time.Now)
		plans, _ := ratelimit.Parse("default=1000000000/1m", ratelimit.Limit{N: 60, Per: time.Minute})
		h = httpapi.NewServer(logger, httpapi.Options{ProxySecrets: []string{secret}, Docs: true}, httpapi.Deps{
			Decoder: dec, Cache: c, Limiter: ratelimit.New(plans, time.Now), Upstream: mon, Shared: fixedShared("disabled"),
			Registry: reg, Started: time.Now(), Now: time.Now,
		})
	case "bare":
		body := fromOutcomeForBench(out)
		e := echo.New()
		e.GET("/v1/decode", func(c echo.Context) error { return c.JSON(http.StatusOK, body) })
		h = e
	default:
		return fmt.Errorf("unknown server kind %q", kind)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	fmt.Println("http://" + ln.Addr().String())
	return (&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}

func best(rs []loadResult) loadResult {
	return slices.MaxFunc(rs, func(a, b loadResult) int {
		switch {
		case a.rps < b.rps:
			return -1
		case a.rps > b.rps:
			return 1
		}
		return 0
	})
}

// fromOutcomeForBench builds the same wire body the service sends, from the
// public JSON names, so the bare handler encodes an equivalent value.
func fromOutcomeForBench(o vin.Outcome) map[string]any {
	r := o.Result
	return map[string]any{
		"vin": r.VIN, "make": r.Make, "model": r.Model, "model_year": r.ModelYear, "trim": r.Trim,
		"series": r.Series, "body_class": r.BodyClass, "drive_type": r.DriveType,
		"engine_displacement_cc": r.EngineDisplacementCC, "engine_displacement_l": r.EngineDisplacementL,
		"engine_cylinders": r.EngineCylinders, "fuel_type_primary": r.FuelTypePrimary,
		"transmission_style": r.TransmissionStyle, "transmission_speeds": r.TransmissionSpeeds,
		"plant_city": r.PlantCity, "plant_state": r.PlantState, "plant_country": r.PlantCountry,
		"manufacturer_name": r.ManufacturerName, "vehicle_type": r.VehicleType,
		"error_code": r.ErrorCode, "error_text": r.ErrorText, "cached": true,
	}
}

// BenchmarkBatch50Uncached posts batches of 50 new VINs against a fake
// upstream that takes 200 ms per call. The wall time should be about one
// upstream round trip, and each batch should make exactly one call.
func BenchmarkBatch50Uncached(b *testing.B) {
	const latency = 200 * time.Millisecond
	up := vpictest.New(b)
	up.SetLatency(latency)
	svc, _ := benchService(b, up.BaseURL())
	client := &http.Client{}
	n := 0
	var total time.Duration
	for b.Loop() {
		vins := make([]string, 50)
		for i := range vins {
			vins[i] = fmt.Sprintf("1HGCM8263%08d", n*50+i)
		}
		n++
		req, _ := http.NewRequest(http.MethodPost, svc+"/v1/batch", strings.NewReader(batchOf(vins...)))
		req.Header.Set("X-Gateway-Proxy-Secret", secret)
		req.Header.Set("Content-Type", "application/json")
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		total += time.Since(t0)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
	b.ReportMetric(float64(up.CallCount())/float64(n), "upstream-calls/batch")
	b.ReportMetric(float64(total.Milliseconds())/float64(n), "ms/batch")
	b.ReportMetric(float64(total)/float64(n)/float64(latency), "x-upstream-latency")
}
