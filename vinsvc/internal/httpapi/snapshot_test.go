package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gatewayapis/vinsvc/internal/decoding"
	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// stubSnapshot answers every VIN whose WMI is 1HG with a recorded-looking
// flat record, dated like the vPIC lite build of March 2026.
type stubSnapshot struct{}

var _ decoding.Snapshot = stubSnapshot{}

func (stubSnapshot) Decode(_ context.Context, v string) (vin.Decoded, error) {
	if !strings.HasPrefix(v, "1HG") {
		return vin.Decoded{}, vin.NewKindError(vin.ErrUpstream, "wmi not in the vPIC snapshot")
	}
	raw, _ := json.Marshal(map[string]string{"ErrorCode": "0", "ErrorText": "0 - VIN decoded clean. Check Digit (9th position) is correct",
		"Make": "HONDA", "Manufacturer": "AMERICAN HONDA MOTOR CO., INC.", "Model": "Accord", "ModelYear": "2003",
		"VIN": v, "VehicleType": "Passenger Car", "BodyClass": "Coupe"})
	rec, err := vin.ParseFlatRecord(raw)
	if err != nil {
		return vin.Decoded{}, err
	}
	return rec.Decoded(v)
}

func (stubSnapshot) Date() time.Time { return time.Date(2026, 3, 12, 0, 0, 0, 0, time.UTC) }

const snapshotSource = "NHTSA vPIC snapshot 2026-03-12"

func TestDecodeFromSnapshot(t *testing.T) {
	en := newEnv(t, withSnapshot(stubSnapshot{}, vin.SnapshotFallback))
	en.up.Script(vpictest.Reply{Status: 503}) // vPIC fails (no retries here)
	rec := en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord + "&raw=true"})
	if rec.Code != http.StatusOK || rec.Header().Get("X-Data-Source") != snapshotSource || rec.Header().Get("X-Cache") != "MISS" {
		t.Fatalf("decode with vPIC down = %d %q %q %s; want 200 from the snapshot", rec.Code,
			rec.Header().Get("X-Data-Source"), rec.Header().Get("X-Cache"), rec.Body)
	}
	golden(t, "decode-200-snapshot", rec.Body.Bytes())

	// The cached answer keeps its source.
	rec = en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHondaAccord})
	var body struct {
		Cached bool   `json:"cached"`
		Source string `json:"source"`
	}
	decode(t, rec, &body)
	if !body.Cached || body.Source != "snapshot" || rec.Header().Get("X-Data-Source") != snapshotSource {
		t.Errorf("cached snapshot answer = %+v, X-Data-Source %q", body, rec.Header().Get("X-Data-Source"))
	}

	// A VIN the snapshot does not know fails as before.
	en.up.Script(vpictest.Reply{Status: 503})
	wantError(t, en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINVWTiguan}), http.StatusInternalServerError, "UPSTREAM_ERROR")

	// vPIC's own answers say so.
	rec = en.do(t, request{target: "/v1/decode?vin=" + vpictest.VINHyundaiIoniq})
	decode(t, rec, &body)
	if body.Source != "vpic" || rec.Header().Get("X-Data-Source") != "NHTSA vPIC" {
		t.Errorf("vPIC answer: source %q, X-Data-Source %q", body.Source, rec.Header().Get("X-Data-Source"))
	}

	metrics := en.do(t, request{target: "/metrics", noAuth: true}).Body.String()
	for _, want := range []string{`vinsvc_decodes_total{source="snapshot"} 1`, `vinsvc_decodes_total{source="vpic"} 1`, `vinsvc_decodes_total{source="cache"} 1`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestBatchDataSource(t *testing.T) {
	en := newEnv(t, withSnapshot(stubSnapshot{}, vin.SnapshotFallback))
	batch := func(vins ...string) *http.Response {
		t.Helper()
		body, _ := json.Marshal(map[string][]string{"vins": vins})
		rec := en.do(t, request{method: http.MethodPost, target: "/v1/batch", body: string(body)})
		if rec.Code != http.StatusOK {
			t.Fatalf("batch = %d %s", rec.Code, rec.Body)
		}
		return rec.Result()
	}
	// vPIC down: every decoded item from the snapshot (the unknown WMI and
	// the invalid VIN are errors, not decoded items).
	en.up.Script(vpictest.Reply{Status: 503})
	if got := batch("1HGCM82633A004352", "1HGCM82633A004353", vpictest.VINVWTiguan, "bad").Header.Get("X-Data-Source"); got != snapshotSource {
		t.Errorf("all-snapshot batch X-Data-Source = %q, want %q", got, snapshotSource)
	}
	// Mixed: vPIC's name.
	if got := batch("1HGCM82633A004352", vpictest.VINHyundaiIoniq).Header.Get("X-Data-Source"); got != "NHTSA vPIC" {
		t.Errorf("mixed batch X-Data-Source = %q, want NHTSA vPIC", got)
	}
}

func TestHealthSnapshot(t *testing.T) {
	for _, tt := range []struct {
		name       string
		opts       []option
		status     int
		wantStatus string
		snapshot   string
	}{
		{"no snapshot", nil, 503, "degraded", `{"mode":"off","available":false,"date":null,"age_days":null}`},
		{"snapshot answers", []option{withSnapshot(stubSnapshot{}, vin.SnapshotFallback)}, 200, "ok",
			`{"mode":"fallback","available":true,"date":"2026-03-12","age_days":258,"warning":"the vPIC snapshot is 258 days old (more than 120): refresh it (docs/operations.md)"}`},
		{"snapshot off", []option{withSnapshot(stubSnapshot{}, vin.SnapshotOff)}, 503, "degraded", `{"mode":"off","available":true,"date":"2026-03-12","age_days":258,"warning":"the vPIC snapshot is 258 days old (more than 120): refresh it (docs/operations.md)"}`},
		{"fallback without a file", []option{withSnapshot(nil, vin.SnapshotFallback)}, 503, "degraded", `{"mode":"fallback","available":false,"date":null,"age_days":null}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			en := newEnv(t, tt.opts...)
			en.up.Close() // vPIC unreachable
			en.mon.Check(context.Background())
			rec := en.do(t, request{target: "/v1/health", noAuth: true})
			var h struct {
				Status   string          `json:"status"`
				Upstream json.RawMessage `json:"upstream"`
				Snapshot json.RawMessage `json:"snapshot"`
			}
			decode(t, rec, &h)
			if rec.Code != tt.status || h.Status != tt.wantStatus || string(h.Snapshot) != tt.snapshot ||
				!strings.Contains(string(h.Upstream), `"upstream_catalog":"unreachable"`) {
				t.Errorf("health = %d %s, want %d %s with snapshot %s", rec.Code, rec.Body, tt.status, tt.wantStatus, tt.snapshot)
			}
		})
	}
}

// TestSnapshotLoading: while the snapshot is still being read at start the
// pod is not ready ({"status":"loading"}), health is not degraded for it,
// and in only mode a decode waits for the load rather than failing
// (decisions.md, "vinsvc: snapshot answers as vPIC gives them"); once
// loaded, the pod is ready and the decode answered from the snapshot. It
// runs on synctest's clock: the decode is seen waiting once every
// goroutine is blocked, however long the wait (a minute here).
func TestSnapshotLoading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		en := newEnv(t, withSnapshot(nil, vin.SnapshotOnly))
		en.dec.Snapshots().Expect(time.Minute)
		en.up.Close() // only mode never calls vPIC; health sees it down
		en.mon.Check(context.Background())

		rec := en.do(t, request{target: "/readyz", noAuth: true})
		if rec.Code != http.StatusServiceUnavailable || strings.TrimSpace(rec.Body.String()) != `{"status":"loading","reason":"vPIC snapshot loading"}` {
			t.Errorf("readyz while loading = %d %s, want 503 loading", rec.Code, rec.Body)
		}
		rec = en.do(t, request{target: "/v1/health", noAuth: true})
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"loading":true`) {
			t.Errorf("health while loading = %d %s, want 200 with loading true", rec.Code, rec.Body)
		}

		answered := make(chan *httptest.ResponseRecorder, 1)
		go func() { answered <- en.do(t, request{target: "/v1/decode?vin=1HGCM82633A004352"}) }()
		synctest.Wait() // the decode is blocked: waiting for the load, or gone
		select {
		case rec := <-answered:
			t.Fatalf("decode answered %d %s before the snapshot loaded", rec.Code, rec.Body)
		default:
		}
		en.dec.Snapshots().Loaded(stubSnapshot{})
		rec = <-answered
		if rec.Code != http.StatusOK || rec.Header().Get("X-Data-Source") != "NHTSA vPIC snapshot 2026-03-12" {
			t.Errorf("decode after the load = %d %q %s, want 200 from the snapshot", rec.Code, rec.Header().Get("X-Data-Source"), rec.Body)
		}
		if rec := en.do(t, request{target: "/readyz", noAuth: true}); rec.Code != http.StatusOK {
			t.Errorf("readyz after the load = %d %s, want 200", rec.Code, rec.Body)
		}
		if rec := en.do(t, request{target: "/v1/health", noAuth: true}); strings.Contains(rec.Body.String(), `"loading"`) {
			t.Errorf("health after the load still says loading: %s", rec.Body)
		}
	})
}

