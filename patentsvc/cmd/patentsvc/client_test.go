package main

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/client"
)

// TestGeneratedClient calls the service, started as main does (SQLite,
// ROOT_PATH=/patents) and reached over loopback HTTP, through the Go client
// generated from docs/openapi/patentsvc.yaml (patentsvc/client), and reads
// the typed answers: the generated code compiles against the document and
// parses what the service really sends.
func TestGeneratedClient(t *testing.T) {
	base, _, logs := start(t, map[string]string{
		"APP_ENV": "production", "JWT_SECRET": strings.Repeat("client-secret-", 3), "BCRYPT_COST": "4",
		"DATABASE_URL": "sqlite:" + filepath.Join(t.TempDir(), "patentsvc.db"), "ROOT_PATH": "/patents",
		"STORAGE_DIR": filepath.Join(t.TempDir(), "patents"),
	})
	if !strings.HasSuffix(base, "/patents") {
		t.Fatalf("base URL %q does not end with ROOT_PATH", base)
	}
	c, err := client.NewClientWithResponses(base)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	models, err := c.ListModelsWithResponse(ctx, nil)
	if err != nil {
		t.Fatalf("ListModels: %v\n%s", err, logs)
	}
	if models.JSON200 == nil {
		t.Fatalf("ListModels = %d %s, want 200", models.StatusCode(), models.Body)
	}
	if m := models.JSON200; len(m.Models) != 5 || !m.Default.Valid() || m.Models[0].Id != client.ModelIdOpenaigpt4oMini || m.Models[0].Provider != "openai" {
		t.Errorf("ListModels = %s, want the five models of the allow-list and a default among them", models.Body)
	}

	creds := client.RegisterJSONRequestBody{Email: "ada@example.com", Password: "correct horse battery"}
	reg, err := c.RegisterWithResponse(ctx, nil, creds)
	if err != nil {
		t.Fatal(err)
	}
	if reg.JSON201 == nil || reg.JSON201.Role != client.UserRoleAdmin || reg.JSON201.Email != "ada@example.com" || reg.JSON201.Id < 1 {
		t.Fatalf("Register = %d %s, want 201 with the first user, an admin", reg.StatusCode(), reg.Body)
	}
	login, err := c.LoginWithResponse(ctx, nil, client.LoginJSONRequestBody(creds))
	if err != nil {
		t.Fatal(err)
	}
	if login.JSON200 == nil || login.JSON200.TokenType != client.TokensTokenTypeBearer || login.JSON200.AccessToken == "" {
		t.Fatalf("Login = %d %s, want 200 with a bearer token", login.StatusCode(), login.Body)
	}
	bearer := func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+login.JSON200.AccessToken)
		return nil
	}
	me, err := c.MeWithResponse(ctx, nil, bearer)
	if err != nil {
		t.Fatal(err)
	}
	if me.JSON200 == nil || me.JSON200.Id != reg.JSON201.Id || me.JSON200.Email != "ada@example.com" {
		t.Errorf("Me = %d %s, want the registered user", me.StatusCode(), me.Body)
	}

	// Without the token: the typed 401 body and its header.
	me, err = c.MeWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if me.JSON401 == nil || me.JSON401.Detail == "" || me.Headers401 == nil || me.Headers401.WWWAuthenticate != "Bearer" {
		t.Errorf("Me without a token = %d %s, want the 401 body with WWW-Authenticate: Bearer", me.StatusCode(), me.Body)
	}
}
