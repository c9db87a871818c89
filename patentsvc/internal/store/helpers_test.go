package store_test

import (
	"io"
	"log/slog"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
)

func discard() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// finishJob ends job id, held by unit, with status, its result and the
// error message of a failed job, without webhooks (FinishJob).
func finishJob(s *store.Store, id string, unit int64, status string, result *patent.BatchResult, errMsg string) error {
	j := patent.Job{ID: id, Status: status, Result: result}
	if errMsg != "" {
		j.Error = &errMsg
	}
	return s.Jobs().FinishJob(ctx, j, unit, nil)
}
