package httpapi

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// reference encodes v the way the service's jsonSerializer does.
func reference(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// plain has resultJSON's fields without its MarshalJSON, so encoding/json
// encodes it by reflection: the behaviour appendJSON must match.
type plain resultJSON

func FuzzAppendResult(f *testing.F) {
	f.Add("1HGCM82633A004352", "HONDA", "1st Row (Driver & Passenger) <x>", "0", 2998.832712, 6, true, false)
	f.Add("", "\u2028\u2029\x00\x1f\"\\\b\f\n\r\t", "\xff\xfe invalid", "1,11,14", 1e-7, -3, false, true)
	f.Add("é", "日本", "😀", "", 1e21, 0, true, true)
	f.Add("x", "", "", "", 0.0, math.MaxInt32, false, false)
	f.Fuzz(func(t *testing.T, v, s1, s2, code string, fl float64, n int, nilSome, withRaw bool) {
		if math.IsNaN(fl) || math.IsInf(fl, 0) {
			return // never produced: vpic drops them
		}
		r := resultJSON{VIN: v, Make: &s1, Model: &s2, Trim: &s1, EngineDisplacementCC: &fl, EngineDisplacementL: &fl,
			EngineCylinders: &n, ErrorCode: code, ErrorText: &s2, PlantCity: &code, Cached: withRaw}
		if nilSome {
			r.Make, r.EngineDisplacementL, r.EngineCylinders, r.ErrorText = nil, nil, nil, nil
		}
		if withRaw {
			r.Raw = json.RawMessage(reference(t, map[string]string{"VIN": v, "Make": s1}))
		}
		got := r.appendJSON(nil)
		want := reference(t, plain(r))
		if !bytes.Equal(got, want) {
			t.Fatalf("appendJSON =\n%s\nencoding/json =\n%s", got, want)
		}
		// And through encoding/json, as the batch body uses it.
		if via := reference(t, r); !bytes.Equal(via, want) {
			t.Fatalf("MarshalJSON via encoding/json =\n%s\nwant\n%s", via, want)
		}
	})
}
