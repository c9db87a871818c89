package vpic

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// record is one result record of a vPIC flat answer.
type record struct {
	flat      vin.FlatRecord
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
		flat, err := vin.ParseFlatRecord(compact(raw))
		if err != nil {
			return nil, fmt.Errorf("result %d is not an object", i)
		}
		r := record{flat: flat, raw: flat.Raw()}
		r.echoedVIN, _ = flat.Str("VIN")
		r.echoedVIN = vin.Normalize(r.echoedVIN)
		recs = append(recs, r)
	}
	return recs, nil
}

// decoded maps the record for the VIN v (the normalised VIN asked for, which
// the answer carries whatever vPIC echoed).
func (r record) decoded(v string) (vin.Decoded, error) {
	d, err := r.flat.Decoded(v)
	if err != nil { // the record has no ErrorCode
		return vin.Decoded{}, fmt.Errorf("%w: record for %s has no ErrorCode", ErrUpstream, v)
	}
	return d, nil
}
