package jobs

import (
	"context"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// ExpectedWait is expectedWait, for the tests.
var ExpectedWait = expectedWait

// Claim is claim: the job a JobStart's unit takes up.
func (r *Runner) Claim(ctx context.Context, unit int64) (patent.Job, bool, error) {
	return r.claim(ctx, unit)
}
