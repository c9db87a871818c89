package store_test

import (
	"io"
	"log/slog"
)

func discard() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }
