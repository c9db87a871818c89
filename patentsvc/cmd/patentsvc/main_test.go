package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// start runs the service as main does and returns its base URL and a stop
// function returning run's error.
func start(t *testing.T, env map[string]string) (string, func() error, *lockedBuffer) {
	t.Helper()
	env["PORT"] = strconv.Itoa(freePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	logs := &lockedBuffer{}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"patentsvc"}, func(k string) string { return env[k] }, logs) }()
	base := "http://127.0.0.1:" + env["PORT"] + env["ROOT_PATH"]
	deadline := time.Now().Add(20 * time.Second)
	for {
		if resp, err := http.Get(base + "/livez"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case err := <-done:
			t.Fatalf("run returned before serving: %v\n%s", err, logs)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no /livez within 20s\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(30 * time.Second):
				runErr = fmt.Errorf("run did not return within 30s")
			}
		})
		return runErr
	}
	t.Cleanup(func() { stop() })
	return base, stop, logs
}

func call(t *testing.T, method, url, token string, body any) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, url, rd)
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}

// TestRunEndToEnd runs the service on each database, registers, logs in,
// makes a user call and an admin call, and shuts down cleanly.
func TestRunEndToEnd(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			if d == store.SQLite {
				dsn = filepath.Join(t.TempDir(), "data", "patentsvc.db")
			}
			secret := strings.Repeat("e2e-secret-", 4)
			base, stop, logs := start(t, map[string]string{
				"APP_ENV": "production", "JWT_SECRET": secret, "DATABASE_URL": dsn, "BCRYPT_COST": "4", "ROOT_PATH": "/patents",
			})
			creds := map[string]string{"email": "Ada@Example.com", "password": "correct horse battery"}
			if code, body := call(t, "POST", base+"/auth/register", "", creds); code != 201 || body["role"] != "admin" || body["email"] != "ada@example.com" {
				t.Fatalf("register = %d %v", code, body)
			}
			code, tok := call(t, "POST", base+"/auth/login", "", creds)
			if code != 200 || tok["token_type"] != "bearer" {
				t.Fatalf("login = %d %v", code, tok)
			}
			access := tok["access_token"].(string)
			if code, me := call(t, "GET", base+"/auth/me", access, nil); code != 200 || me["email"] != "ada@example.com" {
				t.Errorf("me = %d %v", code, me)
			}
			if code, tr := call(t, "POST", base+"/admin/tracked", access, map[string]string{"company_name": "Acme Corp"}); code != 201 || tr["company_name"] != "Acme Corp" {
				t.Errorf("track = %d %v", code, tr)
			}
			if code, h := call(t, "GET", base+"/health", "", nil); code != 200 || h["database"] != "ok" || h["analyzer"] != "not_configured" {
				t.Errorf("health = %d %v", code, h)
			}
			if err := stop(); err != nil {
				t.Fatalf("run = %v after shutdown\n%s", err, logs)
			}
			out := logs.String()
			if !strings.Contains(out, `"msg":"patentsvc stopped"`) {
				t.Errorf("no clean stop logged:\n%s", out)
			}
			for _, leak := range []string{secret, "correct horse battery", access} {
				if strings.Contains(out, leak) {
					t.Errorf("logs contain a secret (%.12s...)", leak)
				}
			}
		})
	}
}

func TestRunRefusesBadConfig(t *testing.T) {
	for name, env := range map[string]map[string]string{
		"default jwt secret in production": {"APP_ENV": "production"},
		"short jwt secret in production":   {"APP_ENV": "production", "JWT_SECRET": "short"},
		"unknown model":                    {"MODEL": "nope/nope"},
	} {
		t.Run(name, func(t *testing.T) {
			err := run(context.Background(), []string{"patentsvc"}, func(k string) string { return env[k] }, io.Discard)
			if err == nil {
				t.Fatal("run started, want a configuration error")
			}
		})
	}
}
