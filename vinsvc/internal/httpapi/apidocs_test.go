package httpapi_test

import (
	"bytes"
	"net/http"
	"os"
	"testing"
)

// TestServedDocumentIsPublished: GET /openapi.yaml serves the published
// document (specPath, the one the conformance tests check) byte for byte,
// through the package's embedded copy, openapi.yaml.
func TestServedDocumentIsPublished(t *testing.T) {
	published, err := os.ReadFile(specPath)
	if err != nil {
		t.Fatal(err)
	}
	const fix = "run go generate ./internal/httpapi in vinsvc/ (or make api-docs) and commit the copy"
	if copied, err := os.ReadFile("openapi.yaml"); err != nil || !bytes.Equal(copied, published) {
		t.Fatalf("internal/httpapi/openapi.yaml is not %s byte for byte (%v): %s", specPath, err, fix)
	}
	en := newEnv(t)
	rec := en.do(t, request{target: "/openapi.yaml", noAuth: true})
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /openapi.yaml: status %d, body %s", rec.Code, rec.Body)
	}
	if !bytes.Equal(rec.Body.Bytes(), published) {
		t.Errorf("GET /openapi.yaml is not %s byte for byte: %s", specPath, fix)
	}
}
