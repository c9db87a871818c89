package vpic_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/gatewayapis/vinsvc/internal/vin"
	"github.com/gatewayapis/vinsvc/internal/vpic"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// vinNoData is a valid VIN without a recorded answer: the fake answers it
// with vPIC's code 8 "no detailed data" record.
const vinNoData = "1G1ZT53826F109149"

func ptr[T any](v T) *T { return &v }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newClient returns a client with a generous pace, so that only the pacing
// test is paced.
func newClient(baseURL string, timeout time.Duration, retries int) *vpic.Client {
	return vpic.NewClient(baseURL, timeout, retries, 1000, discardLogger(), nil)
}

// newServer starts an httptest server for odd upstream behaviours.
func newServer(tb testing.TB, h http.HandlerFunc) *httptest.Server {
	tb.Helper()
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return srv
}

// hostOf returns the host:port of a test server URL.
func hostOf(tb testing.TB, rawURL string) string {
	tb.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		tb.Fatalf("url.Parse(%q): %v", rawURL, err)
	}
	return u.Host
}

// writeEnvelope answers a vPIC flat envelope holding recs.
func writeEnvelope(w http.ResponseWriter, recs []map[string]any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"Count": len(recs), "Message": "Results returned successfully", "SearchCriteria": "", "Results": recs,
	})
}

// batchVINs reads the VINs of a batch POST's DATA field.
func batchVINs(r *http.Request) []string {
	if err := r.ParseForm(); err != nil {
		return nil
	}
	var vins []string
	for _, v := range strings.Split(r.PostForm.Get("DATA"), ";") {
		if v = strings.TrimSpace(v); v != "" {
			vins = append(vins, v)
		}
	}
	return vins
}

// fixtureEnvelope is the fake's answer for v as vPIC would send it.
func fixtureEnvelope(tb testing.TB, v string) string {
	tb.Helper()
	b, err := json.Marshal(map[string]any{"Count": 1, "Message": "Results returned successfully", "SearchCriteria": "VIN(s): " + v, "Results": []any{vpictest.Record(v)}})
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

type recordedCase struct {
	name string
	vin  string
	keys int
	want vin.Result
}

// recordedCases are the expected mappings of the recorded answers, written
// out by hand from testdata/ and the mapping rules.
func recordedCases() []recordedCase {
	return []recordedCase{
		{
			name: "ford f-150 2021 schema",
			vin:  vpictest.VINFordF150,
			keys: 145,
			want: vin.Result{
				VIN:                  vpictest.VINFordF150,
				Make:                 ptr("FORD"),
				Model:                ptr("F-150"),
				ModelYear:            ptr("2021"),
				Trim:                 ptr("SuperCrew-SSV"),
				Series:               ptr("F-Series"),
				BodyClass:            ptr("Pickup"),
				DriveType:            ptr("4WD/4-Wheel Drive/4x4"),
				EngineDisplacementCC: ptr(3500.0),
				EngineDisplacementL:  ptr(3.5),
				EngineCylinders:      ptr(6),
				FuelTypePrimary:      ptr("Gasoline"),
				PlantCity:            ptr("DEARBORN"),
				PlantState:           ptr("MICHIGAN"),
				PlantCountry:         ptr("UNITED STATES (USA)"),
				ManufacturerName:     ptr("FORD MOTOR COMPANY, USA"),
				VehicleType:          ptr("TRUCK"),
				ErrorCode:            "0",
			},
		},
		{
			name: "honda accord",
			vin:  vpictest.VINHondaAccord,
			keys: 150,
			want: vin.Result{
				VIN:                  vpictest.VINHondaAccord,
				Make:                 ptr("HONDA"),
				Model:                ptr("Accord"),
				ModelYear:            ptr("2003"),
				Trim:                 ptr("EX-V6"),
				BodyClass:            ptr("Coupe"),
				EngineDisplacementCC: ptr(2998.832712),
				EngineDisplacementL:  ptr(2.998832712),
				EngineCylinders:      ptr(6),
				FuelTypePrimary:      ptr("Gasoline"),
				TransmissionStyle:    ptr("Automatic"),
				TransmissionSpeeds:   ptr("5"),
				PlantCity:            ptr("MARYSVILLE"),
				PlantState:           ptr("OHIO"),
				PlantCountry:         ptr("UNITED STATES (USA)"),
				ManufacturerName:     ptr("AMERICAN HONDA MOTOR CO., INC."),
				VehicleType:          ptr("PASSENGER CAR"),
				ErrorCode:            "0",
			},
		},
		{
			name: "vw tiguan 2026 schema",
			vin:  vpictest.VINVWTiguan,
			keys: 154,
			want: vin.Result{
				VIN:                  vpictest.VINVWTiguan,
				Make:                 ptr("VOLKSWAGEN"),
				Model:                ptr("Tiguan"),
				ModelYear:            ptr("2022"),
				Trim:                 ptr("SE"),
				BodyClass:            ptr("Sport Utility Vehicle [SUV]/Multipurpose Vehicle [MPV]"),
				EngineDisplacementCC: ptr(2000.0),
				EngineDisplacementL:  ptr(2.0),
				EngineCylinders:      ptr(4),
				FuelTypePrimary:      ptr("Gasoline"),
				TransmissionStyle:    ptr("Automatic"),
				TransmissionSpeeds:   ptr("8"),
				PlantCity:            ptr("PUEBLA"),
				PlantCountry:         ptr("MEXICO"),
				ManufacturerName:     ptr("VOLKSWAGEN DE MEXICO SA DE CV"),
				VehicleType:          ptr("MULTIPURPOSE PASSENGER VEHICLE (MPV)"),
				ErrorCode:            "0",
			},
		},
		{
			name: "hyundai ioniq 2026 schema",
			vin:  vpictest.VINHyundaiIoniq,
			keys: 154,
			want: vin.Result{
				VIN:                  vpictest.VINHyundaiIoniq,
				Make:                 ptr("HYUNDAI"),
				Model:                ptr("Ioniq"),
				ModelYear:            ptr("2017"),
				Trim:                 ptr("SEL"),
				BodyClass:            ptr("Hatchback/Liftback/Notchback"),
				EngineDisplacementCC: ptr(1600.0),
				EngineDisplacementL:  ptr(1.6),
				EngineCylinders:      ptr(4),
				FuelTypePrimary:      ptr("Gasoline"),
				PlantCity:            ptr("ULSAN"),
				PlantCountry:         ptr("SOUTH KOREA"),
				ManufacturerName:     ptr("HYUNDAI MOTOR CO"),
				VehicleType:          ptr("PASSENGER CAR"),
				ErrorCode:            "0",
			},
		},
		{
			name: "bmw bad check digit",
			vin:  vpictest.VINBMWCheckDigit,
			keys: 150,
			want: vin.Result{
				VIN:                  vpictest.VINBMWCheckDigit,
				Make:                 ptr("BMW"),
				Model:                ptr("328i"),
				ModelYear:            ptr("2012"),
				Series:               ptr("3-Series"),
				BodyClass:            ptr("Sedan/Saloon"),
				EngineDisplacementCC: ptr(2000.0),
				EngineDisplacementL:  ptr(2.0),
				EngineCylinders:      ptr(4),
				FuelTypePrimary:      ptr("Gasoline"),
				PlantCity:            ptr("MUNICH"),
				PlantCountry:         ptr("GERMANY"),
				ManufacturerName:     ptr("BMW AG"),
				VehicleType:          ptr("PASSENGER CAR"),
				ErrorCode:            "1",
				ErrorText:            ptr("1 - Check Digit (9th position) does not calculate properly"),
			},
		},
		{
			name: "no detailed data",
			vin:  vinNoData,
			keys: 150,
			want: vin.Result{
				VIN:       vinNoData,
				ErrorCode: "8",
				ErrorText: ptr("8 - No detailed data available currently"),
			},
		},
	}
}

// sentRecords fetches u from the fake directly and returns the records as
// the fake sends them, byte for byte.
func sentRecords(tb testing.TB, u string) []json.RawMessage {
	tb.Helper()
	resp, err := http.Get(u)
	if err != nil {
		tb.Fatalf("GET %s: %v", u, err)
	}
	defer resp.Body.Close()
	var env struct{ Results []json.RawMessage }
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		tb.Fatalf("GET %s: decode: %v", u, err)
	}
	return env.Results
}

