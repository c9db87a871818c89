package apidocstest_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/apidocs"
	"github.com/gatewayapis/shared/apidocs/apidocstest"
)

// serve serves the reference of document as the services do, at the root.
func serve(t *testing.T, document string) string {
	t.Helper()
	ref := apidocs.New("apidocstest", []byte(document))
	e := echo.New()
	e.GET("/openapi.yaml", ref.Document)
	e.GET("/docs", ref.Page)
	e.GET("/docs/:asset", ref.Asset)
	srv := httptest.NewServer(e)
	t.Cleanup(srv.Close)
	return srv.URL
}

const document = `openapi: 3.1.0
info:
  title: apidocstest
  version: 1.0.0
  description: DESCRIPTION
paths:
  /ping:
    get:
      operationId: ping
      tags: [probe]
      responses:
        "204":
          description: Pong.
`

// TestProblemsFound: the checks are not vacuous. A document whose
// description shows an image from another origin makes the page try to
// load it, which the Content-Security-Policy refuses: Problems must name
// it; the same page without the image has none.
func TestProblemsFound(t *testing.T) {
	apidocstest.Browser(t)
	clean := apidocstest.Open(t, serve(t, strings.Replace(document, "DESCRIPTION", "No image.", 1))+"/docs")
	if got := clean.Operations(); got != 1 {
		t.Errorf("Operations() = %d, want 1", got)
	}
	if problems := clean.Problems(); len(problems) > 0 {
		t.Errorf("a clean page has problems: %q", problems)
	}

	p := apidocstest.Open(t, serve(t, strings.Replace(document, "DESCRIPTION", `"![logo](http://127.0.0.2:9/logo.png)"`, 1))+"/docs")
	problems := strings.Join(p.Problems(), "\n")
	if !strings.Contains(problems, "Content-Security-Policy violation: img-src blocked http://127.0.0.2:9/logo.png") {
		t.Errorf("an image from another origin is not reported as a CSP violation; problems:\n%s", problems)
	}
}
