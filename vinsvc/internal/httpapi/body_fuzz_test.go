package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// FuzzRequestBody sends any body to POST /v1/batch through the real router,
// whole or broken off after cut bytes (a client whose body fails to
// arrive), with any of a few content types: the answer is never a 5xx,
// always vinsvc's JSON, and a body that broke off is the client's 400
// (decisions.md, "Both services: hostile input answered, never a 5xx").
// make fuzz runs it with the race detector.
func FuzzRequestBody(f *testing.F) {
	en := newEnv(f, quiet())
	for _, s := range []string{`{"vins":["1HGCM82633A004352"]}`, `{"vins":["1HGCM82633A004352","bad"]}`, `{"vins":[]}`, `{`, "", "\x00\xff"} {
		f.Add([]byte(s), uint16(0xffff), uint8(0))
		f.Add([]byte(s), uint16(len(s)/2), uint8(1))
	}
	types := []string{"application/json", "application/json; charset=utf-8", "", "text/plain", "application/x-www-form-urlencoded"}
	f.Fuzz(func(t *testing.T, body []byte, cut uint16, ctype uint8) {
		var r io.Reader = bytes.NewReader(body)
		broken := int(cut) < len(body)
		if broken {
			r = io.MultiReader(bytes.NewReader(body[:cut]), iotest.ErrReader(io.ErrUnexpectedEOF))
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/batch", r)
		if ct := types[int(ctype)%len(types)]; ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("X-Gateway-Proxy-Secret", secret)
		rec := httptest.NewRecorder()
		en.e.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("POST /v1/batch %q (broken: %v) = %d %s", body, broken, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("POST /v1/batch %q = %d with a body that is not JSON: %q", body, rec.Code, rec.Body)
		}
		if broken && rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("POST /v1/batch broken after %d of %d bytes = %d, want 400", cut, len(body), rec.Code)
		}
	})
}