func TestDecodeRecorded(t *testing.T) {
	for _, tt := range recordedCases() {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)

			got, err := c.Decode(t.Context(), tt.vin)
			if err != nil {
				t.Fatalf("Decode(%q) error = %v, want nil", tt.vin, err)
			}
			if diff := cmp.Diff(tt.want, got.Result); diff != "" {
				t.Errorf("Decode(%q) result mismatch (-want +got):\n%s", tt.vin, diff)
			}

			var raw map[string]any
			if err := json.Unmarshal(got.Raw, &raw); err != nil {
				t.Fatalf("Decode(%q) Raw is not a JSON object: %v", tt.vin, err)
			}
			if len(raw) != tt.keys {
				t.Errorf("Decode(%q) Raw has %d keys, want %d", tt.vin, len(raw), tt.keys)
			}
			if diff := cmp.Diff(vpictest.Record(tt.vin), raw); diff != "" {
				t.Errorf("Decode(%q) Raw differs from the recorded record (-want +got):\n%s", tt.vin, diff)
			}
			sent := sentRecords(t, fake.BaseURL()+"/DecodeVinValues/"+tt.vin+"?format=json")
			if len(sent) != 1 || !bytes.Equal(sent[0], got.Raw) {
				t.Errorf("Decode(%q) Raw = %s, want the record as sent %s", tt.vin, got.Raw, sent)
			}
		})
	}
}

// TestDecodeRawFromIndentedAnswer: an answer laid out with white space
// (the recorded files) gives the record with insignificant white space
// removed and every key and value unchanged.
func TestDecodeRawFromIndentedAnswer(t *testing.T) {
	body, err := os.ReadFile("vpictest/testdata/decode_" + vpictest.VINFordF150 + ".json")
	if err != nil {
		t.Fatal(err)
	}
	var env struct{ Results []json.RawMessage }
	if err := json.Unmarshal(body, &env); err != nil || len(env.Results) != 1 {
		t.Fatalf("fixture: %v", err)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, env.Results[0]); err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	})
	c := newClient(srv.URL, 5*time.Second, 0)
	got, err := c.Decode(t.Context(), vpictest.VINFordF150)
	if err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINFordF150, err)
	}
	if !bytes.Equal(want.Bytes(), got.Raw) {
		t.Errorf("Decode(%q) Raw = %s, want %s", vpictest.VINFordF150, got.Raw, want.Bytes())
	}
}

func TestDecodeRawKeepsValuesUntrimmed(t *testing.T) {
	fake := vpictest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	got, err := c.Decode(t.Context(), vpictest.VINFordF150)
	if err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINFordF150, err)
	}
	if want := `"VehicleType":"TRUCK "`; !bytes.Contains(got.Raw, []byte(want)) {
		t.Errorf("Decode(%q) Raw = %s, want it to contain %s", vpictest.VINFordF150, got.Raw, want)
	}
	if got.Result.VehicleType == nil || *got.Result.VehicleType != "TRUCK" {
		t.Errorf("Decode(%q) VehicleType = %v, want %q", vpictest.VINFordF150, got.Result.VehicleType, "TRUCK")
	}
}

// recordingServer puts a server in front of the fake that records the
// request headers the fake does not keep.
func recordingServer(t *testing.T, fake *vpictest.Server) (baseURL string, headers func() []http.Header) {
	t.Helper()
	var mu sync.Mutex
	var seen []http.Header
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		fake.Config.Handler.ServeHTTP(w, r)
	})
	return srv.URL + "/api/vehicles", func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(seen)
	}
}

var ignoreAt = cmpopts.IgnoreFields(vpictest.Call{}, "At")

func TestDecodeRequest(t *testing.T) {
	for _, tt := range []struct {
		name string
		base func(*vpictest.Server) string
	}{
		{"base url", func(s *vpictest.Server) string { return s.BaseURL() }},
		{"base url with trailing slash", func(s *vpictest.Server) string { return s.BaseURL() + "/" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			c := newClient(tt.base(fake), 5*time.Second, 0)
			if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
				t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
			}
			want := []vpictest.Call{{
				Method:   http.MethodGet,
				Path:     "/api/vehicles/DecodeVinValues/" + vpictest.VINHondaAccord,
				RawQuery: "format=json",
				VINs:     []string{vpictest.VINHondaAccord},
			}}
			if diff := cmp.Diff(want, fake.Calls(), ignoreAt); diff != "" {
				t.Errorf("Decode(%q) requests mismatch (-want +got):\n%s", vpictest.VINHondaAccord, diff)
			}
		})
	}
}

func TestDecodeBatchRequest(t *testing.T) {
	fake := vpictest.New(t)
	base, headers := recordingServer(t, fake)
	c := newClient(base, 5*time.Second, 0)

	cases := recordedCases()
	var vins []string
	for _, tc := range cases {
		vins = append(vins, tc.vin)
	}
	outs, err := c.DecodeBatch(t.Context(), vins)
	if err != nil {
		t.Fatalf("DecodeBatch(%q) error = %v, want nil", vins, err)
	}

	want := []vpictest.Call{{
		Method: http.MethodPost,
		Path:   "/api/vehicles/DecodeVINValuesBatch/",
		Form:   url.Values{"DATA": {strings.Join(vins, ";")}, "format": {"json"}},
		VINs:   vins,
	}}
	if diff := cmp.Diff(want, fake.Calls(), ignoreAt); diff != "" {
		t.Errorf("DecodeBatch(%q) requests mismatch (-want +got):\n%s", vins, diff)
	}
	hs := headers()
	if len(hs) != 1 {
		t.Fatalf("DecodeBatch(%q) made %d requests, want 1", vins, len(hs))
	}
	if got, want := hs[0].Get("Content-Type"), "application/x-www-form-urlencoded"; got != want {
		t.Errorf("DecodeBatch(%q) Content-Type = %q, want %q", vins, got, want)
	}

	if len(outs) != len(vins) {
		t.Fatalf("DecodeBatch(%q) returned %d outcomes, want %d", vins, len(outs), len(vins))
	}
	for i, tc := range cases {
		if outs[i].Err != nil {
			t.Errorf("DecodeBatch outcome %d (%s) Err = %v, want nil", i, tc.vin, outs[i].Err)
			continue
		}
		if diff := cmp.Diff(tc.want, outs[i].Result); diff != "" {
			t.Errorf("DecodeBatch outcome %d (%s) mismatch (-want +got):\n%s", i, tc.vin, diff)
		}
		var raw map[string]any
		if err := json.Unmarshal(outs[i].Raw, &raw); err != nil || len(raw) != tc.keys {
			t.Errorf("DecodeBatch outcome %d (%s) Raw has %d keys (err %v), want %d", i, tc.vin, len(raw), err, tc.keys)
		}
	}
}

func TestDecodeSendsHeaders(t *testing.T) {
	fake := vpictest.New(t)
	base, headers := recordingServer(t, fake)
	c := newClient(base, 5*time.Second, 0)
	if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
	}
	hs := headers()
	if len(hs) != 1 {
		t.Fatalf("Decode made %d requests, want 1", len(hs))
	}
	if got := hs[0].Get("Accept"); got != "application/json" {
		t.Errorf("Decode Accept = %q, want %q", got, "application/json")
	}
	if got := hs[0].Get("User-Agent"); !strings.HasPrefix(got, "vinsvc/") {
		t.Errorf("Decode User-Agent = %q, want a vinsvc/ agent", got)
	}
}

func TestDecodeBatchSize(t *testing.T) {
	many := func(n int) []string {
		vins := make([]string, n)
		for i := range vins {
			vins[i] = fmt.Sprintf("1HGCM82633A%06d", i)
		}
		return vins
	}
	for _, tt := range []struct {
		name      string
		vins      []string
		wantErr   bool
		wantCalls int
	}{
		{"none", nil, true, 0},
		{"one", many(1), false, 1},
		{"max", many(vpic.MaxBatch), false, 1},
		{"over max", many(vpic.MaxBatch + 1), true, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			outs, err := c.DecodeBatch(t.Context(), tt.vins)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodeBatch(%d vins) error = %v, want error %t", len(tt.vins), err, tt.wantErr)
			}
			if got := fake.CallCount(); got != tt.wantCalls {
				t.Errorf("DecodeBatch(%d vins) made %d calls, want %d", len(tt.vins), got, tt.wantCalls)
			}
			if tt.wantErr {
				return
			}
			if len(outs) != len(tt.vins) {
				t.Fatalf("DecodeBatch(%d vins) returned %d outcomes", len(tt.vins), len(outs))
			}
			for i, o := range outs {
				if o.Err != nil || o.Result.VIN != tt.vins[i] {
					t.Errorf("DecodeBatch outcome %d = {VIN %q, Err %v}, want {VIN %q, Err nil}", i, o.Result.VIN, o.Err, tt.vins[i])
				}
			}
		})
	}
}

