package observe_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/httperr"
	"github.com/gatewayapis/shared/observe"
)

func TestProbes(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&logs, nil))
	e := echo.New()
	e.HTTPErrorHandler = httperr.NewHandler(logger, nil, func(c echo.Context, he *httperr.Error) error {
		return c.JSON(he.Status, map[string]any{"code": he.Code, "message": he.Message})
	})
	var down error
	var deadline time.Time
	e.GET("/livez", observe.Livez())
	e.GET("/readyz", observe.Readyz(func(ctx context.Context) error {
		deadline, _ = ctx.Deadline()
		return down
	}, 2*time.Second, "store unavailable", logger))

	for _, tt := range []struct {
		name, path string
		down       error
		status     int
		body       string
	}{
		{"live", "/livez", nil, 200, `{"status":"ok"}`},
		{"live while the store is down", "/livez", errors.New("disk gone"), 200, `{"status":"ok"}`},
		{"ready", "/readyz", nil, 200, `{"status":"ready"}`},
		{"not ready", "/readyz", errors.New("disk gone"), 503, `{"code":"SERVICE_UNAVAILABLE","message":"store unavailable"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			down, logs = tt.down, bytes.Buffer{}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.path, nil))
			if rec.Code != tt.status || strings.TrimSpace(rec.Body.String()) != tt.body {
				t.Errorf("GET %s = %d %s, want %d %s", tt.path, rec.Code, rec.Body, tt.status, tt.body)
			}
			if got := rec.Header().Get("Cache-Control"); got != "no-store" {
				t.Errorf("GET %s Cache-Control = %q, want no-store", tt.path, got)
			}
			if tt.status == 503 && !strings.Contains(logs.String(), "disk gone") {
				t.Errorf("the failure is not logged: %s", logs.String())
			}
		})
	}
	if left := time.Until(deadline); left <= 0 || left > 2*time.Second {
		t.Errorf("readiness check ran with %v left, want the 2s timeout", left)
	}
}
