package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// BenchmarkHandlerDecodeHit measures the CPU cost of one cache-hit decode
// through the whole router and middleware, without the network, beside the
// bare Echo handler; the difference is our per-request overhead.
func BenchmarkHandlerDecodeHit(b *testing.B) {
	en := newEnv(b, quiet(), withLimits("default=1000000000/1m"))
	out, err := en.dec.Decode(context.Background(), vpictest.VINHondaAccord, false)
	if err != nil {
		b.Fatal(err)
	}
	body := fromOutcomeForBench(out)
	bare := echo.New()
	bare.GET("/v1/decode", func(c echo.Context) error { return c.JSON(http.StatusOK, body) })
	target := "/v1/decode?vin=" + vpictest.VINHondaAccord
	run := func(b *testing.B, h http.Handler) {
		req := httptest.NewRequest(http.MethodGet, target, nil)
		req.Header.Set("X-Gateway-Proxy-Secret", secret)
		req.Header.Set("X-Gateway-User", "bench")
		b.ReportAllocs()
		for b.Loop() {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatal(rec.Code)
			}
		}
	}
	b.Run("vinsvc", func(b *testing.B) { run(b, en.e) })
	b.Run("bare-echo", func(b *testing.B) { run(b, bare) })
}
