// Package route applies middleware once, when it is registered, not on
// every request.
//
// Echo v4 applies the middleware given to e.GET, g.POST and the like anew
// on every request: each call wraps the handler again, one closure per
// middleware per request (echo.go, Echo.add). Passing Wrap(h, mw...) as
// the handler, with no route middleware, builds the same chain once. The
// same goes for e.Use (Echo.ServeHTTP applies it to the handler the
// router found, per request); Use builds that chain once. The order is
// Echo's: the first middleware runs first.
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

// Use registers mw on e as e.Use(mw...) would, around the handler the
// router finds for every request (a route, or Echo's 404 and 405
// handlers), but builds the chain once: the innermost step calls the
// request's handler (c.Handler(), which is what Echo passes as next), and
// e's only middleware returns the chain, whatever it is given. Call it
// once per Echo, instead of e.Use.
func Use(e *echo.Echo, mw ...echo.MiddlewareFunc) {
	chain := Wrap(func(c echo.Context) error { return c.Handler()(c) }, mw...)
	e.Use(func(echo.HandlerFunc) echo.HandlerFunc { return chain })
}