// TestSnapshotLoadBounded: a load that does not end in time, or fails,
// leaves an only-mode decode the upstream error it had before, after at
// most the wait; a failed load makes the pod ready (its cache answers).
// On synctest's clock, the waits are measured exactly.
func TestSnapshotLoadBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		en := newEnv(t, withSnapshot(nil, vin.SnapshotOnly))
		en.up.Close() // only mode never calls vPIC
		en.dec.Snapshots().Expect(300 * time.Millisecond)
		start := time.Now()
		rec := en.do(t, request{target: "/v1/decode?vin=1HGCM82633A004352"})
		if took := time.Since(start); rec.Code != http.StatusInternalServerError || took != 300*time.Millisecond {
			t.Errorf("decode during a stuck load = %d after %v, want 500 UPSTREAM_ERROR after the 300ms wait", rec.Code, took)
		}
		en.dec.Snapshots().Loaded(nil) // the file could not be opened
		if rec := en.do(t, request{target: "/readyz", noAuth: true}); rec.Code != http.StatusOK {
			t.Errorf("readyz after a failed load = %d %s, want 200", rec.Code, rec.Body)
		}
		start = time.Now()
		if rec := en.do(t, request{target: "/v1/decode?vin=1HGCM82633A004352"}); rec.Code != http.StatusInternalServerError || time.Since(start) != 0 {
			t.Errorf("decode after a failed load = %d after %v, want 500 at once", rec.Code, time.Since(start))
		}
	})
}