// TestDecodeBatchMatching answers batches in odd shapes from a custom
// upstream and checks each VIN gets its own record.
func TestDecodeBatchMatching(t *testing.T) {
	vins := []string{vpictest.VINFordF150, vpictest.VINHondaAccord, vpictest.VINVWTiguan}
	wantResults := map[string]vin.Result{}
	for _, tc := range recordedCases() {
		wantResults[tc.vin] = tc.want
	}
	for _, tt := range []struct {
		name    string
		answer  func(asked []string) []map[string]any
		wantErr []bool // per input VIN: its Outcome.Err wraps ErrUpstream
	}{
		{
			name: "input order",
			answer: func(asked []string) []map[string]any {
				var recs []map[string]any
				for _, v := range asked {
					recs = append(recs, vpictest.Record(v))
				}
				return recs
			},
			wantErr: []bool{false, false, false},
		},
		{
			name: "reversed order",
			answer: func(asked []string) []map[string]any {
				var recs []map[string]any
				for _, v := range slices.Backward(asked) {
					recs = append(recs, vpictest.Record(v))
				}
				return recs
			},
			wantErr: []bool{false, false, false},
		},
		{
			name: "echoed vin in other case and padded",
			answer: func(asked []string) []map[string]any {
				var recs []map[string]any
				for _, v := range slices.Backward(asked) {
					rec := vpictest.Record(v)
					rec["VIN"] = " " + strings.ToLower(v) + " "
					recs = append(recs, rec)
				}
				return recs
			},
			wantErr: []bool{false, false, false},
		},
		{
			name: "record missing for one vin",
			answer: func(asked []string) []map[string]any {
				return []map[string]any{vpictest.Record(asked[0]), vpictest.Record(asked[2])}
			},
			wantErr: []bool{false, true, false},
		},
		{
			name: "record for another vin instead",
			answer: func(asked []string) []map[string]any {
				return []map[string]any{vpictest.Record(asked[0]), vpictest.Record(vpictest.VINBMWCheckDigit), vpictest.Record(asked[2])}
			},
			wantErr: []bool{false, true, false},
		},
		{
			name: "no echoed vins paired by position",
			answer: func(asked []string) []map[string]any {
				var recs []map[string]any
				for _, v := range asked {
					rec := vpictest.Record(v)
					rec["VIN"] = ""
					recs = append(recs, rec)
				}
				return recs
			},
			wantErr: []bool{false, false, false},
		},
		{
			name: "one record without ErrorCode",
			answer: func(asked []string) []map[string]any {
				var recs []map[string]any
				for _, v := range asked {
					recs = append(recs, vpictest.Record(v))
				}
				delete(recs[2], "ErrorCode")
				return recs
			},
			wantErr: []bool{false, false, true},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				writeEnvelope(w, tt.answer(batchVINs(r)))
			})
			c := newClient(srv.URL, 5*time.Second, 0)
			outs, err := c.DecodeBatch(t.Context(), vins)
			if err != nil {
				t.Fatalf("DecodeBatch(%q) error = %v, want nil", vins, err)
			}
			if got := calls.Load(); got != 1 {
				t.Errorf("DecodeBatch(%q) made %d calls, want 1", vins, got)
			}
			if len(outs) != len(vins) {
				t.Fatalf("DecodeBatch(%q) returned %d outcomes, want %d", vins, len(outs), len(vins))
			}
			for i, v := range vins {
				o := outs[i]
				if tt.wantErr[i] {
					if !errors.Is(o.Err, vpic.ErrUpstream) {
						t.Errorf("DecodeBatch outcome %d (%s) Err = %v, want ErrUpstream", i, v, o.Err)
					}
					if diff := cmp.Diff(vin.Decoded{}, o.Decoded); diff != "" {
						t.Errorf("DecodeBatch outcome %d (%s) with Err has data (-want +got):\n%s", i, v, diff)
					}
					continue
				}
				if o.Err != nil {
					t.Errorf("DecodeBatch outcome %d (%s) Err = %v, want nil", i, v, o.Err)
					continue
				}
				if diff := cmp.Diff(wantResults[v], o.Result); diff != "" {
					t.Errorf("DecodeBatch outcome %d (%s) mismatch (-want +got):\n%s", i, v, diff)
				}
			}
		})
	}
}

func TestDecodePicksRecordForVIN(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeEnvelope(w, []map[string]any{vpictest.Record(vpictest.VINBMWCheckDigit), vpictest.Record(vpictest.VINHondaAccord)})
	})
	c := newClient(srv.URL, 5*time.Second, 0)
	got, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
	if err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
	}
	if got.Result.Make == nil || *got.Result.Make != "HONDA" {
		t.Errorf("Decode(%q) Make = %v, want HONDA (the record echoing the VIN)", vpictest.VINHondaAccord, got.Result.Make)
	}
}

// TestDecodeTolerantRecord: unknown keys are ignored, missing keys are nil,
// and non-string values are read.
func TestDecodeTolerantRecord(t *testing.T) {
	fake := vpictest.New(t)
	rec := vpictest.Record(vpictest.VINFordF150)
	rec["NewKey2027"] = "some new value"
	rec["NewObject2027"] = map[string]any{"a": []any{1, 2}}
	delete(rec, "Trim")
	delete(rec, "DriveType")
	rec["Series"] = nil
	rec["Model"] = "Not Applicable"
	rec["EngineCylinders"] = 6
	rec["DisplacementCC"] = 3500.5
	rec["DisplacementL"] = nil
	rec["ModelYear"] = 2021
	fake.SetRecord(vpictest.VINFordF150, rec)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)

	got, err := c.Decode(t.Context(), vpictest.VINFordF150)
	if err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINFordF150, err)
	}
	want := vin.Result{
		VIN:                  vpictest.VINFordF150,
		Make:                 ptr("FORD"),
		ModelYear:            ptr("2021"),
		BodyClass:            ptr("Pickup"),
		EngineDisplacementCC: ptr(3500.5),
		EngineCylinders:      ptr(6),
		FuelTypePrimary:      ptr("Gasoline"),
		PlantCity:            ptr("DEARBORN"),
		PlantState:           ptr("MICHIGAN"),
		PlantCountry:         ptr("UNITED STATES (USA)"),
		ManufacturerName:     ptr("FORD MOTOR COMPANY, USA"),
		VehicleType:          ptr("TRUCK"),
		ErrorCode:            "0",
	}
	if diff := cmp.Diff(want, got.Result); diff != "" {
		t.Errorf("Decode(%q) result mismatch (-want +got):\n%s", vpictest.VINFordF150, diff)
	}
	var raw map[string]any
	if err := json.Unmarshal(got.Raw, &raw); err != nil {
		t.Fatalf("Decode(%q) Raw is not JSON: %v", vpictest.VINFordF150, err)
	}
	if _, ok := raw["NewKey2027"]; !ok {
		t.Errorf("Decode(%q) Raw lacks the unknown key NewKey2027: %s", vpictest.VINFordF150, got.Raw)
	}
	if len(raw) != 145+2-2 {
		t.Errorf("Decode(%q) Raw has %d keys, want %d", vpictest.VINFordF150, len(raw), 145)
	}
}

// absent marks a key to delete from the record.
type absent struct{}

