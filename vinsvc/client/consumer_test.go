package client_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// consumerMain is another team's program: it builds a client and makes
// one call (never run; the test builds it).
const consumerMain = `package main

import (
	"context"
	"fmt"
	"net/http"

	client "IMPORT"
)

func main() {
	c, err := client.NewClientWithResponses("http://vinsvc.internal:8080")
	if err != nil {
		panic(err)
	}
	res, err := c.DecodeVinWithResponse(context.Background(), &client.DecodeVinParams{Vin: "1HGCM82633A004352"},
		func(_ context.Context, req *http.Request) error {
			req.Header.Set("X-Gateway-Proxy-Secret", "from-your-secret-store")
			return nil
		})
	if err != nil {
		panic(err)
	}
	if res.JSON200 != nil && res.JSON200.Make != nil {
		fmt.Println(*res.JSON200.Make)
	}
}
`

// TestAnotherTeamsModule builds, outside the repository's workspace, the
// two modules another team can write to use this client (README, "API
// clients"): one that requires github.com/gatewayapis/vinsvc through a
// replace directive pointing at a checkout (and the shared module beside
// it, since a dependency's own replace directives do not apply), and one
// that vendors client.gen.go into its own tree. Each must build with
// GOWORK=off, as it would in that team's repository.
func TestAnotherTeamsModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two modules with the go command")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		files map[string]string
	}{
		{"replace", map[string]string{
			"go.mod": "module example.com/consumer\n\ngo 1.26\n\nrequire github.com/gatewayapis/vinsvc v0.0.0\n\n" +
				"replace github.com/gatewayapis/vinsvc => " + filepath.Join(repo, "vinsvc") + "\n\n" +
				"replace github.com/gatewayapis/shared => " + filepath.Join(repo, "shared") + "\n",
			"main.go": strings.Replace(consumerMain, "IMPORT", "github.com/gatewayapis/vinsvc/client", 1),
		}},
		{"vendored", map[string]string{
			"go.mod":                     "module example.com/consumer\n\ngo 1.26\n\nrequire github.com/oapi-codegen/runtime v1.9.0\n",
			"vinsvcclient/client.gen.go": string(gen),
			"main.go":                    strings.Replace(consumerMain, "IMPORT", "example.com/consumer/vinsvcclient", 1),
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			goCmd(t, dir, "mod", "tidy")
			goCmd(t, dir, "build", "-o", filepath.Join(dir, "consumer"), ".")
		})
	}
}

// goCmd runs the go command in dir, outside any workspace (go test puts
// its own toolchain's bin first on PATH).
func goCmd(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod -buildvcs=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
	}
}
