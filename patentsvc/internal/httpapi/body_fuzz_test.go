package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// FuzzRequestBody sends any body to each route that reads one, through the
// real router with an admin's token, whole or broken off after cut bytes
// (a client whose body fails to arrive), with any of a few content types:
// the answer is never a 5xx, always patentsvc's JSON, and a body that broke
// off is the client's 400 (decisions.md, "Both services: hostile input
// answered, never a 5xx"). make fuzz runs it with the race detector.
func FuzzRequestBody(f *testing.F) {
	en := newEnv(f)
	admin, token := en.admin(f)
	routes := []struct{ method, target string }{
		{http.MethodPost, "/auth/register"},
		{http.MethodPost, "/auth/login"},
		{http.MethodPost, "/auth/refresh"},
		{http.MethodPost, "/analyze/batch"},
		{http.MethodPost, "/analyze/batch/async"},
		{http.MethodPost, "/admin/tracked"},
		{http.MethodPatch, fmt.Sprintf("/admin/users/%d/role", admin.ID)},
	}
	for i, s := range []string{`{"email":"a@example.com","password":"correct horse battery"}`, `{"refresh_token":"x.y.z"}`,
		`{"companies":["Apple Inc."],"max_workers":1}`, `{"company_name":"Oticon"}`, `{"role":"user"}`, `{`, "", "\x00\xff", `[]`, `{"companies":[1]}`} {
		f.Add([]byte(s), uint16(0xffff), uint8(i), uint8(0))
		f.Add([]byte(s), uint16(len(s)/2), uint8(i+1), uint8(1))
	}
	types := []string{"application/json", "application/json; charset=utf-8", "", "text/plain"}
	f.Fuzz(func(t *testing.T, body []byte, cut uint16, route, ctype uint8) {
		rt := routes[int(route)%len(routes)]
		var r io.Reader = bytes.NewReader(body)
		broken := int(cut) < len(body)
		if broken {
			r = io.MultiReader(bytes.NewReader(body[:cut]), iotest.ErrReader(io.ErrUnexpectedEOF))
		}
		req := httptest.NewRequest(rt.method, en.root+rt.target, r)
		if ct := types[int(ctype)%len(types)]; ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.RemoteAddr = en.freshAddr() // the rate-limited routes count per client
		rec := httptest.NewRecorder()
		en.srv.ServeHTTP(rec, req)
		if rec.Code >= 500 {
			t.Fatalf("%s %s %q (broken: %v) = %d %s", rt.method, rt.target, body, broken, rec.Code, rec.Body)
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("%s %s %q = %d with a body that is not JSON: %q", rt.method, rt.target, body, rec.Code, rec.Body)
		}
		if broken && rec.Code != http.StatusBadRequest && rec.Code != http.StatusRequestEntityTooLarge {
			t.Fatalf("%s %s broken after %d of %d bytes = %d %s, want 400", rt.method, rt.target, cut, len(body), rec.Code, rec.Body)
		}
	})
}
