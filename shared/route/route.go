// Package route applies route middleware once, when a route is registered.
//
// Echo v4 applies the middleware given to e.GET, g.POST and the like anew
// on every request: each call wraps the handler again, one closure per
// middleware per request (echo.go, Echo.add). Passing Wrap(h, mw...) as
// the handler, with no route middleware, builds the same chain once. The
// order is Echo's: the first middleware runs first.
package route

import "github.com/labstack/echo/v4"

// Wrap returns h behind mw, the first of mw outermost, as Echo's route
// middleware would run them.
func Wrap(h echo.HandlerFunc, mw ...echo.MiddlewareFunc) echo.HandlerFunc {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}
