package requestid_test

import (
	"context"
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

// TestMiddlewareContext checks that the request's context keeps what it
// carried before (values, cancellation) besides the id, and that Logger
// adds the id.
func TestMiddlewareContext(t *testing.T) {
	type key struct{}
	var logs strings.Builder
	e := echo.New()
	e.Use(requestid.Middleware(slog.New(slog.NewJSONHandler(&logs, nil))))
	e.GET("/", func(c echo.Context) error {
		ctx := c.Request().Context()
		if got := ctx.Value(key{}); got != "outer" {
			t.Errorf("ctx.Value(outer key) = %v, want outer", got)
		}
		if got := requestid.FromContext(context.WithValue(ctx, key{}, "inner")); got != "id-1" {
			t.Errorf("FromContext(derived ctx) = %q, want id-1", got)
		}
		cancel := c.Get("cancel").(context.CancelFunc)
		cancel()
		if ctx.Err() == nil {
			t.Error("ctx.Err() = nil after the outer context's cancel")
		}
		requestid.Logger(ctx, nil).Info("hello")
		return c.NoContent(http.StatusNoContent)
	})
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "outer"))
	defer cancel()
	req := httptest.NewRequest(http.MethodGet, "/", nil).WithContext(ctx)
	req.Header.Set(requestid.Header, "id-1")
	e.Pre(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { c.Set("cancel", cancel); return next(c) }
	})
	e.ServeHTTP(httptest.NewRecorder(), req)
	if !strings.Contains(logs.String(), `"request_id":"id-1"`) {
		t.Errorf("log = %s, want request_id id-1", logs.String())
	}
	if got := requestid.FromContext(context.Background()); got != "" {
		t.Errorf("FromContext(outside a request) = %q, want empty", got)
	}
}

// recordScope adds its name under its own key and records Enter and Exit.
type recordScope struct {
	name  string
	calls *[]string
}

type scopeKey string

func (s recordScope) Enter(c echo.Context, parent context.Context) context.Context {
	*s.calls = append(*s.calls, "enter "+s.name)
	return context.WithValue(parent, scopeKey(s.name), s.name)
}

func (s recordScope) Exit(c echo.Context, ctx context.Context, err error) {
	got := "<nil>"
	if err != nil {
		got = err.Error()
	}
	// The context at Exit is the request's: the id and both scopes' values.
	*s.calls = append(*s.calls, "exit "+s.name+" "+got+" "+requestid.FromContext(ctx)+" "+ctx.Value(scopeKey("a")).(string)+ctx.Value(scopeKey("b")).(string))
}

// TestMiddlewareScopes checks that scopes build into the one context the
// request gets, enter in order, exit in reverse with the chain's error,
// and that nil scopes are skipped.
func TestMiddlewareScopes(t *testing.T) {
	var calls []string
	e := echo.New()
	e.Use(requestid.Middleware(slog.New(slog.DiscardHandler), recordScope{"a", &calls}, nil, recordScope{"b", &calls}))
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ctx := c.Request().Context()
			calls = append(calls, "handler "+ctx.Value(scopeKey("a")).(string)+ctx.Value(scopeKey("b")).(string))
			return next(c)
		}
	})
	e.GET("/", func(c echo.Context) error { return echo.NewHTTPError(http.StatusTeapot, "no") })
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set(requestid.Header, "id-2")
	e.ServeHTTP(httptest.NewRecorder(), req)
	want := []string{"enter a", "enter b", "handler ab", "exit b code=418, message=no id-2 ab", "exit a code=418, message=no id-2 ab"}
	if strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls = %q, want %q", calls, want)
	}
}
