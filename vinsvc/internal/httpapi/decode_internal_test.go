package httpapi

import (
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/labstack/echo/v4"
)

// FuzzDecodeQuery holds decodeQuery's in-place reading of the query to what
// url.ParseQuery (Echo's QueryParams) gives the handler.
func FuzzDecodeQuery(f *testing.F) {
	for _, q := range []string{
		"", "vin=1HGCM82633A004352", "vin=1HGCM82633A004352&raw=true", "raw=1&vin=a&vin=b", "vin", "vin=",
		"=x&&vin=a=b", "VIN=a", "vin=a;raw=1", "vin=a%20b&raw=%31", "vin=a+b", "vin=%zz&vin=c", "raw&raw=0&raw",
	} {
		f.Add(q)
	}
	e := echo.New()
	f.Fuzz(func(t *testing.T, q string) {
		req := httptest.NewRequest("GET", "/v1/decode", nil)
		req.URL.RawQuery = q
		vins, raw := decodeQuery(e.NewContext(req, httptest.NewRecorder()))
		all, _ := url.ParseQuery(q)
		if want := paramOf(all["vin"]); vins != want {
			t.Errorf("decodeQuery(%q) vin = %+v, want %+v", q, vins, want)
		}
		if want := paramOf(all["raw"]); raw != want {
			t.Errorf("decodeQuery(%q) raw = %+v, want %+v", q, raw, want)
		}
	})
}
