package main

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/gatewayapis/vinsvc/client"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// TestGeneratedClient calls the service, started as main does and reached
// over loopback HTTP, through the Go client generated from
// docs/openapi/vinsvc.yaml (vinsvc/client), and reads the typed answers:
// the generated code compiles against the document and parses what the
// service really sends.
func TestGeneratedClient(t *testing.T) {
	up := vpictest.New(t)
	base, _, logs := start(t, map[string]string{
		"APP_ENV": "production", "PROXY_SECRET": "client-proxy-secret", "VPIC_BASE_URL": up.BaseURL(),
		"CACHE_PATH": filepath.Join(t.TempDir(), "vincache.db"), "UPSTREAM_CHECK_INTERVAL": "1h",
		"VPIC_SNAPSHOT_MODE": "off",
	})
	c, err := client.NewClientWithResponses(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	secret := func(_ context.Context, req *http.Request) error {
		req.Header.Set("X-Gateway-Proxy-Secret", "client-proxy-secret")
		return nil
	}

	res, err := c.DecodeVinWithResponse(ctx, &client.DecodeVinParams{Vin: vpictest.VINHondaAccord}, secret)
	if err != nil {
		t.Fatalf("DecodeVin: %v\n%s", err, logs)
	}
	if res.StatusCode() != http.StatusOK || res.JSON200 == nil {
		t.Fatalf("DecodeVin = %d %s, want 200", res.StatusCode(), res.Body)
	}
	got := res.JSON200
	if got.Vin != vpictest.VINHondaAccord || strOf(got.Make) != "HONDA" || strOf(got.Model) != "Accord" ||
		strOf(got.ModelYear) != "2003" || got.ErrorCode != "0" || got.Cached || got.Source != client.VinDecodeResultSourceVpic {
		t.Errorf("DecodeVin = %+v, want the 2003 Honda Accord from vPIC, not cached", *got)
	}
	if got.Raw != nil {
		t.Errorf("DecodeVin without raw: raw = %v, want absent", *got.Raw)
	}
	if h := res.Headers200; h == nil || h.XCache != "MISS" || h.XDataSource != "NHTSA vPIC" || h.XRequestId == "" {
		t.Errorf("DecodeVin headers = %+v, want X-Cache MISS, X-Data-Source NHTSA vPIC and a request id", h)
	}

	// Without the secret: the typed 403 body.
	res, err = c.DecodeVinWithResponse(ctx, &client.DecodeVinParams{Vin: vpictest.VINHondaAccord})
	if err != nil {
		t.Fatal(err)
	}
	if res.JSON403 == nil || res.JSON403.Error != client.ForbiddenErrorFORBIDDEN || res.JSON403.Status != client.ForbiddenStatusN403 {
		t.Errorf("DecodeVin without secret = %d %s, want the 403 FORBIDDEN body", res.StatusCode(), res.Body)
	}

	health, err := c.GetHealthWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if health.JSON200 == nil {
		t.Fatalf("GetHealth = %d %s, want 200", health.StatusCode(), health.Body)
	}
	if h := health.JSON200; h.Status != client.GetHealth200JSONResponseBodyStatusOk || h.Version == "" || h.Cache == nil || h.Cache.Entries != 1 {
		t.Errorf("GetHealth = %s, want ok with one cached VIN", health.Body)
	}
}

func strOf(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
