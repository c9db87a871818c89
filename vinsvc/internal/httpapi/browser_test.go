package httpapi_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gatewayapis/shared/apidocs/apidocstest"
	"github.com/gatewayapis/vinsvc/internal/vpic/vpictest"
)

// TestBrowserDocs loads GET /docs of the real router, over real HTTP, in a
// headless Chromium: the page shows every operation of the published
// document, "try it" on GET /v1/decode with the proxy secret typed into
// the Authorize dialog gets the fake vPIC's answer (200), and the page
// asks nothing of another origin, logs no console error and breaks no
// rule of its Content-Security-Policy. Without a browser it skips, saying
// so; REQUIRE_BROWSER=1 makes that a failure (.ci/run sets it).
func TestBrowserDocs(t *testing.T) {
	apidocstest.Browser(t)
	doc, _ := loadSpec(t)
	var want []string // Swagger UI's ids of the operation blocks
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, tag := range op.Tags {
				want = append(want, "operations-"+tag+"-"+op.OperationID)
			}
		}
	}
	slices.Sort(want)

	en := newEnv(t)
	srv := httptest.NewServer(en.e)
	t.Cleanup(srv.Close)
	p := apidocstest.Open(t, srv.URL+"/docs")

	got := p.OperationIDs()
	slices.Sort(got)
	if len(got) != len(want) || !slices.Equal(got, want) {
		t.Errorf("the page shows %d operations, the document has %d:\npage:     %v\ndocument: %v", len(got), len(want), got, want)
	}

	p.Authorize("ProxySecret", secret)
	status, body := p.TryIt("decode", "decodeVin", map[string]string{"vin": vpictest.VINHondaAccord})
	if status != 200 || !strings.Contains(body, `"make": "HONDA"`) {
		t.Errorf("try it GET /v1/decode: the page shows %d, body %.300s; want 200 with the decoded Honda", status, body)
	}
	if n := en.up.CallCount(); n != 1 {
		t.Errorf("the fake vPIC got %d calls, want the one the page's try it made", n)
	}
	decodes := slices.DeleteFunc(p.Requests(), func(u string) bool { return !strings.HasPrefix(u, srv.URL+"/v1/decode?") })
	if len(decodes) != 1 {
		t.Errorf("the page asked for %v, want one GET %s/v1/decode (the service that served it)", p.Requests(), srv.URL)
	}

	t.Logf("screenshot: %s", p.Screenshot("vinsvc-docs.png"))
	p.Check()
}
