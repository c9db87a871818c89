package vpic

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// FuzzParse feeds arbitrary answers to the parser: it must never panic,
// every record it accepts must map to a result that marshals to JSON, and
// numbers must be finite.
func FuzzParse(f *testing.F) {
	paths, err := filepath.Glob("vpictest/testdata/*.json")
	if err != nil || len(paths) == 0 {
		f.Fatalf("no fixtures in vpictest/testdata (err %v)", err)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		vpictest.XMLAnswer,
		"",
		" ",
		"{}",
		"[]",
		"null",
		"<html><body>maintenance</body></html>",
		`{"Results":[{}]}`,
		`{"Results":[]}`,
		`{"Results":null}`,
		`{"Results":[null]}`,
		`{"Results":[1,"x",[]]}`,
		`{"Results":{"ErrorCode":"0"}}`,
		`{"Message":"Execution Error","Results":[{"ErrorCode":"0"}]}`,
		`{"Message":7,"Results":[{"ErrorCode":"0"}]}`,
		`{"Results":[{"ErrorCode":"0","DisplacementCC":"NaN","EngineCylinders":"1e400"}]}`,
		`{"Results":[{"ErrorCode":"0","DisplacementCC":"Inf","DisplacementL":"-Infinity","EngineCylinders":"NaN"}]}`,
		`{"Results":[{"ErrorCode":"0","DisplacementCC":"0x1p3","DisplacementL":"1_0","EngineCylinders":"0x6"}]}`,
		`{"Results":[{"ErrorCode":0,"DisplacementCC":1e400,"DisplacementL":-1e400,"EngineCylinders":6}]}`,
		`{"Results":[{"ErrorCode":"1","ErrorText":null,"EngineCylinders":"2147483648","DisplacementCC":"1e308"}]}`,
		`{"Results":[{"ErrorCode":"0","EngineCylinders":"-0","DisplacementCC":"-0","DisplacementL":"4.9e-324"}]}`,
		`{"Results":[{"ErrorCode":"0","EngineCylinders":"9007199254740993","Make":"Not Applicable","Model":" x "}]}`,
		`{"Results":[{"ErrorCode":true,"Make":{"a":1},"Model":["b"],"VIN":5}]}`,
		`{"Results":[{"ErrorCode":"0","Make":"\ud800","Model":"\u0000","VIN":"\u00e9"}]}`,
		"{\"Results\":[{\"ErrorCode\":\"0\",\"Make\":\"\xff\xfe\"}]}",
		`{"Results":[{"ErrorCode":"0"},{"ErrorCode":""},{"VIN":"1HGCM82633A004352"}]}`,
	} {
		f.Add([]byte(s))
	}

	f.Fuzz(func(t *testing.T, body []byte) {
		recs, err := parseEnvelope(body)
		if err != nil {
			if recs != nil {
				t.Errorf("parseEnvelope(%q) = %d records and error %v, want no records with an error", body, len(recs), err)
			}
			return
		}
		if len(recs) == 0 {
			t.Fatalf("parseEnvelope(%q) = no records and no error", body)
		}
		for i, r := range recs {
			if !json.Valid(r.raw) {
				t.Errorf("record %d raw %q is not valid JSON", i, r.raw)
			}
			d, err := r.decoded(ProbeVIN)
			if err != nil {
				if !errors.Is(err, ErrUpstream) {
					t.Errorf("record %d: decoded() error = %v, want ErrUpstream", i, err)
				}
				continue
			}
			res := d.Result
			if res.VIN != ProbeVIN {
				t.Errorf("record %d: VIN = %q, want %q", i, res.VIN, ProbeVIN)
			}
			if res.ErrorCode == "" {
				t.Errorf("record %d: accepted with an empty ErrorCode", i)
			}
			if res.ErrorCode == "0" && res.ErrorText != nil {
				t.Errorf("record %d: ErrorText = %q with ErrorCode 0, want nil", i, *res.ErrorText)
			}
			for name, f := range map[string]*float64{"EngineDisplacementCC": res.EngineDisplacementCC, "EngineDisplacementL": res.EngineDisplacementL} {
				if f != nil && (math.IsNaN(*f) || math.IsInf(*f, 0)) {
					t.Errorf("record %d: %s = %v, want finite or nil", i, name, *f)
				}
			}
			if n := res.EngineCylinders; n != nil && (*n > math.MaxInt32 || *n < math.MinInt32) {
				t.Errorf("record %d: EngineCylinders = %d, out of range", i, *n)
			}
			for name, s := range map[string]*string{
				"Make": res.Make, "Model": res.Model, "ModelYear": res.ModelYear, "Trim": res.Trim, "Series": res.Series,
				"BodyClass": res.BodyClass, "DriveType": res.DriveType, "FuelTypePrimary": res.FuelTypePrimary,
				"TransmissionStyle": res.TransmissionStyle, "TransmissionSpeeds": res.TransmissionSpeeds,
				"PlantCity": res.PlantCity, "PlantState": res.PlantState, "PlantCountry": res.PlantCountry,
				"ManufacturerName": res.ManufacturerName, "VehicleType": res.VehicleType, "ErrorText": res.ErrorText,
			} {
				if s != nil && (*s == "" || *s != strings.TrimSpace(*s) || strings.EqualFold(*s, "Not Applicable")) {
					t.Errorf("record %d: %s = %q, want nil or a trimmed, meaningful value", i, name, *s)
				}
			}
			if _, err := json.Marshal(d); err != nil {
				t.Errorf("record %d: json.Marshal(result) error = %v", i, err)
			}
		}
	})
}
