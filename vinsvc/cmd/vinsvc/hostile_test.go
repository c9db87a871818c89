package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/shared/reqbody/reqbodytest"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// TestHostileBodies sends the hostile bodies of decisions.md ("Both
// services: hostile input answered, never a 5xx") to a running vinsvc over
// raw sockets: each is a 400 BAD_REQUEST (a request with both framing
// headers is read by its Transfer-Encoding, and its empty body refused)
// with the connection closed and nothing pipelined behind it served, none is logged at ERROR, and none is
// counted as a 5xx. A body that stops arriving waits for the server's read
// timeout (10 s), beside the others.
func TestHostileBodies(t *testing.T) {
	up := vpictest.New(t)
	base, _, logs := start(t, map[string]string{
		"APP_ENV": "production", "PROXY_SECRET": "e2e-proxy-secret-16", "VPIC_BASE_URL": up.BaseURL(),
		"CACHE_PATH": filepath.Join(t.TempDir(), "vincache.db"), "UPSTREAM_CHECK_INTERVAL": "1h", "RATE_LIMITS": "off",
	})
	t.Run("probes", func(t *testing.T) {
		reqbodytest.Run(t, strings.TrimPrefix(base, "http://"), "/v1/batch", "X-Gateway-Proxy-Secret: e2e-proxy-secret-16\r\n",
			10*time.Second, func(b []byte) error {
				var e struct {
					Error, Message string
					Status         int
				}
				if err := json.Unmarshal(b, &e); err != nil || e.Error != "BAD_REQUEST" || e.Status != 400 || e.Message == "" {
					return fmt.Errorf("want vinsvc's error body, BAD_REQUEST")
				}
				return nil
			})
	})
	reqbodytest.NoServerFault(t, base+"/metrics", "/v1/batch", logs.String())
}
