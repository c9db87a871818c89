package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
	"github.com/gatewayapis/shared/reqbody/reqbodytest"
)

// TestHostileBodies sends the hostile bodies of decisions.md ("Both
// services: hostile input answered, never a 5xx") to a running patentsvc
// in production mode on PostgreSQL, over raw sockets, to POST
// /auth/refresh (under ROOT_PATH): each is a 400 with the service's error
// body (a 4xx for a request with both framing headers, read by its
// Transfer-Encoding), the connection closed and nothing pipelined behind it served; none
// is logged at ERROR or counted as a 5xx. A body that stops arriving waits
// for the server's read timeout (30 s), beside the others. The test runs
// in parallel with the package's others: it spends its time idle, waiting
// on that timeout.
func TestHostileBodies(t *testing.T) {
	t.Parallel()
	base, _, logs := start(t, map[string]string{
		"APP_ENV": "production", "JWT_SECRET": strings.Repeat("e2e-secret-", 4), "DATABASE_URL": storetest.DSN(t, store.Postgres),
		"BCRYPT_COST": "4", "ROOT_PATH": "/patents", "STORAGE_DIR": filepath.Join(t.TempDir(), "patents"),
	})
	host := strings.TrimPrefix(strings.TrimSuffix(base, "/patents"), "http://")
	t.Run("probes", func(t *testing.T) {
		reqbodytest.Run(t, host, "/patents/auth/refresh", "", 30*time.Second, func(b []byte) error {
			var e struct{ Detail string }
			if err := json.Unmarshal(b, &e); err != nil || e.Detail == "" {
				return fmt.Errorf("want patentsvc's error body, a detail")
			}
			return nil
		})
	})
	reqbodytest.NoServerFault(t, base+"/metrics", "/patents/auth/refresh", logs.String())
}
