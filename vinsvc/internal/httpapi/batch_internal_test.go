package httpapi

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/gatewayapis/shared/httperr"
)

// FuzzParseBatchBody: the batch body parser never panics, accepts only 1 to
// 50 strings, and rejects everything else with a 400 BAD_REQUEST.
func FuzzParseBatchBody(f *testing.F) {
	for _, s := range []string{
		`{"vins":["1HGCM82633A004352"]}`,
		`{"vins":["1HGCM82633A004352", " 1hgcm82633a004352 ", "bad", ""]}`,
		`{"vins":[]}`, `{"vins":null}`, `{"vins":[null]}`, `{"vins":[1]}`, `{"vins":[{}]}`, `{"vins":"x"}`,
		`[]`, `null`, `""`, ``, `{`, `{"vins":["a"]} trailing`, `{"VINS":["1HGCM82633A004352"]}`,
		`{"vins":["` + strings.Repeat("A", 1000) + `"]}`, "{\"vins\":[\"\\u0000\"]}", `{"vins":["\ud800"]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		vins, err := parseBatchBody(body)
		if err != nil {
			var he *httperr.Error
			if !errors.As(err, &he) || he.Status != http.StatusBadRequest || he.Code != codeBadRequest || he.Message == "" {
				t.Fatalf("parseBatchBody(%q) error %#v, want a 400 BAD_REQUEST", body, err)
			}
			if vins != nil {
				t.Fatalf("parseBatchBody(%q) returned items with an error", body)
			}
			return
		}
		if len(vins) < 1 || len(vins) > MaxBatch {
			t.Fatalf("parseBatchBody(%q) accepted %d items", body, len(vins))
		}
	})
}
