package apidocs_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/gatewayapis/shared/apidocs"
)

const document = "openapi: 3.1.0\ninfo: {title: t, version: 1.0.0}\npaths: {}\n"

// newServer registers the reference under base as the services do.
func newServer(t *testing.T, base string) *echo.Echo {
	t.Helper()
	ref := apidocs.New(`Test API <reference> & "docs"`, []byte(document))
	e := echo.New()
	g := e.Group(base)
	g.GET("/openapi.yaml", ref.Document)
	g.GET("/docs", ref.Page)
	g.GET("/docs/:asset", ref.Asset)
	return e
}

func get(e *echo.Echo, target string, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	e.ServeHTTP(rec, req)
	return rec
}

// pageRefs are the page's src and href attributes.
var pageRefs = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// TestPage: the page is the title (escaped) and references, all relative
// and all served; it has no inline script or style.
func TestPage(t *testing.T) {
	for _, base := range []string{"", "/patents"} {
		t.Run("base="+base, func(t *testing.T) {
			e := newServer(t, base)
			rec := get(e, base+"/docs")
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s/docs: status %d, body %s", base, rec.Code, rec.Body)
			}
			page := rec.Body.String()
			if !strings.Contains(page, "<title>Test API &lt;reference&gt; &amp; &#34;docs&#34;</title>") {
				t.Errorf("the page's title is not the escaped title:\n%s", page)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("Content-Type = %q, want text/html; charset=utf-8", ct)
			}
			// No inline script, no inline style: the CSP would refuse them.
			for _, s := range regexp.MustCompile(`(?s)<script[^>]*>(.*?)</script>`).FindAllStringSubmatch(page, -1) {
				if !strings.Contains(s[0], ` src="`) || strings.TrimSpace(s[1]) != "" {
					t.Errorf("inline script: %s", s[0])
				}
			}
			if regexp.MustCompile(`<style|\sstyle=|\son[a-z]+=`).MatchString(page) {
				t.Errorf("inline style or event handler in the page:\n%s", page)
			}
			refs := pageRefs.FindAllStringSubmatch(page, -1)
			if len(refs) < 5 {
				t.Fatalf("the page references %d files, want the bundle, the script, two styles and the icons", len(refs))
			}
			for _, m := range refs {
				ref := m[1]
				if strings.Contains(ref, ":") || strings.HasPrefix(ref, "/") {
					t.Errorf("reference %q is not relative to the page: it would not follow the base", ref)
					continue
				}
				// The page is <base>/docs: a relative reference resolves
				// against <base>/.
				if rec := get(e, base+"/"+ref); rec.Code != http.StatusOK {
					t.Errorf("the page references %s, which answers %d", ref, rec.Code)
				}
			}
		})
	}
}

