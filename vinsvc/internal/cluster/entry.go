package cluster

import (
	"bytes"
	"compress/flate"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/gatewayapis/vinsvc/internal/vin"
)

// An answer in Redis is its entry as JSON, compressed with DEFLATE and a
// preset dictionary: a whole entry for a real vPIC answer (entry.dict).
// vPIC's raw record repeats about 150 key names and the same empty values
// in every answer, so the dictionary takes a 4 to 4.5 KB entry down to
// about 0.5 to 0.8 KB, which is what Redis's memory is sized by
// (docs/operations.md). The dictionary is part of the format: changing it
// needs a new recordKind version, which TestEntryDictionaryFixed enforces.

//go:embed entry.dict
var entryDict []byte

// entry is an answer as Redis keeps it.
type entry struct {
	// Expires is when the answer's lifetime ends (Unix ms); the key expires
	// with it.
	Expires int64           `json:"exp"`
	Result  vin.Result      `json:"result"`
	Raw     json.RawMessage `json:"raw,omitempty"`
}

// maxEntry bounds a decompressed entry: a real one is under 8 KB.
const maxEntry = 1 << 20

var errEntryTooLarge = errors.New("entry larger than 1 MiB when decompressed")

var writers = sync.Pool{New: func() any {
	w, err := flate.NewWriterDict(io.Discard, flate.DefaultCompression, entryDict)
	if err != nil {
		panic(err) // only for an invalid level
	}
	return w
}}

func encodeEntry(e entry) ([]byte, error) {
	plain, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := writers.Get().(*flate.Writer)
	defer writers.Put(w)
	w.Reset(&b)
	if _, err := w.Write(plain); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func decodeEntry(b []byte) (entry, error) {
	r := flate.NewReaderDict(bytes.NewReader(b), entryDict)
	defer r.Close()
	plain, err := io.ReadAll(io.LimitReader(r, maxEntry+1))
	if err != nil {
		return entry{}, err
	}
	if len(plain) > maxEntry {
		return entry{}, errEntryTooLarge
	}
	var e entry
	if err := json.Unmarshal(plain, &e); err != nil {
		return entry{}, err
	}
	return e, nil
}
