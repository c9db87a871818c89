package store

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A keyset cursor names the last row of a page: its sort time at
// microsecond precision (what the database keeps) and its id, which breaks
// ties. It is opaque to clients (base64url); a cursor that does not decode
// starts the listing from the beginning (the spec's rule for malformed
// cursors). A well-formed but forged cursor only moves the start.
type cursor struct {
	at time.Time
	id string
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at.UnixMicro(), 10) + "." + id))
}

func decodeCursor(s string) (cursor, bool) {
	if s == "" || len(s) > 200 {
		return cursor{}, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false
	}
	micros, id, ok := strings.Cut(string(raw), ".")
	if !ok || id == "" {
		return cursor{}, false
	}
	us, err := strconv.ParseInt(micros, 10, 64)
	if err != nil || us < 0 {
		return cursor{}, false
	}
	return cursor{at: time.UnixMicro(us).UTC(), id: id}, true
}

func (c cursor) String() string { return fmt.Sprintf("%s/%s", c.at.Format(time.RFC3339Nano), c.id) }
