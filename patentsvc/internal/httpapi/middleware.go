package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/ratelimit"
	"github.com/gatewayapis/shared/httperr"
)

const userKey = "httpapi.user"

// requireUser authenticates the bearer token and loads its user (from the
// database, on every request). Missing or rejected tokens are 401 with
// WWW-Authenticate: Bearer.
func requireUser(users Users) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			h := c.Request().Header.Get(echo.HeaderAuthorization)
			scheme, token, ok := strings.Cut(h, " ")
			if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
				return httperr.Wrap(auth.ErrInvalidToken, http.StatusUnauthorized, "Not authenticated")
			}
			u, err := users.Authenticate(c.Request().Context(), strings.TrimSpace(token))
			if err != nil {
				return err
			}
			c.Set(userKey, u)
			return next(c)
		}
	}
}

// requireAdmin answers 403 to an authenticated non-admin.
func requireAdmin() echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			if currentUser(c).Role != patent.RoleAdmin {
				return httperr.New(http.StatusForbidden, "Admin privileges required")
			}
			return next(c)
		}
	}
}

func currentUser(c echo.Context) patent.User {
	u, _ := c.Get(userKey).(patent.User)
	return u
}

// rateLimit counts every request to the endpoint and refuses those over
// the window with 429, Retry-After (whole seconds until a place frees, 1 to
// 60; 60 when unknown) and {"detail": "Rate limit exceeded: <limit>"}.
// The window never fails a request: when its shared store cannot answer,
// the process's own window decides (package ratelimit).
func rateLimit(w *ratelimit.Window) echo.MiddlewareFunc {
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error {
			ok, retry := w.Allow(c.Request().Context(), c.RealIP())
			if ok {
				return next(c)
			}
			secs := int(math.Ceil(retry.Seconds()))
			if secs < 1 || secs > 60 {
				secs = 60
			}
			c.Response().Header().Set(echo.HeaderRetryAfter, strconv.Itoa(secs))
			return httperr.New(http.StatusTooManyRequests, fmt.Sprintf("Rate limit exceeded: %s", w.Limit()))
		}
	}
}
