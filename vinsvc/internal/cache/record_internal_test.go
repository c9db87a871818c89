package cache

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

func ptr[T any](v T) *T { return &v }

func TestRecordRoundTrip(t *testing.T) {
	for _, r := range []vin.Result{
		{VIN: "1HGCM82633A004352", ErrorCode: "0"},
		{
			VIN: "1FTMW1T88MFA00001", Make: ptr("FORD"), Model: ptr("F-150"), ModelYear: ptr("2021"), Trim: ptr("SuperCrew-SSV"),
			Series: ptr("F-Series"), BodyClass: ptr("Pickup"), DriveType: ptr("4WD/4-Wheel Drive/4x4"),
			EngineDisplacementCC: ptr(3500.0), EngineDisplacementL: ptr(3.5), EngineCylinders: ptr(6),
			FuelTypePrimary: ptr("Gasoline"), TransmissionStyle: ptr(""), TransmissionSpeeds: ptr("10"),
			PlantCity: ptr("DEARBORN"), PlantState: ptr("MICHIGAN"), PlantCountry: ptr("UNITED STATES (USA)"),
			ManufacturerName: ptr("FORD MOTOR COMPANY, USA"), VehicleType: ptr("TRUCK"),
			ErrorCode: "1,11", ErrorText: ptr("1 - Check Digit; 11 - Incorrect Model Year"),
		},
		{VIN: "X", EngineDisplacementCC: ptr(math.Copysign(0, -1)), EngineCylinders: ptr(math.MinInt32), ErrorCode: "日本\x00"},
	} {
		got, err := decodeRecord(encodeRecord(r), r.VIN)
		if err != nil {
			t.Fatalf("decodeRecord(encodeRecord(%+v)): %v", r, err)
		}
		if d := cmp.Diff(r, got); d != "" {
			t.Errorf("round trip changed the result (-want +got):\n%s", d)
		}
	}
}

// FuzzRecord: decoding never panics on corrupt bytes, and whatever decodes
// re-encodes to the same bytes.
func FuzzRecord(f *testing.F) {
	f.Add(encodeRecord(vin.Result{ErrorCode: "0", Make: ptr("HONDA"), EngineDisplacementL: ptr(2.0), EngineCylinders: ptr(4)}))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Add(make([]byte, 21))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRecord(b, "V")
		if err != nil {
			return
		}
		if again := encodeRecord(r); string(again) != string(b) {
			t.Fatalf("decoded %x to %+v, which encodes to %x", b, r, again)
		}
	})
}
