package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// MaxBatch is the most VINs one POST /v1/batch may hold.
const MaxBatch = 50

// batchKey holds the parsed body between the rate limiter (which needs the
// VIN count for the cost) and the handler.
const batchKey = "httpapi.batch"

type batchRequest struct {
	items []string
	err   error
}

// batchCost reads and parses the body once, for the limiter and the
// handler: a batch costs one token per VIN; a body that does not parse
// costs one.
func batchCost(c echo.Context) int {
	req := readBatch(c)
	c.Set(batchKey, req)
	if req.err != nil {
		return 1
	}
	return len(req.items)
}

func readBatch(c echo.Context) batchRequest {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return batchRequest{err: err} // the body limit's 413, or a broken connection
	}
	items, err := parseBatchBody(body)
	return batchRequest{items: items, err: err}
}

// parseBatchBody checks the shape of a batch body: a JSON object whose vins
// is an array of 1 to MaxBatch strings. Whether each string is a valid VIN
// is not its concern: an invalid VIN fails only its own entry.
func parseBatchBody(body []byte) ([]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case len(body) == 0:
			return nil, badRequest("request body is required: {\"vins\": [...]}")
		case errors.As(err, &syn):
			return nil, badRequest("request body is not valid JSON: %v", err)
		case errors.As(err, &typ):
			return nil, badRequest("request body must be a JSON object, got %s", typ.Value)
		}
		return nil, badRequest("request body is not valid JSON: %v", err)
	}
	raw, ok := obj["vins"]
	if obj == nil || !ok || string(raw) == "null" {
		return nil, badRequest("request body must have a \"vins\" array of 1 to %d strings", MaxBatch)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, badRequest("\"vins\" must be an array of 1 to %d strings", MaxBatch)
	}
	if len(items) == 0 || len(items) > MaxBatch {
		return nil, badRequest("\"vins\" must hold 1 to %d VINs, got %d", MaxBatch, len(items))
	}
	vins := make([]string, len(items))
	for i, it := range items {
		if len(it) == 0 || it[0] != '"' || json.Unmarshal(it, &vins[i]) != nil {
			return nil, badRequest("\"vins\"[%d] must be a string, got %s", i, jsonKind(it))
		}
	}
	return vins, nil
}

func jsonKind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a number"
}

// handleBatch serves POST /v1/batch[?raw=]. Each VIN is handled on its
// own: an invalid one becomes an INVALID_VIN entry, one the upstream failed
// an UPSTREAM_ERROR entry, and duplicates are decoded once and reported at
// each of their positions.
func handleBatch(dec Decoder) echo.HandlerFunc {
	return func(c echo.Context) error {
		req, ok := c.Get(batchKey).(batchRequest)
		if !ok {
			req = readBatch(c) // rate limiting is off
		}
		if req.err != nil {
			return req.err
		}
		withRaw, err := parseRaw(paramOf(c.QueryParams()["raw"]))
		if err != nil {
			return err
		}

		norm := make([]string, len(req.items))
		invalid := make([]error, len(req.items))
		index := make(map[string]int, len(req.items)) // VIN -> position in unique
		var unique []string
		for i, item := range req.items {
			norm[i], invalid[i] = vin.Parse(item)
			if invalid[i] != nil {
				continue
			}
			if _, seen := index[norm[i]]; !seen {
				index[norm[i]] = len(unique)
				unique = append(unique, norm[i])
			}
		}
		var outs []vin.Outcome
		if len(unique) > 0 {
			outs = dec.DecodeBatch(c.Request().Context(), unique, withRaw)
		}

		resp := batchJSON{Results: make([]any, len(req.items)), Count: len(req.items)}
		for i := range req.items {
			if invalid[i] != nil {
				resp.Results[i] = itemErrorJSON{VIN: norm[i], Error: codeInvalidVIN, Message: invalid[i].Error()}
				resp.ErrorCount++
				continue
			}
			o := outs[index[norm[i]]]
			if o.Err != nil {
				resp.Results[i] = itemErrorJSON{VIN: norm[i], Error: codeUpstream, Message: itemMessage(o.Err)}
				resp.ErrorCount++
				continue
			}
			if o.Cached {
				resp.CachedCount++
			}
			resp.Results[i] = fromOutcome(o, withRaw)
		}
		c.Response().Header().Set("X-Data-Source", batchSource(resp.Results, dec))
		return c.JSON(http.StatusOK, resp)
	}
}

// batchSource is the batch's X-Data-Source (decisions.md): the snapshot's
// only when every decoded item came from it, vPIC's otherwise.
func batchSource(results []any, dec Decoder) string {
	decoded, fromSnapshot := 0, 0
	for _, r := range results {
		if res, ok := r.(resultJSON); ok {
			decoded++
			if res.Source == vin.SourceSnapshot {
				fromSnapshot++
			}
		}
	}
	if decoded > 0 && fromSnapshot == decoded {
		return vin.DataSourceOf(vin.SourceSnapshot, dec.Snapshot().Date)
	}
	return vin.DataSource
}

// itemMessage is the client-facing text for a VIN the upstream failed.
func itemMessage(err error) string {
	if e := classify(err); e != nil && e.Code == codeUpstream {
		return e.Message
	}
	return fmt.Sprintf("could not decode: %s", "internal error")
}