// TestDecodeFieldValues checks single values of a record against the
// mapping rules.
func TestDecodeFieldValues(t *testing.T) {
	cc := func(r vin.Result) any { return r.EngineDisplacementCC }
	liters := func(r vin.Result) any { return r.EngineDisplacementL }
	cyl := func(r vin.Result) any { return r.EngineCylinders }
	mk := func(r vin.Result) any { return r.Make }
	text := func(r vin.Result) any { return r.ErrorText }
	code := func(r vin.Result) any { return r.ErrorCode }
	mfr := func(r vin.Result) any { return r.ManufacturerName }
	var noFloat *float64
	var noInt *int
	var noString *string
	for _, tt := range []struct {
		name  string
		key   string
		value any
		get   func(vin.Result) any
		want  any
	}{
		{"cc one decimal", "DisplacementCC", "3500.0", cc, ptr(3500.0)},
		{"cc many decimals", "DisplacementCC", "2998.832712", cc, ptr(2998.832712)},
		{"cc padded", "DisplacementCC", " 1600.0 ", cc, ptr(1600.0)},
		{"cc json number", "DisplacementCC", 1998.5, cc, ptr(1998.5)},
		{"cc empty", "DisplacementCC", "", cc, noFloat},
		{"cc not applicable", "DisplacementCC", "Not Applicable", cc, noFloat},
		{"cc null", "DisplacementCC", nil, cc, noFloat},
		{"cc missing", "DisplacementCC", absent{}, cc, noFloat},
		{"cc text", "DisplacementCC", "about 2 liters", cc, noFloat},
		{"cc NaN", "DisplacementCC", "NaN", cc, noFloat},
		{"cc Inf", "DisplacementCC", "Inf", cc, noFloat},
		{"cc -Infinity", "DisplacementCC", "-Infinity", cc, noFloat},
		{"cc overflow", "DisplacementCC", "1e400", cc, noFloat},
		{"cc hex float", "DisplacementCC", "0x1p11", cc, noFloat},
		{"cc object", "DisplacementCC", map[string]any{"v": "1"}, cc, noFloat},
		{"liters", "DisplacementL", "2.0", liters, ptr(2.0)},
		{"liters two decimals", "DisplacementL", "2.00", liters, ptr(2.0)},
		{"cylinders", "EngineCylinders", "6", cyl, ptr(6)},
		{"cylinders json number", "EngineCylinders", 6, cyl, ptr(6)},
		{"cylinders with zero decimals", "EngineCylinders", "8.0", cyl, ptr(8)},
		{"cylinders fractional", "EngineCylinders", "6.5", cyl, noInt},
		{"cylinders empty", "EngineCylinders", "", cyl, noInt},
		{"cylinders null", "EngineCylinders", nil, cyl, noInt},
		{"cylinders overflow", "EngineCylinders", "1e400", cyl, noInt},
		{"cylinders huge", "EngineCylinders", "1e30", cyl, noInt},
		{"cylinders NaN", "EngineCylinders", "NaN", cyl, noInt},
		{"make trimmed", "Make", "  HONDA\t", mk, ptr("HONDA")},
		{"make empty", "Make", "", mk, noString},
		{"make blank", "Make", "   ", mk, noString},
		{"make not applicable", "Make", "Not Applicable", mk, noString},
		{"make null", "Make", nil, mk, noString},
		{"make array", "Make", []any{"HONDA"}, mk, noString},
		{"manufacturer", "Manufacturer", "AMERICAN HONDA MOTOR CO., INC.", mfr, ptr("AMERICAN HONDA MOTOR CO., INC.")},
		{"error code list kept", "ErrorCode", "1,11,14", code, "1,11,14"},
		{"error code json number", "ErrorCode", 0, code, "0"},
		{"clean decode has no error text", "ErrorText", "0 - VIN decoded clean. Check Digit (9th position) is correct", text, noString},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			rec := vpictest.Record(vpictest.VINHondaAccord)
			if _, ok := tt.value.(absent); ok {
				delete(rec, tt.key)
			} else {
				rec[tt.key] = tt.value
			}
			fake.SetRecord(vpictest.VINHondaAccord, rec)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			got, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			if err != nil {
				t.Fatalf("Decode(%q) with %s=%#v error = %v, want nil", vpictest.VINHondaAccord, tt.key, tt.value, err)
			}
			if diff := cmp.Diff(tt.want, tt.get(got.Result)); diff != "" {
				t.Errorf("Decode(%q) with %s=%#v mismatch (-want +got):\n%s", vpictest.VINHondaAccord, tt.key, tt.value, diff)
			}
		})
	}
}

func TestDecodeErrorTextForErrorCodes(t *testing.T) {
	const text = "1 - Check Digit (9th position) does not calculate properly; 11 - Incorrect Model Year"
	fake := vpictest.New(t)
	rec := vpictest.Record(vpictest.VINHondaAccord)
	rec["ErrorCode"] = "1,11"
	rec["ErrorText"] = text + " "
	fake.SetRecord(vpictest.VINHondaAccord, rec)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	got, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
	if err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
	}
	if got.Result.ErrorCode != "1,11" || got.Result.ErrorText == nil || *got.Result.ErrorText != text {
		t.Errorf("Decode(%q) = {ErrorCode %q, ErrorText %v}, want {%q, %q}", vpictest.VINHondaAccord, got.Result.ErrorCode, got.Result.ErrorText, "1,11", text)
	}
}

// TestDecodeBadAnswers: answers that are not usable fail with ErrUpstream
// and no data, after a single attempt.
func TestDecodeBadAnswers(t *testing.T) {
	honda := fixtureEnvelope(t, vpictest.VINHondaAccord)
	noCode := vpictest.Record(vpictest.VINHondaAccord)
	delete(noCode, "ErrorCode")
	noCodeBody, _ := json.Marshal(map[string]any{"Results": []any{noCode}})
	nullCode := vpictest.Record(vpictest.VINHondaAccord)
	nullCode["ErrorCode"] = nil
	nullCodeBody, _ := json.Marshal(map[string]any{"Results": []any{nullCode}})
	execErr, _ := json.Marshal(map[string]any{
		"Count": 1, "Message": "Execution Error: Timeout expired. The timeout period elapsed prior to completion of the operation", "SearchCriteria": "VIN(s): " + vpictest.VINHondaAccord,
		"Results": []any{vpictest.Record(vpictest.VINHondaAccord)},
	})
	for _, tt := range []struct {
		name  string
		reply vpictest.Reply
	}{
		{"xml answer", vpictest.Reply{Status: 200, ContentType: "application/xml", Body: vpictest.XMLAnswer}},
		{"html maintenance page", vpictest.Reply{Status: 200, ContentType: "text/html", Body: "<!DOCTYPE html><html><body><h1>Site under maintenance</h1></body></html>"}},
		{"garbage", vpictest.Reply{Status: 200, Body: "\x00\xff\xfe garbage \x01"}},
		{"plain text", vpictest.Reply{Status: 200, Body: "Service Unavailable"}},
		{"empty body", vpictest.Reply{Status: 200, Body: ""}},
		{"white space body", vpictest.Reply{Status: 200, Body: " \r\n\t"}},
		{"truncated json", vpictest.Reply{Status: 200, Body: honda[:len(honda)/2]}},
		{"json array top level", vpictest.Reply{Status: 200, Body: `[{"ErrorCode":"0","Make":"HONDA"}]`}},
		{"json string top level", vpictest.Reply{Status: 200, Body: `"Results"`}},
		{"json null", vpictest.Reply{Status: 200, Body: `null`}},
		{"trailing garbage", vpictest.Reply{Status: 200, Body: honda + "}}"}},
		{"empty object", vpictest.Reply{Status: 200, Body: `{}`}},
		{"empty results", vpictest.Reply{Status: 200, Body: `{"Count":0,"Message":"Results returned successfully","SearchCriteria":"","Results":[]}`}},
		{"null results", vpictest.Reply{Status: 200, Body: `{"Count":0,"Message":"","Results":null}`}},
		{"results not a list", vpictest.Reply{Status: 200, Body: `{"Results":{"ErrorCode":"0"}}`}},
		{"result is a number", vpictest.Reply{Status: 200, Body: `{"Results":[1]}`}},
		{"result is a string", vpictest.Reply{Status: 200, Body: `{"Results":["ErrorCode"]}`}},
		{"result is null", vpictest.Reply{Status: 200, Body: `{"Results":[null]}`}},
		{"result is a list", vpictest.Reply{Status: 200, Body: `{"Results":[[]]}`}},
		{"second result not an object", vpictest.Reply{Status: 200, Body: `{"Results":[{"ErrorCode":"0"},7]}`}},
		{"record without ErrorCode", vpictest.Reply{Status: 200, Body: string(noCodeBody)}},
		{"record with null ErrorCode", vpictest.Reply{Status: 200, Body: string(nullCodeBody)}},
		{"record with blank ErrorCode", vpictest.Reply{Status: 200, Body: `{"Results":[{"ErrorCode":" ","Make":"HONDA"}]}`}},
		{"execution error message", vpictest.Reply{Status: 200, Body: string(execErr)}},
		{"execution error lower case", vpictest.Reply{Status: 200, Body: `{"Message":"execution error","Results":[{"ErrorCode":"0"}]}`}},
		{"status 400", vpictest.Reply{Status: 400, Body: honda}},
		{"status 403", vpictest.Reply{Status: 403, Body: "forbidden"}},
		{"status 404", vpictest.Reply{Status: 404, Body: "<html>The resource cannot be found.</html>"}},
		{"status 500", vpictest.Reply{Status: 500, Body: honda}},
		{"status 501", vpictest.Reply{Status: 501, Body: ""}},
		{"status 502", vpictest.Reply{Status: 502, Body: "<html>Bad Gateway</html>"}},
		{"status 503", vpictest.Reply{Status: 503, Body: "<html>maintenance</html>"}},
		{"status 429", vpictest.Reply{Status: 429, Body: ""}},
		{"status 204", vpictest.Reply{Status: 204}},
		{"status 301 without location", vpictest.Reply{Status: 301, Body: honda}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(tt.reply)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			got, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			if !errors.Is(err, vpic.ErrUpstream) {
				t.Errorf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
			}
			if diff := cmp.Diff(vin.Decoded{}, got); diff != "" {
				t.Errorf("Decode(%q) returned data with an error (-want +got):\n%s", vpictest.VINHondaAccord, diff)
			}
			if n := fake.CallCount(); n != 1 {
				t.Errorf("Decode(%q) made %d calls, want 1", vpictest.VINHondaAccord, n)
			}
		})
	}
}

