package httpapi_test

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gatewayapis/shared/apidocs/apidocstest"
)

// TestBrowserDocs loads GET ROOT_PATH/docs of the real router, over real
// HTTP, in a headless Chromium, with ROOT_PATH unset and set: the page
// shows every operation of the published document; "try it" on GET
// /models answers 200, and on GET /auth/me, with a bearer token typed into
// the Authorize dialog, 200 with the user, both sent to the service under
// its ROOT_PATH; and the page asks nothing of another origin, logs no
// console error and breaks no rule of its Content-Security-Policy.
// Without a browser it skips, saying so; REQUIRE_BROWSER=1 makes that a
// failure (.ci/run sets it).
func TestBrowserDocs(t *testing.T) {
	apidocstest.Browser(t)
	s := loadSpec(t)
	var want []string // Swagger UI's ids of the operation blocks
	for _, item := range s.doc.Paths.Map() {
		for _, op := range item.Operations() {
			for _, tag := range op.Tags {
				want = append(want, "operations-"+tag+"-"+op.OperationID)
			}
		}
	}
	slices.Sort(want)

	for _, tt := range []struct{ name, root string }{{"root", ""}, {"root-path", "/patents"}} {
		t.Run(tt.name, func(t *testing.T) {
			en := newEnv(t, withRootPath(tt.root))
			_, tokens := en.newUser(t, "reader@example.com")
			srv := httptest.NewServer(en.srv)
			t.Cleanup(srv.Close)
			base := srv.URL + tt.root
			p := apidocstest.Open(t, base+"/docs")

			got := p.OperationIDs()
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("the page shows %d operations, the document has %d:\npage:     %v\ndocument: %v", len(got), len(want), got, want)
			}

			status, body := p.TryIt("models", "listModels", nil)
			if status != 200 || !strings.Contains(body, `"default"`) {
				t.Errorf("try it GET %s/models: the page shows %d, body %.300s; want 200 with the models", tt.root, status, body)
			}
			p.Authorize("bearerAuth", tokens.AccessToken)
			status, body = p.TryIt("auth", "me", nil)
			if status != 200 || !strings.Contains(body, "reader@example.com") {
				t.Errorf("try it GET %s/auth/me with the token: the page shows %d, body %.300s; want 200 with the user", tt.root, status, body)
			}
			var calls []string
			for _, u := range p.Requests() {
				if strings.HasPrefix(u, base+"/models") || strings.HasPrefix(u, base+"/auth/me") {
					calls = append(calls, strings.TrimPrefix(u, base))
				}
			}
			if !slices.Equal(calls, []string{"/models", "/auth/me"}) {
				t.Errorf("the page asked for %v, want GET %s/models and GET %s/auth/me (the service that served it)", p.Requests(), base, base)
			}

			t.Logf("screenshot: %s", p.Screenshot("patentsvc-docs-"+tt.name+".png"))
			p.Check()
		})
	}
}
