package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
)

// decodeJSON reads the request body into dst. A body that is not JSON is a
// 400 (decisions.md: malformed JSON); well-formed JSON with a value of the
// wrong type is a 422 naming the field. Unknown fields are ignored.
func decodeJSON(c echo.Context, dst any) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err // the body limit's 413, or a broken connection
	}
	if len(body) == 0 {
		return httperr.New(http.StatusBadRequest, "Malformed JSON: the request body is empty")
	}
	if err := json.Unmarshal(body, dst); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			field := typ.Field
			if field == "" {
				field = "body" // the body itself is not an object
			}
			msg := fmt.Sprintf("%s must be %s, got %s", field, kindOf(typ.Type.Kind().String()), typ.Value)
			return httperr.New(http.StatusUnprocessableEntity, msg).
				WithFields(httperr.FieldError{Field: field, Message: msg})
		}
		return httperr.Newf(http.StatusBadRequest, "Malformed JSON: %v", err)
	}
	return nil
}

func kindOf(k string) string {
	switch k {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

// intParam parses a whole-number path or query value for field, within
// [lo, hi]; anything else is a 422.
func intParam(field, v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, invalid(field, fmt.Errorf("%s must be a whole number from %d to %d", field, lo, hi))
	}
	return n, nil
}
