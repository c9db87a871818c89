package requestid_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/requestid"
)

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestMiddleware(t *testing.T) {
	for _, tt := range []struct {
		name     string
		incoming string
		keep     bool
	}{
		{"absent", "", false},
		{"sane", "abc-123_X.y", true},
		{"max length", strings.Repeat("a", 128), true},
		{"too long", strings.Repeat("a", 129), false},
		{"space", "abc 123", false},
		{"newline injection", "abc\n{\"level\":\"ERROR\"}", false},
		{"unicode", "ключ", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := echo.New()
			var seen string
			e.Use(requestid.Middleware(slog.New(slog.DiscardHandler)))
			e.GET("/", func(c echo.Context) error {
				seen = requestid.FromContext(c.Request().Context())
				return c.NoContent(http.StatusNoContent)
			})
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			if tt.incoming != "" {
				req.Header.Set(requestid.Header, tt.incoming)
			}
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, req)
			got := rec.Header().Get(requestid.Header)
			if got != seen {
				t.Errorf("header %q != context id %q", got, seen)
			}
			if tt.keep && got != tt.incoming {
				t.Errorf("id = %q, want incoming %q kept", got, tt.incoming)
			}
			if !tt.keep && !uuidRE.MatchString(got) {
				t.Errorf("id = %q, want a fresh UUID", got)
			}
		})
	}
}
