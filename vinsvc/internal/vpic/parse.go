package vpic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// record is one result record of a vPIC flat answer.
type record struct {
	fields    map[string]json.RawMessage
	raw       json.RawMessage
	echoedVIN string
}

type envelope struct {
	Message string            `json:"Message"`
	Results []json.RawMessage `json:"Results"`
}

// parseEnvelope decodes a vPIC flat-format answer into its records. It
// rejects anything that is not the JSON envelope with at least one object
// record: XML, HTML, truncated or empty bodies, an execution-error message.
func parseEnvelope(body []byte) ([]record, error) {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return nil, errors.New("empty answer")
	}
	if trimmed[0] != '{' {
		if trimmed[0] == '<' {
			return nil, errors.New("answer is XML or HTML, not JSON")
		}
		return nil, errors.New("answer is not a JSON object")
	}
	var env envelope
	if err := json.Unmarshal(trimmed, &env); err != nil {
		return nil, fmt.Errorf("answer is not valid JSON: %v", err)
	}
	if strings.Contains(strings.ToLower(env.Message), "execution error") {
		return nil, fmt.Errorf("upstream reported an error: %.200q", env.Message)
	}
	if len(env.Results) == 0 {
		return nil, errors.New("answer has no results")
	}
	recs := make([]record, 0, len(env.Results))
	for i, raw := range env.Results {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, fmt.Errorf("result %d is not an object", i)
		}
		r := record{fields: fields, raw: compact(raw)}
		r.echoedVIN, _ = r.str("VIN")
		r.echoedVIN = vin.Normalize(r.echoedVIN)
		recs = append(recs, r)
	}
	return recs, nil
}

// str returns the field's value as text, trimmed. Values are JSON strings in
// the flat format; a number is taken as its literal and null as absent.
func (r record) str(key string) (string, bool) {
	raw, ok := r.fields[key]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return strings.TrimSpace(s), true
	}
	t := strings.TrimSpace(string(raw))
	if t == "null" || t == "" || t[0] == '{' || t[0] == '[' || t[0] == '"' {
		return "", false
	}
	return t, true
}

// text maps a field to a result string: empty and "Not Applicable" are nil.
func (r record) text(key string) *string {
	s, ok := r.str(key)
	if !ok || s == "" || strings.EqualFold(s, "Not Applicable") {
		return nil
	}
	return &s
}

// number maps a field to a finite float, nil when absent or unparsable.
func (r record) number(key string) *float64 {
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
func (r record) integer(key string) *int {
	f := r.number(key)
	if f == nil || *f != math.Trunc(*f) || math.Abs(*f) > math.MaxInt32 {
		return nil
	}
	n := int(*f)
	return &n
}

// decoded maps the record for the VIN v (the normalised VIN asked for, which
// the answer carries whatever vPIC echoed).
func (r record) decoded(v string) (vin.Decoded, error) {
	code, ok := r.str("ErrorCode")
	if !ok || code == "" {
		return vin.Decoded{}, fmt.Errorf("%w: record for %s has no ErrorCode", ErrUpstream, v)
	}
	res := vin.Result{
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
	return vin.Decoded{Result: res, Raw: r.raw}, nil
}
