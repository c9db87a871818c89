package httpapi

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
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

// TestSetLimitHeaders: both values, of any length, each in a slice of its
// own that appending to cannot spill into the other.
func TestSetLimitHeaders(t *testing.T) {
	for _, tt := range []struct{ limit, remaining int }{{60, 0}, {1000000000, 999999999}, {3, 12345}} {
		h := http.Header{}
		setLimitHeaders(h, tt.limit, tt.remaining)
		if got, want := h.Get("X-RateLimit-Limit"), strconv.Itoa(tt.limit); got != want {
			t.Errorf("limit = %q, want %q", got, want)
		}
		if got, want := h.Get("X-RateLimit-Remaining"), strconv.Itoa(tt.remaining); got != want {
			t.Errorf("remaining = %q, want %q", got, want)
		}
		h.Add("X-RateLimit-Limit", "extra")
		if got := h.Values("X-RateLimit-Remaining"); len(got) != 1 || got[0] != strconv.Itoa(tt.remaining) {
			t.Errorf("after adding to the limit, remaining = %q", got)
		}
	}
}