func TestDecodeBatchBadAnswer(t *testing.T) {
	for _, tt := range []struct {
		name  string
		reply vpictest.Reply
	}{
		{"xml answer", vpictest.Reply{Status: 200, Body: vpictest.XMLAnswer}},
		{"empty results", vpictest.Reply{Status: 200, Body: `{"Results":[]}`}},
		{"status 400", vpictest.Reply{Status: 400, Body: "bad request"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(tt.reply)
			c := newClient(fake.BaseURL(), 5*time.Second, 0)
			vins := []string{vpictest.VINHondaAccord, vpictest.VINFordF150}
			outs, err := c.DecodeBatch(t.Context(), vins)
			if !errors.Is(err, vpic.ErrUpstream) || outs != nil {
				t.Errorf("DecodeBatch(%q) = %v, %v, want nil, ErrUpstream", vins, outs, err)
			}
		})
	}
}

// TestDecodeBodyLimit: an answer up to 4 MiB is read, a larger one fails.
func TestDecodeBodyLimit(t *testing.T) {
	const limit = 4 << 20
	honda := fixtureEnvelope(t, vpictest.VINHondaAccord)
	for _, tt := range []struct {
		name    string
		size    int
		wantErr bool
	}{
		{"at the limit", limit, false},
		{"one byte over", limit + 1, true},
		{"far over", 3 * limit, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(vpictest.Reply{Status: 200, Body: honda + strings.Repeat(" ", tt.size-len(honda))})
			c := newClient(fake.BaseURL(), 10*time.Second, 0)
			_, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			if tt.wantErr && !errors.Is(err, vpic.ErrUpstream) {
				t.Errorf("Decode(%q) with a %d-byte answer error = %v, want ErrUpstream", vpictest.VINHondaAccord, tt.size, err)
			}
			if !tt.wantErr && err != nil {
				t.Errorf("Decode(%q) with a %d-byte answer error = %v, want nil", vpictest.VINHondaAccord, tt.size, err)
			}
		})
	}
}

// TestRetryStatuses: with one retry allowed, retryable statuses are
// followed by a second attempt that succeeds; the others fail at once.
func TestRetryStatuses(t *testing.T) {
	for _, tt := range []struct {
		status    int
		retried   bool
		wantCalls int
	}{
		{http.StatusTooManyRequests, true, 2},
		{http.StatusInternalServerError, true, 2},
		{http.StatusBadGateway, true, 2},
		{http.StatusServiceUnavailable, true, 2},
		{http.StatusGatewayTimeout, true, 2},
		{http.StatusBadRequest, false, 1},
		{http.StatusForbidden, false, 1},
		{http.StatusNotFound, false, 1},
		{http.StatusNotImplemented, false, 1},
	} {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(vpictest.Reply{Status: tt.status, Body: "<html>error</html>"})
			c := newClient(fake.BaseURL(), 5*time.Second, 1)
			_, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			if tt.retried && err != nil {
				t.Errorf("Decode(%q) after a %d error = %v, want nil (retried)", vpictest.VINHondaAccord, tt.status, err)
			}
			if !tt.retried {
				if !errors.Is(err, vpic.ErrUpstream) {
					t.Errorf("Decode(%q) after a %d error = %v, want ErrUpstream", vpictest.VINHondaAccord, tt.status, err)
				}
				if err != nil && !strings.Contains(err.Error(), fmt.Sprint(tt.status)) {
					t.Errorf("Decode(%q) error = %q, want it to name status %d", vpictest.VINHondaAccord, err, tt.status)
				}
			}
			if got := fake.CallCount(); got != tt.wantCalls {
				t.Errorf("Decode(%q) after a %d made %d calls, want %d", vpictest.VINHondaAccord, tt.status, got, tt.wantCalls)
			}
		})
	}
}

func TestRetryCounts(t *testing.T) {
	for _, tt := range []struct {
		name      string
		replies   []vpictest.Reply
		wantErr   bool
		wantCalls int
	}{
		{"503 then 200", []vpictest.Reply{{Status: 503}}, false, 2},
		{"three 500s", []vpictest.Reply{{Status: 500}, {Status: 500}, {Status: 500}}, true, 3},
		{"two 500s then 200", []vpictest.Reply{{Status: 500}, {Status: 500}}, false, 3},
		{"400", []vpictest.Reply{{Status: 400}}, true, 1},
		{"429 then 200", []vpictest.Reply{{Status: 429}}, false, 2},
		{"three 429s", []vpictest.Reply{{Status: 429}, {Status: 429}, {Status: 429}}, true, 3},
		{"503 then 404", []vpictest.Reply{{Status: 503}, {Status: 404}}, true, 2},
		{"xml answer not retried", []vpictest.Reply{{Status: 200, Body: vpictest.XMLAnswer}}, true, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(tt.replies...)
			c := newClient(fake.BaseURL(), 5*time.Second, 2)
			got, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			if tt.wantErr && !errors.Is(err, vpic.ErrUpstream) {
				t.Errorf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
			}
			if !tt.wantErr {
				if err != nil {
					t.Errorf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
				} else if got.Result.Make == nil || *got.Result.Make != "HONDA" {
					t.Errorf("Decode(%q) Make = %v, want HONDA", vpictest.VINHondaAccord, got.Result.Make)
				}
			}
			if n := fake.CallCount(); n != tt.wantCalls {
				t.Errorf("Decode(%q) made %d calls, want %d", vpictest.VINHondaAccord, n, tt.wantCalls)
			}
		})
	}
}

// TestRetryWaits checks lower bounds of the waits between attempts only.
func TestRetryWaits(t *testing.T) {
	for _, tt := range []struct {
		name    string
		reply   vpictest.Reply
		minWait time.Duration
	}{
		// Back-off starts at 250ms with equal jitter: at least 125ms.
		{"back-off", vpictest.Reply{Status: 503}, 120 * time.Millisecond},
		{"retry-after on 503", vpictest.Reply{Status: 503, Header: http.Header{"Retry-After": {"1"}}}, 950 * time.Millisecond},
		{"retry-after on 429", vpictest.Reply{Status: 429, Header: http.Header{"Retry-After": {"1"}}}, 950 * time.Millisecond},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(tt.reply)
			c := newClient(fake.BaseURL(), 5*time.Second, 1)
			if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
				t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
			}
			calls := fake.Calls()
			if len(calls) != 2 {
				t.Fatalf("Decode(%q) made %d calls, want 2", vpictest.VINHondaAccord, len(calls))
			}
			if gap := calls[1].At.Sub(calls[0].At); gap < tt.minWait {
				t.Errorf("Decode(%q) retried after %v, want at least %v", vpictest.VINHondaAccord, gap, tt.minWait)
			}
		})
	}
}