// TestResponses: each response's type, body and headers, 304 on a matching
// ETag, gzip when accepted, 404 for an unknown asset.
func TestResponses(t *testing.T) {
	e := newServer(t, "")
	for _, tt := range []struct {
		target, contentType string
		gzip                bool
		file                string // the embedded source, when known
	}{
		{"/openapi.yaml", "application/yaml", false, ""},
		{"/docs", "text/html; charset=utf-8", false, ""},
		{"/docs/swagger-ui-bundle.js", "text/javascript; charset=utf-8", true, "swagger-ui/swagger-ui-bundle.js"},
		{"/docs/swagger-ui.css", "text/css; charset=utf-8", true, "swagger-ui/swagger-ui.css"},
		{"/docs/docs.js", "text/javascript; charset=utf-8", true, "docs.js"},
		{"/docs/docs.css", "text/css; charset=utf-8", true, "docs.css"},
		{"/docs/favicon-32x32.png", "image/png", false, "swagger-ui/favicon-32x32.png"},
		{"/docs/favicon-16x16.png", "image/png", false, "swagger-ui/favicon-16x16.png"},
	} {
		t.Run(tt.target, func(t *testing.T) {
			rec := get(e, tt.target)
			if rec.Code != http.StatusOK {
				t.Fatalf("status %d, want 200", rec.Code)
			}
			h := rec.Header()
			for k, want := range map[string]string{
				"Content-Type":            tt.contentType,
				"Content-Security-Policy": apidocs.CSP,
				"X-Content-Type-Options":  "nosniff",
				"Cache-Control":           "no-cache",
				"Content-Encoding":        "",
			} {
				if got := h.Get(k); got != want {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			switch {
			case tt.target == "/openapi.yaml":
				if rec.Body.String() != document {
					t.Errorf("the document is not served as given:\n%s", rec.Body)
				}
			case tt.file != "":
				if want, err := os.ReadFile(tt.file); err != nil || !bytes.Equal(rec.Body.Bytes(), want) {
					t.Errorf("body differs from %s (%v)", tt.file, err)
				}
			}
			etag := h.Get("ETag")
			if !regexp.MustCompile(`^"[0-9a-f]{32}"$`).MatchString(etag) {
				t.Fatalf("ETag = %q, want a quoted hash", etag)
			}
			for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
				if rec := get(e, tt.target, "If-None-Match", inm); rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
					t.Errorf("If-None-Match %s: status %d with %d bytes, want 304 and none", inm, rec.Code, rec.Body.Len())
				}
			}
			if rec := get(e, tt.target, "If-None-Match", `"other"`); rec.Code != http.StatusOK {
				t.Errorf("If-None-Match of another tag: status %d, want 200", rec.Code)
			}

			zrec := get(e, tt.target, "Accept-Encoding", "br, gzip;q=0.8")
			if !tt.gzip {
				if zrec.Header().Get("Content-Encoding") != "" {
					t.Errorf("compressed, want it as it is")
				}
				return
			}
			if zrec.Header().Get("Content-Encoding") != "gzip" || zrec.Header().Get("Vary") != "Accept-Encoding" {
				t.Fatalf("Accept-Encoding gzip: Content-Encoding %q, Vary %q, want gzip and Accept-Encoding",
					zrec.Header().Get("Content-Encoding"), zrec.Header().Get("Vary"))
			}
			if zrec.Header().Get("ETag") == etag {
				t.Errorf("the compressed body has the plain one's ETag %s", etag)
			}
			zr, err := gzip.NewReader(zrec.Body)
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(plain, rec.Body.Bytes()) {
				t.Errorf("the gzip body does not decompress to the plain one (%v)", err)
			}
			if rec := get(e, tt.target, "Accept-Encoding", "gzip;q=0"); rec.Header().Get("Content-Encoding") != "" {
				t.Errorf("gzip;q=0: compressed anyway")
			}
		})
	}
	for _, target := range []string{"/docs/nope.js", "/docs/page.html", "/docs/LICENSE", "/docs/..%2fapidocs.go", "/docs/"} {
		if rec := get(e, target); rec.Code != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", target, rec.Code)
		}
	}
}

// TestSwaggerUIFiles: the committed Swagger UI files are the ones
// tools/swagger-ui.sh extracted (SHA256SUMS), of the version the package,
// the README and the script name.
func TestSwaggerUIFiles(t *testing.T) {
	sums, err := os.Open(filepath.Join("swagger-ui", "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer sums.Close()
	n := 0
	sc := bufio.NewScanner(sums)
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("SHA256SUMS: bad line %q", sc.Text())
		}
		data, err := os.ReadFile(filepath.Join("swagger-ui", name))
		if err != nil {
			t.Error(err)
			continue
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want {
			t.Errorf("swagger-ui/%s differs from the release (SHA256SUMS): run make swagger-ui, never edit it", name)
		}
		n++
	}
	if n < 7 {
		t.Errorf("SHA256SUMS lists %d files, want the 7 that tools/swagger-ui.sh extracts", n)
	}

	v := apidocs.SwaggerUIVersion
	bundle, err := os.ReadFile(filepath.Join("swagger-ui", "swagger-ui-bundle.js"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(bundle, []byte(`PACKAGE_VERSION:"`+v+`"`)) {
		t.Errorf("swagger-ui-bundle.js is not Swagger UI %s (SwaggerUIVersion)", v)
	}
	readme, err := os.ReadFile(filepath.Join("swagger-ui", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("| Version | "+v+" |")) {
		t.Errorf("swagger-ui/README.md does not name version %s", v)
	}
	script, err := os.ReadFile(filepath.Join("..", "..", "tools", "swagger-ui.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(script, []byte("\nSWAGGER_UI_VERSION="+v+"\n")) {
		t.Errorf("tools/swagger-ui.sh does not pin version %s", v)
	}
}
