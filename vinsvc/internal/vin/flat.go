package vin

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FlatRecord is one record of vPIC's flat decode format (DecodeVinValues):
// a JSON object of about 150 string fields named after vPIC's elements
// (Make, Model, ModelYear, BodyClass, ErrorCode, ...). vPIC answers in it,
// and the snapshot decoder produces it, so both map to a Result by the
// same rules.
type FlatRecord struct {
	fields map[string]json.RawMessage // from ParseFlatRecord
	strs   map[string]string          // from NewFlatRecord
	raw    json.RawMessage
}

// NewFlatRecord is a record its producer already holds as strings (the
// snapshot decoder): values by key, and raw, the same record as JSON, kept
// as Raw. It saves reading raw back.
func NewFlatRecord(values map[string]string, raw json.RawMessage) FlatRecord {
	return FlatRecord{strs: values, raw: raw}
}

// ParseFlatRecord reads one record. raw must be a JSON object; it is kept
// as given (Raw of the Decoded), but for its string values that held
// control characters or invalid UTF-8, cleaned (CleanRecord).
func ParseFlatRecord(raw json.RawMessage) (FlatRecord, error) {
	raw = CleanRecord(raw)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return FlatRecord{}, errors.New("record is not a JSON object")
	}
	return FlatRecord{fields: fields, raw: raw}, nil
}

// Raw returns the record as given to ParseFlatRecord.
func (r FlatRecord) Raw() json.RawMessage { return r.raw }

// Str returns the field's value as text, cleaned (CleanText) and
// trimmed. Values are JSON strings in the flat format; a number is taken
// as its literal and null as absent.
func (r FlatRecord) Str(key string) (string, bool) {
	if r.strs != nil {
		v, ok := r.strs[key]
		return strings.TrimSpace(CleanText(v)), ok
	}
	raw, ok := r.fields[key]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(CleanText(s)), true
	}
	t := strings.TrimSpace(string(raw))
	if t == "null" || t == "" || t[0] == '{' || t[0] == '[' || t[0] == '"' {
		return "", false
	}
	return t, true
}

// text maps a field to a result string: empty and "Not Applicable" are nil.
func (r FlatRecord) text(key string) *string {
	s, ok := r.Str(key)
	if !ok || s == "" || strings.EqualFold(s, "Not Applicable") {
		return nil
	}
	return &s
}

// number maps a field to a finite float, nil when absent or unparsable.
func (r FlatRecord) number(key string) *float64 {
	s := r.text(key)
	if s == nil {
		return nil
	}
	f, err := strconv.ParseFloat(*s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || strings.ContainsAny(*s, "xXpP_") {
		return nil
	}
	return &f
}

// integer maps a field to an int, nil when absent, fractional or unparsable.
func (r FlatRecord) integer(key string) *int {
	f := r.number(key)
	if f == nil || *f != math.Trunc(*f) || math.Abs(*f) > math.MaxInt32 {
		return nil
	}
	n := int(*f)
	return &n
}

// Decoded maps the record for the VIN v (the normalised VIN asked for,
// whatever the record echoes). A record without an ErrorCode is no decode:
// the error wraps ErrUpstream.
func (r FlatRecord) Decoded(v string) (Decoded, error) {
	code, ok := r.Str("ErrorCode")
	if !ok || code == "" {
		return Decoded{}, fmt.Errorf("%w: record for %s has no ErrorCode", ErrUpstream, v)
	}
	res := Result{
		VIN:                  v,
		Make:                 r.text("Make"),
		Model:                r.text("Model"),
		ModelYear:            r.text("ModelYear"),
		Trim:                 r.text("Trim"),
		Series:               r.text("Series"),
		BodyClass:            r.text("BodyClass"),
		DriveType:            r.text("DriveType"),
		EngineDisplacementCC: r.number("DisplacementCC"),
		EngineDisplacementL:  r.number("DisplacementL"),
		EngineCylinders:      r.integer("EngineCylinders"),
		FuelTypePrimary:      r.text("FuelTypePrimary"),
		TransmissionStyle:    r.text("TransmissionStyle"),
		TransmissionSpeeds:   r.text("TransmissionSpeeds"),
		PlantCity:            r.text("PlantCity"),
		PlantState:           r.text("PlantState"),
		PlantCountry:         r.text("PlantCountry"),
		ManufacturerName:     r.text("Manufacturer"),
		VehicleType:          r.text("VehicleType"),
		ErrorCode:            code,
	}
	if code != "0" {
		res.ErrorText = r.text("ErrorText")
	}
	return Decoded{Result: res, Raw: r.raw}, nil
}