// TestRetryAfterHTTPDate checks that a Retry-After given as an HTTP date
// (RFC 9110 section 10.2.3) is honoured like delay seconds: the retry waits
// until that date. Lower bound only.
func TestRetryAfterHTTPDate(t *testing.T) {
	fake := vpictest.New(t)
	// HTTP dates have whole seconds: this one is 1 to 2 s ahead.
	at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Second)
	fake.Script(vpictest.Reply{Status: 503, Header: http.Header{"Retry-After": {at.Format(http.TimeFormat)}}})
	c := newClient(fake.BaseURL(), 5*time.Second, 1)
	if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
	}
	calls := fake.Calls()
	if len(calls) != 2 {
		t.Fatalf("Decode(%q) made %d calls, want 2", vpictest.VINHondaAccord, len(calls))
	}
	// The back-off alone would wait at most 250ms.
	minWait := at.Sub(calls[0].At) - 50*time.Millisecond
	if gap := calls[1].At.Sub(calls[0].At); gap < minWait {
		t.Errorf("Decode(%q) retried after %v, want at least %v (Retry-After %s)", vpictest.VINHondaAccord, gap, minWait, at.Format(http.TimeFormat))
	}
}

// hangUp is an upstream that closes every connection without answering.
func hangUp(tb testing.TB) (srv *httptest.Server, calls *atomic.Int32) {
	tb.Helper()
	calls = new(atomic.Int32)
	srv = newServer(tb, func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			tb.Errorf("hijack: %v", err)
			return
		}
		conn.Close()
	})
	return srv, calls
}

// closedURL returns the URL of a server that is no longer listening.
func closedURL(tb testing.TB) string {
	tb.Helper()
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close()
	return u
}

func TestRetryNetworkErrors(t *testing.T) {
	t.Run("connection closed", func(t *testing.T) {
		srv, calls := hangUp(t)
		c := newClient(srv.URL, 5*time.Second, 2)
		_, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
		if !errors.Is(err, vpic.ErrUpstream) {
			t.Errorf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
		}
		if n := calls.Load(); n != 3 {
			t.Errorf("Decode(%q) made %d attempts, want 3", vpictest.VINHondaAccord, n)
		}
	})
	t.Run("connection closed then answer", func(t *testing.T) {
		fake := vpictest.New(t)
		var calls atomic.Int32
		srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			fake.Config.Handler.ServeHTTP(w, r)
		})
		c := newClient(srv.URL+"/api/vehicles", 5*time.Second, 1)
		if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
			t.Errorf("Decode(%q) error = %v, want nil after a retry", vpictest.VINHondaAccord, err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("Decode(%q) made %d attempts, want 2", vpictest.VINHondaAccord, n)
		}
	})
	t.Run("batch connection closed", func(t *testing.T) {
		srv, calls := hangUp(t)
		c := newClient(srv.URL, 5*time.Second, 1)
		vins := []string{vpictest.VINHondaAccord, vpictest.VINFordF150}
		if _, err := c.DecodeBatch(t.Context(), vins); !errors.Is(err, vpic.ErrUpstream) {
			t.Errorf("DecodeBatch(%q) error = %v, want ErrUpstream", vins, err)
		}
		if n := calls.Load(); n != 2 {
			t.Errorf("DecodeBatch(%q) made %d attempts, want 2", vins, n)
		}
	})
	t.Run("connection refused", func(t *testing.T) {
		c := newClient(closedURL(t), 5*time.Second, 1)
		if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); !errors.Is(err, vpic.ErrUpstream) {
			t.Errorf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
		}
	})
}

// TestRetryBrokenBody: a connection that breaks or stalls while the answer's
// body is read is a network error or timeout like any other, and is retried.
func TestRetryBrokenBody(t *testing.T) {
	for _, tt := range []struct {
		name  string
		first func(w http.ResponseWriter, r *http.Request)
	}{
		{"connection closed mid-body", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", "5000")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"Count":1,"Message":"Results returned successfully","Results":[{"ErrorCode":"0",`)
			// Returning short of Content-Length makes the server close the
			// connection.
		}},
		{"body stalls past the timeout", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, `{"Count":1,"Message":"Results returned successfully","Results":[`)
			http.NewResponseController(w).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			var calls atomic.Int32
			srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					tt.first(w, r)
					return
				}
				fake.Config.Handler.ServeHTTP(w, r)
			})
			c := newClient(srv.URL+"/api/vehicles", 500*time.Millisecond, 1)
			_, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			if err != nil {
				t.Errorf("Decode(%q) error = %v, want nil after a retry", vpictest.VINHondaAccord, err)
			}
			if n := calls.Load(); n != 2 {
				t.Errorf("Decode(%q) made %d attempts, want 2", vpictest.VINHondaAccord, n)
			}
		})
	}
}

func TestRetryBatchResendsBody(t *testing.T) {
	fake := vpictest.New(t)
	fake.Script(vpictest.Reply{Status: 503})
	c := newClient(fake.BaseURL(), 5*time.Second, 1)
	vins := []string{vpictest.VINHondaAccord, vpictest.VINFordF150}
	outs, err := c.DecodeBatch(t.Context(), vins)
	if err != nil {
		t.Fatalf("DecodeBatch(%q) error = %v, want nil", vins, err)
	}
	for i, o := range outs {
		if o.Err != nil || o.Result.VIN != vins[i] || o.Result.Make == nil {
			t.Errorf("DecodeBatch outcome %d = {VIN %q, Make %v, Err %v}, want %s decoded", i, o.Result.VIN, o.Result.Make, o.Err, vins[i])
		}
	}
	calls := fake.Calls()
	if len(calls) != 2 {
		t.Fatalf("DecodeBatch(%q) made %d calls, want 2", vins, len(calls))
	}
	if diff := cmp.Diff(calls[0], calls[1], ignoreAt); diff != "" {
		t.Errorf("DecodeBatch retry differs from the first attempt (-first +retry):\n%s", diff)
	}
}

func TestTimeouts(t *testing.T) {
	t.Run("slow answer", func(t *testing.T) {
		fake := vpictest.New(t)
		fake.SetLatency(500 * time.Millisecond)
		c := newClient(fake.BaseURL(), 100*time.Millisecond, 0)
		_, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
		if !errors.Is(err, vpic.ErrUpstream) {
			t.Fatalf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
		}
		if !strings.Contains(err.Error(), "timeout") {
			t.Errorf("Decode(%q) error = %q, want it to say timeout", vpictest.VINHondaAccord, err)
		}
	})
	t.Run("slow answers retried", func(t *testing.T) {
		fake := vpictest.New(t)
		fake.SetLatency(500 * time.Millisecond)
		c := newClient(fake.BaseURL(), 100*time.Millisecond, 1)
		if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); !errors.Is(err, vpic.ErrUpstream) {
			t.Errorf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
		}
		if n := fake.CallCount(); n != 2 {
			t.Errorf("Decode(%q) made %d calls, want 2", vpictest.VINHondaAccord, n)
		}
	})
	t.Run("slow answer then fast", func(t *testing.T) {
		fake := vpictest.New(t)
		fake.Script(vpictest.Reply{Status: 200, Body: fixtureEnvelope(t, vpictest.VINHondaAccord), Delay: 2 * time.Second})
		c := newClient(fake.BaseURL(), 500*time.Millisecond, 1)
		if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
			t.Errorf("Decode(%q) error = %v, want nil after a retry", vpictest.VINHondaAccord, err)
		}
		if n := fake.CallCount(); n != 2 {
			t.Errorf("Decode(%q) made %d calls, want 2", vpictest.VINHondaAccord, n)
		}
	})
}

func TestMaxCallDuration(t *testing.T) {
	c := newClient("http://127.0.0.1:1", 2*time.Second, 2)
	// 3 attempts of 2s and 2 back-off waits of at most 4s.
	if got, want := c.MaxCallDuration(), 14*time.Second; got != want {
		t.Errorf("MaxCallDuration() = %v, want %v", got, want)
	}
}

