package cache

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// The stored form of a vin.Result is a compact binary record, because the
// cache-hit path decodes one per request and JSON decoding was its largest
// cost. The VIN is the key, so it is not stored in the value.
//
// Layout, in field order of vin.Result (without VIN):
//
//	optional string: uvarint(len+1), 0 meaning nil, then the bytes
//	optional float:  0 for nil, or 1 and 8 bytes of IEEE 754 (big-endian)
//	optional int:    0 for nil, or 1 and a varint
//	ErrorCode:       uvarint(len), then the bytes
//	ErrorText:       optional string
//	Source:          absent for vin.SourceVPIC; one byte 1 for
//	                 vin.SourceSnapshot
//
// The source trailer was added without a schema version bump: records
// written before it read as vPIC answers, which they are, and a vPIC
// answer is written exactly as before, so a rolled-back binary still reads
// every record but a snapshot answer (which it treats as a miss). Any
// other change of the layout needs a schema version bump.

var errCorrupt = errors.New("corrupt record")

func encodeRecord(r vin.Result) []byte {
	b := make([]byte, 0, 256)
	b = appendOptString(b, r.Make)
	b = appendOptString(b, r.Model)
	b = appendOptString(b, r.ModelYear)
	b = appendOptString(b, r.Trim)
	b = appendOptString(b, r.Series)
	b = appendOptString(b, r.BodyClass)
	b = appendOptString(b, r.DriveType)
	b = appendOptFloat(b, r.EngineDisplacementCC)
	b = appendOptFloat(b, r.EngineDisplacementL)
	b = appendOptInt(b, r.EngineCylinders)
	b = appendOptString(b, r.FuelTypePrimary)
	b = appendOptString(b, r.TransmissionStyle)
	b = appendOptString(b, r.TransmissionSpeeds)
	b = appendOptString(b, r.PlantCity)
	b = appendOptString(b, r.PlantState)
	b = appendOptString(b, r.PlantCountry)
	b = appendOptString(b, r.ManufacturerName)
	b = appendOptString(b, r.VehicleType)
	b = binary.AppendUvarint(b, uint64(len(r.ErrorCode)))
	b = append(b, r.ErrorCode...)
	b = appendOptString(b, r.ErrorText)
	if r.Source == vin.SourceSnapshot {
		b = append(b, sourceSnapshot)
	}
	return b
}

// sourceSnapshot is the trailer byte of a snapshot answer.
const sourceSnapshot = 1

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(*s))+1)
	return append(b, *s...)
}

func appendOptFloat(b []byte, f *float64) []byte {
	if f == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return binary.BigEndian.AppendUint64(b, math.Float64bits(*f))
}

func appendOptInt(b []byte, n *int) []byte {
	if n == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	return binary.AppendVarint(b, int64(*n))
}

// decodeRecord reads a record written by encodeRecord. The strings it
// returns share one allocation, copied out of b (which bbolt owns).
func decodeRecord(b []byte, v string) (vin.Result, error) {
	d := decoder{s: string(b)}
	r := vin.Result{VIN: v}
	r.Make = d.optString()
	r.Model = d.optString()
	r.ModelYear = d.optString()
	r.Trim = d.optString()
	r.Series = d.optString()
	r.BodyClass = d.optString()
	r.DriveType = d.optString()
	r.EngineDisplacementCC = d.optFloat()
	r.EngineDisplacementL = d.optFloat()
	r.EngineCylinders = d.optInt()
	r.FuelTypePrimary = d.optString()
	r.TransmissionStyle = d.optString()
	r.TransmissionSpeeds = d.optString()
	r.PlantCity = d.optString()
	r.PlantState = d.optString()
	r.PlantCountry = d.optString()
	r.ManufacturerName = d.optString()
	r.VehicleType = d.optString()
	if n, ok := d.uvarint(); ok {
		r.ErrorCode = d.take(n)
	}
	r.ErrorText = d.optString()
	if !d.bad && d.i == len(d.s)-1 && d.s[d.i] == sourceSnapshot {
		r.Source = vin.SourceSnapshot
		d.i++
	}
	if d.bad || d.i != len(d.s) {
		return vin.Result{}, errCorrupt
	}
	return r, nil
}

type decoder struct {
	s   string
	i   int
	bad bool
}

func (d *decoder) uvarint() (uint64, bool) {
	if d.bad {
		return 0, false
	}
	n, k := binary.Uvarint([]byte(d.s[d.i:min(d.i+binary.MaxVarintLen64, len(d.s))]))
	if k <= 0 || k > 1 && d.s[d.i+k-1] == 0 { // overflow, short, or not minimal
		d.bad = true
		return 0, false
	}
	d.i += k
	return n, true
}

func (d *decoder) take(n uint64) string {
	if d.bad || n > uint64(len(d.s)-d.i) {
		d.bad = true
		return ""
	}
	s := d.s[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

func (d *decoder) optString() *string {
	n, ok := d.uvarint()
	if !ok || n == 0 {
		return nil
	}
	s := d.take(n - 1)
	if d.bad {
		return nil
	}
	return &s
}

func (d *decoder) flag() bool {
	if d.bad || d.i >= len(d.s) {
		d.bad = true
		return false
	}
	f := d.s[d.i]
	d.i++
	if f > 1 {
		d.bad = true
	}
	return f == 1
}

func (d *decoder) optFloat() *float64 {
	if !d.flag() {
		return nil
	}
	raw := d.take(8)
	if d.bad {
		return nil
	}
	f := math.Float64frombits(binary.BigEndian.Uint64([]byte(raw)))
	return &f
}

func (d *decoder) optInt() *int {
	if !d.flag() {
		return nil
	}
	n, k := binary.Varint([]byte(d.s[d.i:min(d.i+binary.MaxVarintLen64, len(d.s))]))
	if k <= 0 || k > 1 && d.s[d.i+k-1] == 0 || int64(int(n)) != n {
		d.bad = true
		return nil
	}
	d.i += k
	v := int(n)
	return &v
}
