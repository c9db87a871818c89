package httpapi

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// A cache-hit decode is the service's hot path, so its body is written by
// hand instead of through encoding/json's reflection. The output is byte for
// byte what encoding/json (with HTML escaping off, as jsonSerializer does)
// writes for the same resultJSON; FuzzAppendResult holds it to that.

// MarshalJSON lets encoding/json (the batch body) use the same writer.
func (r resultJSON) MarshalJSON() ([]byte, error) { return r.appendJSON(make([]byte, 0, 768)), nil }

func (r *resultJSON) appendJSON(b []byte) []byte {
	b = append(b, `{"vin":`...)
	b = appendString(b, r.VIN)
	b = appendOptString(b, `,"make":`, r.Make)
	b = appendOptString(b, `,"model":`, r.Model)
	b = appendOptString(b, `,"model_year":`, r.ModelYear)
	b = appendOptString(b, `,"trim":`, r.Trim)
	b = appendOptString(b, `,"series":`, r.Series)
	b = appendOptString(b, `,"body_class":`, r.BodyClass)
	b = appendOptString(b, `,"drive_type":`, r.DriveType)
	b = appendOptFloat(b, `,"engine_displacement_cc":`, r.EngineDisplacementCC)
	b = appendOptFloat(b, `,"engine_displacement_l":`, r.EngineDisplacementL)
	b = append(b, `,"engine_cylinders":`...)
	if r.EngineCylinders == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*r.EngineCylinders), 10)
	}
	b = appendOptString(b, `,"fuel_type_primary":`, r.FuelTypePrimary)
	b = appendOptString(b, `,"transmission_style":`, r.TransmissionStyle)
	b = appendOptString(b, `,"transmission_speeds":`, r.TransmissionSpeeds)
	b = appendOptString(b, `,"plant_city":`, r.PlantCity)
	b = appendOptString(b, `,"plant_state":`, r.PlantState)
	b = appendOptString(b, `,"plant_country":`, r.PlantCountry)
	b = appendOptString(b, `,"manufacturer_name":`, r.ManufacturerName)
	b = appendOptString(b, `,"vehicle_type":`, r.VehicleType)
	b = append(b, `,"error_code":`...)
	b = appendString(b, r.ErrorCode)
	b = appendOptString(b, `,"error_text":`, r.ErrorText)
	b = append(b, `,"cached":`...)
	b = strconv.AppendBool(b, r.Cached)
	b = append(b, `,"source":`...)
	b = appendString(b, r.Source)
	if len(r.Raw) > 0 {
		// Raw is the upstream's record as received, already compact JSON
		// (vpic validates and compacts it).
		b = append(b, `,"raw":`...)
		b = append(b, r.Raw...)
	}
	return append(b, '}')
}

func appendOptString(b []byte, key string, s *string) []byte {
	b = append(b, key...)
	if s == nil {
		return append(b, "null"...)
	}
	return appendString(b, *s)
}

// appendOptFloat formats like encoding/json: no exponent between 1e-6 and
// 1e21, a short exponent outside. Callers never pass NaN or ±Inf (vpic
// drops them), which JSON cannot carry.
func appendOptFloat(b []byte, key string, f *float64) []byte {
	b = append(b, key...)
	if f == nil {
		return append(b, "null"...)
	}
	fmtc := byte('f')
	if abs := math.Abs(*f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		fmtc = 'e'
	}
	b = strconv.AppendFloat(b, *f, fmtc, -1, 64)
	if fmtc == 'e' {
		// Turn e-09 into e-9, as encoding/json does.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does with
// HTML escaping off: invalid UTF-8 becomes U+FFFD, U+2028 and U+2029 are
// escaped for JavaScript.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