func TestCancel(t *testing.T) {
	t.Run("during an attempt", func(t *testing.T) {
		fake := vpictest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 30*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Decode(ctx, vpictest.VINHondaAccord)
		if err == nil {
			t.Fatalf("Decode(%q) with a cancelled context error = nil, want an error", vpictest.VINHondaAccord)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Decode(%q) returned %v after cancellation, want promptly", vpictest.VINHondaAccord, d)
		}
		if n := fake.CallCount(); n != 1 {
			t.Errorf("Decode(%q) made %d calls, want 1 (no retry after cancellation)", vpictest.VINHondaAccord, n)
		}
	})
	t.Run("during back-off", func(t *testing.T) {
		fake := vpictest.New(t)
		for range 20 {
			fake.Script(vpictest.Reply{Status: 503})
		}
		c := newClient(fake.BaseURL(), 5*time.Second, 10)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(300*time.Millisecond, cancel)
		start := time.Now()
		_, err := c.Decode(ctx, vpictest.VINHondaAccord)
		if err == nil {
			t.Fatalf("Decode(%q) with a cancelled context error = nil, want an error", vpictest.VINHondaAccord)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("Decode(%q) returned %v after cancellation, want promptly", vpictest.VINHondaAccord, d)
		}
	})
	t.Run("batch during an attempt", func(t *testing.T) {
		fake := vpictest.New(t)
		fake.SetLatency(10 * time.Second)
		c := newClient(fake.BaseURL(), 30*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		vins := []string{vpictest.VINHondaAccord, vpictest.VINFordF150}
		if _, err := c.DecodeBatch(ctx, vins); err == nil {
			t.Fatalf("DecodeBatch(%q) with a cancelled context error = nil, want an error", vins)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("DecodeBatch(%q) returned %v after cancellation, want promptly", vins, d)
		}
	})
	t.Run("already cancelled", func(t *testing.T) {
		fake := vpictest.New(t)
		c := newClient(fake.BaseURL(), 5*time.Second, 3)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := c.Decode(ctx, vpictest.VINHondaAccord); err == nil {
			t.Errorf("Decode(%q) with a cancelled context error = nil, want an error", vpictest.VINHondaAccord)
		}
		if n := fake.CallCount(); n != 0 {
			t.Errorf("Decode(%q) with a cancelled context made %d calls, want 0", vpictest.VINHondaAccord, n)
		}
	})
}

// TestErrorsOmitURL: no failure's text contains the upstream's address or
// the request URL.
func TestErrorsOmitURL(t *testing.T) {
	type upstream struct {
		base    string // base URL given to the client
		host    string // host:port that must not appear
		timeout time.Duration
		retries int
	}
	fakeWith := func(t *testing.T, replies ...vpictest.Reply) upstream {
		fake := vpictest.New(t)
		fake.Script(replies...)
		return upstream{base: fake.BaseURL(), host: hostOf(t, fake.URL), timeout: 5 * time.Second}
	}
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T) upstream
	}{
		{"status 400", func(t *testing.T) upstream { return fakeWith(t, vpictest.Reply{Status: 400}) }},
		{"status 404", func(t *testing.T) upstream { return fakeWith(t, vpictest.Reply{Status: 404}) }},
		{"status 500 retries exhausted", func(t *testing.T) upstream {
			u := fakeWith(t, vpictest.Reply{Status: 500}, vpictest.Reply{Status: 500})
			u.retries = 1
			return u
		}},
		{"status 429 retries exhausted", func(t *testing.T) upstream {
			u := fakeWith(t, vpictest.Reply{Status: 429}, vpictest.Reply{Status: 429})
			u.retries = 1
			return u
		}},
		{"xml answer", func(t *testing.T) upstream { return fakeWith(t, vpictest.Reply{Status: 200, Body: vpictest.XMLAnswer}) }},
		{"timeout", func(t *testing.T) upstream {
			u := fakeWith(t, vpictest.Reply{Status: 200, Delay: 500 * time.Millisecond})
			u.timeout = 100 * time.Millisecond
			return u
		}},
		{"connection closed", func(t *testing.T) upstream {
			srv, _ := hangUp(t)
			return upstream{base: srv.URL + "/api/vehicles", host: hostOf(t, srv.URL), timeout: 5 * time.Second}
		}},
		{"connection refused", func(t *testing.T) upstream {
			u := closedURL(t)
			return upstream{base: u + "/api/vehicles", host: hostOf(t, u), timeout: 5 * time.Second}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			u := tt.setup(t)
			c := newClient(u.base, u.timeout, u.retries)
			check := func(op string, err error) {
				t.Helper()
				if !errors.Is(err, vpic.ErrUpstream) {
					t.Fatalf("%s error = %v, want ErrUpstream", op, err)
				}
				for _, bad := range []string{u.host, "http://", "/api/vehicles", "DecodeVin"} {
					if strings.Contains(err.Error(), bad) {
						t.Errorf("%s error = %q, want no %q in it", op, err, bad)
					}
				}
			}
			_, err := c.Decode(t.Context(), vpictest.VINHondaAccord)
			check(fmt.Sprintf("Decode(%q)", vpictest.VINHondaAccord), err)
		})
	}
}

// TestPacing: attempts are spaced by the pace (5/s: 200ms apart). Only a
// lower bound is asserted.
func TestPacing(t *testing.T) {
	fake := vpictest.New(t)
	c := vpic.NewClient(fake.BaseURL(), 5*time.Second, 0, 5, discardLogger(), nil)
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Go(func() { _, errs[i] = c.Decode(t.Context(), vpictest.VINHondaAccord) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Decode(%q) #%d error = %v, want nil", vpictest.VINHondaAccord, i, err)
		}
	}
	calls := fake.Calls()
	if len(calls) != len(errs) {
		t.Fatalf("fake received %d calls, want %d", len(calls), len(errs))
	}
	slices.SortFunc(calls, func(a, b vpictest.Call) int { return a.At.Compare(b.At) })
	for i := 1; i < len(calls); i++ {
		if gap := calls[i].At.Sub(calls[i-1].At); gap < 150*time.Millisecond {
			t.Errorf("calls %d and %d arrived %v apart, want at least 150ms at 5 per second", i-1, i, gap)
		}
	}
}

func TestPing(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		fake := vpictest.New(t)
		c := newClient(fake.BaseURL(), 5*time.Second, 0)
		if err := c.Ping(t.Context()); err != nil {
			t.Fatalf("Ping() = %v, want nil", err)
		}
		want := []vpictest.Call{{
			Method:   http.MethodGet,
			Path:     "/api/vehicles/DecodeVinValues/" + vpic.ProbeVIN,
			RawQuery: "format=json",
			VINs:     []string{vpic.ProbeVIN},
		}}
		if diff := cmp.Diff(want, fake.Calls(), ignoreAt); diff != "" {
			t.Errorf("Ping() requests mismatch (-want +got):\n%s", diff)
		}
	})
	for _, tt := range []struct {
		name    string
		replies []vpictest.Reply
	}{
		{"503s", []vpictest.Reply{{Status: 503}, {Status: 503}}},
		{"maintenance page", []vpictest.Reply{{Status: 200, Body: "<html>maintenance</html>"}}},
		{"record without ErrorCode", []vpictest.Reply{{Status: 200, Body: `{"Results":[{"Make":"HONDA"}]}`}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := vpictest.New(t)
			fake.Script(tt.replies...)
			c := newClient(fake.BaseURL(), 5*time.Second, 1)
			if err := c.Ping(t.Context()); !errors.Is(err, vpic.ErrUpstream) {
				t.Errorf("Ping() = %v, want ErrUpstream", err)
			}
		})
	}
}

func TestMonitor(t *testing.T) {
	errDown := errors.New("down")
	t0 := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	type step struct {
		pingErr   error
		cancelled bool // the parent context is cancelled before Check
		now       time.Time
		wantCheck bool
		want      vin.UpstreamState
	}
	for _, tt := range []struct {
		name  string
		steps []step
	}{
		{
			name: "fail then recover",
			steps: []step{
				{pingErr: errDown, now: t0, wantCheck: false, want: vin.UpstreamState{Reachable: false, LastCheck: t0}},
				{pingErr: errDown, now: t0.Add(time.Minute), wantCheck: false, want: vin.UpstreamState{Reachable: false, LastCheck: t0.Add(time.Minute)}},
				{pingErr: nil, now: t0.Add(2 * time.Minute), wantCheck: true, want: vin.UpstreamState{Reachable: true, LastCheck: t0.Add(2 * time.Minute)}},
			},
		},
		{
			name: "ok first",
			steps: []step{
				{pingErr: nil, now: t0, wantCheck: true, want: vin.UpstreamState{Reachable: true, LastCheck: t0}},
			},
		},
		{
			name: "cancelled check before any check",
			steps: []step{
				{pingErr: errDown, cancelled: true, now: t0, wantCheck: true, want: vin.UpstreamState{Reachable: true}},
			},
		},
		{
			name: "cancelled check after a failure",
			steps: []step{
				{pingErr: errDown, now: t0, wantCheck: false, want: vin.UpstreamState{Reachable: false, LastCheck: t0}},
				{pingErr: nil, cancelled: true, now: t0.Add(time.Minute), wantCheck: false, want: vin.UpstreamState{Reachable: false, LastCheck: t0}},
			},
		},
		{
			name: "cancelled check after a success",
			steps: []step{
				{pingErr: nil, now: t0, wantCheck: true, want: vin.UpstreamState{Reachable: true, LastCheck: t0}},
				{pingErr: errDown, cancelled: true, now: t0.Add(time.Minute), wantCheck: true, want: vin.UpstreamState{Reachable: true, LastCheck: t0}},
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var cur step
			ping := func(ctx context.Context) error { return cur.pingErr }
			now := func() time.Time { return cur.now }
			m := vpic.NewMonitor(ping, time.Second, discardLogger(), now)
			if diff := cmp.Diff(vin.UpstreamState{Reachable: true}, m.State()); diff != "" {
				t.Fatalf("State() before any check mismatch (-want +got):\n%s", diff)
			}
			for i, s := range tt.steps {
				cur = s
				ctx, cancel := context.WithCancel(t.Context())
				if s.cancelled {
					cancel()
				}
				got := m.Check(ctx)
				cancel()
				if got != s.wantCheck {
					t.Errorf("step %d: Check() = %t, want %t", i, got, s.wantCheck)
				}
				if diff := cmp.Diff(s.want, m.State()); diff != "" {
					t.Errorf("step %d: State() mismatch (-want +got):\n%s", i, diff)
				}
			}
		})
	}
}

