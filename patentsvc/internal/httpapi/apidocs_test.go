package httpapi_test

import (
	"bytes"
	"net/http"
	"os"
	"testing"
)

// TestServedDocumentIsPublished: GET /openapi.yaml serves the published
// document (openAPIFile, the one the conformance tests check) byte for
// byte, through the package's embedded copy, openapi.yaml; under ROOT_PATH
// too.
func TestServedDocumentIsPublished(t *testing.T) {
	published, err := os.ReadFile(openAPIFile)
	if err != nil {
		t.Fatal(err)
	}
	const fix = "run go generate ./internal/httpapi in patentsvc/ (or make api-docs) and commit the copy"
	if copied, err := os.ReadFile("openapi.yaml"); err != nil || !bytes.Equal(copied, published) {
		t.Fatalf("internal/httpapi/openapi.yaml is not %s byte for byte (%v): %s", openAPIFile, err, fix)
	}
	for _, root := range []string{"", "/patents"} {
		en := newEnv(t, withRootPath(root))
		rec := en.do(t, request{target: "/openapi.yaml"})
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s/openapi.yaml: status %d, body %s", root, rec.Code, rec.Body)
		}
		if !bytes.Equal(rec.Body.Bytes(), published) {
			t.Errorf("GET %s/openapi.yaml is not %s byte for byte: %s", root, openAPIFile, fix)
		}
	}
}
