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
	"github.com/gatewayapis/vinsvc/internal/httpapi"
	"github.com/gatewayapis/vinsvc/internal/ratelimit"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

const (
	benchConns    = 64
	benchDuration = 4 * time.Second
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
func benchService(b *testing.B, upstream string) (string, *vin.Decoder) {
	b.Helper()
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	c, err := cache.Open(filepath.Join(b.TempDir(), "vincache.db"), 90*24*time.Hour, logger, time.Now)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	reg := observe.NewRegistry()
	client := vpic.NewClient(upstream, 10*time.Second, 2, 1000, logger, vpic.NewMetrics(reg))
	dec := vin.NewDecoder(c, client, client.MaxCallDuration(), logger, time.Now)
	mon := vpic.NewMonitor(client.Ping, time.Second, logger, time.Now)
	plans, _ := ratelimit.Parse("default=1000000000/1m", ratelimit.Limit{N: 60, Per: time.Minute})
	e := httpapi.NewServer(logger, secret, dec, c, ratelimit.New(plans, time.Now), mon, reg, time.Now(), time.Now)
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
	for range benchConns {
		wg.Go(func() {
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
			for time.Now().Before(deadline) {
				t0 := time.Now()
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
// returns the same JSON body with no middleware (the framework ceiling),
// alternating the two twice in the same run. Reported: requests per second
// of each, their ratio, and p99 latencies.
func BenchmarkDecodeHitVsBareEcho(b *testing.B) {
	up := vpictest.New(b)
	svc, dec := benchService(b, up.BaseURL())
	out, err := dec.Decode(context.Background(), vpictest.VINHondaAccord, false) // warm the cache
	if err != nil {
		b.Fatal(err)
	}
	body := fromOutcomeForBench(out)

	bare := echo.New()
	bare.GET("/v1/decode", func(c echo.Context) error { return c.JSON(http.StatusOK, body) })
	bareURL := serveLoopback(b, bare)

	hdr := http.Header{"X-Gateway-Proxy-Secret": {secret}, "X-Gateway-Subscription": {"MEGA"}, "X-Gateway-User": {"bench"}}
	target := "/v1/decode?vin=" + vpictest.VINHondaAccord
	for b.Loop() {
		var ours, base []loadResult
		for range 2 {
			base = append(base, load(b, bareURL+target, hdr, benchDuration))
			ours = append(ours, load(b, svc+target, hdr, benchDuration))
		}
		o, bb := best(ours), best(base)
		b.ReportMetric(o.rps, "vinsvc-req/s")
		b.ReportMetric(bb.rps, "bare-echo-req/s")
		b.ReportMetric(o.rps/bb.rps, "ratio")
		b.ReportMetric(float64(o.p99.Microseconds())/1000, "vinsvc-p99-ms")
		b.ReportMetric(float64(bb.p99.Microseconds())/1000, "bare-echo-p99-ms")
		b.ReportMetric(float64(o.p50.Microseconds())/1000, "vinsvc-p50-ms")
	}
	if hits, misses := dec.Counts(); misses != 1 || hits == 0 {
		b.Fatalf("hits/misses = %d/%d: the benchmark did not measure cache hits", hits, misses)
	}
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