func TestMonitorLastCheckUTC(t *testing.T) {
	local := time.Date(2026, 7, 1, 8, 0, 0, 0, time.FixedZone("EDT", -4*3600))
	m := vpic.NewMonitor(func(context.Context) error { return nil }, time.Second, discardLogger(), func() time.Time { return local })
	m.Check(t.Context())
	got := m.State().LastCheck
	if !got.Equal(local) || got.Location() != time.UTC {
		t.Errorf("State().LastCheck = %v, want %v in UTC", got, local.UTC())
	}
}

func TestMonitorBoundsPing(t *testing.T) {
	const timeout = 200 * time.Millisecond
	var hadDeadline bool
	var left time.Duration
	ping := func(ctx context.Context) error {
		var dl time.Time
		dl, hadDeadline = ctx.Deadline()
		left = time.Until(dl)
		return nil
	}
	m := vpic.NewMonitor(ping, timeout, discardLogger(), time.Now)
	m.Check(t.Context())
	if !hadDeadline || left > timeout {
		t.Errorf("Check gave ping a context with deadline %t and %v left, want a deadline within %v", hadDeadline, left, timeout)
	}
}

func TestMonitorWithClient(t *testing.T) {
	fake := vpictest.New(t)
	c := newClient(fake.BaseURL(), 5*time.Second, 0)
	t0 := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	m := vpic.NewMonitor(c.Ping, 5*time.Second, discardLogger(), func() time.Time { return t0 })

	fake.Script(vpictest.Reply{Status: 503})
	if m.Check(t.Context()) {
		t.Errorf("Check() against a 503 = true, want false")
	}
	if diff := cmp.Diff(vin.UpstreamState{Reachable: false, LastCheck: t0}, m.State()); diff != "" {
		t.Errorf("State() after a 503 mismatch (-want +got):\n%s", diff)
	}
	if !m.Check(t.Context()) {
		t.Errorf("Check() against a working fake = false, want true")
	}
	if !m.State().Reachable {
		t.Errorf("State().Reachable after recovery = false, want true")
	}
}

func TestMonitorRun(t *testing.T) {
	called := make(chan struct{}, 10)
	ping := func(context.Context) error {
		called <- struct{}{}
		return nil
	}
	m := vpic.NewMonitor(ping, time.Second, discardLogger(), time.Now)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		m.Run(ctx, time.Hour)
		close(done)
	}()
	select {
	case <-called:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not check at once")
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

const requestsHelp = `
# HELP vinsvc_upstream_requests_total Calls to vPIC (all attempts of one call count once), by operation and outcome.
# TYPE vinsvc_upstream_requests_total counter
`

const retriesHelp = `
# HELP vinsvc_upstream_retries_total Retried attempts to vPIC, by operation.
# TYPE vinsvc_upstream_retries_total counter
`

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := vpic.NewMetrics(reg)
	fake := vpictest.New(t)
	c := vpic.NewClient(fake.BaseURL(), 5*time.Second, 1, 1000, discardLogger(), m)
	ctx := t.Context()

	if _, err := c.Decode(ctx, vpictest.VINHondaAccord); err != nil {
		t.Fatalf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
	}
	fake.Script(vpictest.Reply{Status: 400})
	if _, err := c.Decode(ctx, vpictest.VINHondaAccord); err == nil {
		t.Fatalf("Decode(%q) against a 400 error = nil, want an error", vpictest.VINHondaAccord)
	}
	fake.Script(vpictest.Reply{Status: 200, Body: vpictest.XMLAnswer})
	if _, err := c.Decode(ctx, vpictest.VINHondaAccord); err == nil {
		t.Fatalf("Decode(%q) against XML error = nil, want an error", vpictest.VINHondaAccord)
	}
	fake.Script(vpictest.Reply{Status: 503})
	if _, err := c.Decode(ctx, vpictest.VINHondaAccord); err != nil {
		t.Fatalf("Decode(%q) after one 503 error = %v, want nil", vpictest.VINHondaAccord, err)
	}
	if _, err := c.DecodeBatch(ctx, []string{vpictest.VINHondaAccord, vpictest.VINFordF150}); err != nil {
		t.Fatalf("DecodeBatch error = %v, want nil", err)
	}
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping() = %v, want nil", err)
	}
	down := vpic.NewClient(closedURL(t), 5*time.Second, 0, 1000, discardLogger(), m)
	if _, err := down.Decode(ctx, vpictest.VINHondaAccord); err == nil {
		t.Fatalf("Decode(%q) against a closed port error = nil, want an error", vpictest.VINHondaAccord)
	}

	want := requestsHelp + `
vinsvc_upstream_requests_total{operation="batch",outcome="ok"} 1
vinsvc_upstream_requests_total{operation="decode",outcome="bad_answer"} 1
vinsvc_upstream_requests_total{operation="decode",outcome="http_error"} 1
vinsvc_upstream_requests_total{operation="decode",outcome="network_error"} 1
vinsvc_upstream_requests_total{operation="decode",outcome="ok"} 2
vinsvc_upstream_requests_total{operation="probe",outcome="ok"} 1
` + retriesHelp + `
vinsvc_upstream_retries_total{operation="decode"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "vinsvc_upstream_requests_total", "vinsvc_upstream_retries_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "vinsvc_upstream_request_duration_seconds"); err != nil || n != 3 {
		t.Errorf("duration histograms = %d (err %v), want 3 (decode, batch, probe)", n, err)
	}
}

// TestMetricsRetriesExhausted: a call whose every attempt got a retryable
// status ends as an http_error, like any other status failure.
func TestMetricsRetriesExhausted(t *testing.T) {
	for _, tt := range []struct {
		name   string
		status int
	}{
		{"429", http.StatusTooManyRequests},
		{"500", http.StatusInternalServerError},
		{"503", http.StatusServiceUnavailable},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			fake := vpictest.New(t)
			fake.Script(vpictest.Reply{Status: tt.status}, vpictest.Reply{Status: tt.status})
			c := vpic.NewClient(fake.BaseURL(), 5*time.Second, 1, 1000, discardLogger(), vpic.NewMetrics(reg))
			if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); !errors.Is(err, vpic.ErrUpstream) {
				t.Fatalf("Decode(%q) error = %v, want ErrUpstream", vpictest.VINHondaAccord, err)
			}
			want := requestsHelp + `
vinsvc_upstream_requests_total{operation="decode",outcome="http_error"} 1
` + retriesHelp + `
vinsvc_upstream_retries_total{operation="decode"} 1
`
			if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "vinsvc_upstream_requests_total", "vinsvc_upstream_retries_total"); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestNilMetricsAndRetries: a client without metrics still retries (the
// retry hook must not touch the nil *Metrics).
func TestNilMetricsAndRetries(t *testing.T) {
	fake := vpictest.New(t)
	fake.Script(vpictest.Reply{Status: 503})
	c := vpic.NewClient(fake.BaseURL(), 5*time.Second, 1, 1000, discardLogger(), nil)
	if _, err := c.Decode(t.Context(), vpictest.VINHondaAccord); err != nil {
		t.Errorf("Decode(%q) error = %v, want nil", vpictest.VINHondaAccord, err)
	}
}
