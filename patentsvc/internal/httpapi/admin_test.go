package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// adminRoutes is every /admin/* route, with input that would be invalid:
// authentication and authorization come first.
var adminRoutes = []struct {
	method, target, body string
}{
	{http.MethodGet, "/admin/tracked", ""},
	{http.MethodPost, "/admin/tracked", `{"company_name":"-bad"}`},
	{http.MethodPost, "/admin/tracked", `{`},
	{http.MethodDelete, "/admin/tracked/-bad", ""},
	{http.MethodDelete, "/admin/tracked/Acme", ""},
	{http.MethodGet, "/admin/tracked/Acme/history", ""},
	{http.MethodGet, "/admin/tracked/-bad/history?days=0", ""},
	{http.MethodGet, "/admin/alerts", ""},
	{http.MethodGet, "/admin/alerts?limit=0", ""},
	{http.MethodGet, "/admin/rate-limits", ""},
	{http.MethodGet, "/admin/users", ""},
	{http.MethodPatch, "/admin/users/1/role", `{"role":"user"}`},
	{http.MethodPatch, "/admin/users/abc/role", `{"role":"root"}`},
	{http.MethodDelete, "/admin/users/1", ""},
	{http.MethodDelete, "/admin/users/abc", ""},
}

func TestAdminAuthorization(t *testing.T) {
	en := newEnv(t)
	_, adminTok := en.admin(t)
	_, userTok := en.newUser(t, "bob@example.com")
	for _, r := range adminRoutes {
		t.Run(r.method+" "+r.target, func(t *testing.T) {
			rec := en.do(t, request{method: r.method, target: r.target, body: r.body})
			wantError(t, rec, http.StatusUnauthorized, "Not authenticated")
			rec = en.do(t, request{method: r.method, target: r.target, body: r.body, token: "not-a-jwt"})
			wantError(t, rec, http.StatusUnauthorized, "Could not validate credentials")
			rec = en.do(t, request{method: r.method, target: r.target, body: r.body, token: userTok.AccessToken})
			wantError(t, rec, http.StatusForbidden, "Admin privileges required")
			golden(t, "admin-403", rec.Body.Bytes())
		})
	}
	golden(t, "admin-401", en.do(t, request{target: "/admin/users"}).Body.Bytes())
	// The admin passes both checks on a read-only route.
	wantStatus(t, en.do(t, request{target: "/admin/users", token: adminTok}), http.StatusOK)
	// Nothing changed: the refused requests did not reach the handlers.
	users, err := en.st.Users().ListUsers(context.Background())
	if err != nil || len(users) != 2 || users[0].Role != patent.RoleAdmin {
		t.Errorf("users after refused admin requests = %+v, %v", users, err)
	}
}

func TestTracked(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t)

		rec := en.do(t, request{target: "/admin/tracked", token: tok})
		wantStatus(t, rec, http.StatusOK)
		if got := strings.TrimSpace(rec.Body.String()); got != "[]" {
			t.Errorf("empty tracked list = %s, want []", got)
		}

		rec = en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"Acme Corp"}`, token: tok})
		wantStatus(t, rec, http.StatusCreated)
		wantKeys(t, rec.Body.Bytes(), "id", "company_name", "last_patent_count", "last_analysis_at", "created_at")
		golden(t, "tracked-201", rec.Body.Bytes())

		en.clk.Advance(time.Minute)
		for _, name := range []string{"AT&T Inc.", "3M", "Rolls-Royce Holdings", strings.Repeat("a", 100), "ab"} {
			body := fmt.Sprintf(`{"company_name":%q}`, name)
			wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: body, token: tok}), http.StatusCreated)
		}

		t.Run("409", func(t *testing.T) {
			// The body carries the tracked company's current state
			// (TestTrackAgainState checks it in full).
			for _, tt := range []struct{ name, tracked string }{
				{"Acme Corp", "Acme Corp"}, {"ACME CORP", "Acme Corp"}, {"acme corp", "Acme Corp"}, {"3m", "3M"},
			} {
				body := fmt.Sprintf(`{"company_name":%q}`, tt.name)
				rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: body, token: tok})
				b := wantConflictState(t, rec, fmt.Sprintf("Company %s is already tracked", tt.name))
				if b.CompanyName != tt.tracked {
					t.Errorf("POST %s: tracked = %+v, want the state of %s", tt.name, b, tt.tracked)
				}
			}
			rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"ACME CORP"}`, token: tok})
			golden(t, "tracked-409", rec.Body.Bytes())
		})

		t.Run("422", func(t *testing.T) {
			for _, tt := range []struct{ name, body string }{
				{"one character", `{"company_name":"a"}`},
				{"empty", `{"company_name":""}`},
				{"leading hyphen", `{"company_name":"-Acme"}`},
				{"leading space", `{"company_name":" Acme"}`},
				{"non-ASCII letter", `{"company_name":"Nestlé"}`},
				{"slash", `{"company_name":"Foo/Bar"}`},
				{"101 characters", fmt.Sprintf(`{"company_name":%q}`, strings.Repeat("a", 101))},
				{"missing field", `{}`},
				{"null", `{"company_name":null}`},
				{"number", `{"company_name":5}`},
				{"array", `{"company_name":["Acme"]}`},
			} {
				t.Run(tt.name, func(t *testing.T) {
					rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: tt.body, token: tok})
					b := wantError(t, rec, http.StatusUnprocessableEntity, "")
					if len(b.Errors) != 1 || b.Errors[0].Field != "company_name" {
						t.Errorf("errors = %+v, want one naming company_name", b.Errors)
					}
				})
			}
			rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"-Acme"}`, token: tok})
			golden(t, "tracked-422", rec.Body.Bytes())
		})

		t.Run("400", func(t *testing.T) {
			for _, body := range []string{``, `{"company_name":`, `not json`} {
				rec := en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: body, token: tok})
				wantError(t, rec, http.StatusBadRequest, "")
			}
		})

		// The list keeps the order of addition and the names as given.
		rec = en.do(t, request{target: "/admin/tracked", token: tok})
		wantStatus(t, rec, http.StatusOK)
		var list []map[string]any
		decode(t, rec, &list)
		if len(list) != 6 || list[0]["company_name"] != "Acme Corp" || list[1]["company_name"] != "AT&T Inc." ||
			list[0]["last_analysis_at"] != nil || list[0]["last_patent_count"] != float64(0) {
			t.Errorf("tracked list = %s", rec.Body)
		}
		if strings.Contains(rec.Body.String(), `\u0026`) {
			t.Errorf("ampersand HTML-escaped in %s", rec.Body)
		}

		t.Run("delete", func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodDelete, target: "/admin/tracked/acme%20CORP", token: tok})
			wantStatus(t, rec, http.StatusOK)
			wantKeys(t, rec.Body.Bytes(), "message")
			golden(t, "tracked-delete-200", rec.Body.Bytes())

			rec = en.do(t, request{method: http.MethodDelete, target: "/admin/tracked/Acme%20Corp", token: tok})
			wantError(t, rec, http.StatusNotFound, "Company Acme Corp is not tracked")
			golden(t, "tracked-delete-404", rec.Body.Bytes())

			// Escaped reserved characters in the name work too.
			rec = en.do(t, request{method: http.MethodDelete, target: "/admin/tracked/at%26t%20inc.", token: tok})
			wantStatus(t, rec, http.StatusOK)
			rec = en.do(t, request{method: http.MethodDelete, target: "/admin/tracked/3M", token: tok})
			wantStatus(t, rec, http.StatusOK)

			for _, target := range []string{
				"/admin/tracked/a",
				"/admin/tracked/-Acme",
				"/admin/tracked/%20Acme",
				"/admin/tracked/Nestl%C3%A9",
				"/admin/tracked/Foo%2FBar",
				"/admin/tracked/Foo_Bar",
				"/admin/tracked/" + strings.Repeat("b", 101),
			} {
				rec := en.do(t, request{method: http.MethodDelete, target: target, token: tok})
				b := wantError(t, rec, http.StatusUnprocessableEntity, "")
				if len(b.Errors) != 1 || b.Errors[0].Field != "company_name" {
					t.Errorf("DELETE %s: errors = %+v, want one naming company_name", target, b.Errors)
				}
			}
			rec = en.do(t, request{target: "/admin/tracked", token: tok})
			decode(t, rec, &list)
			if len(list) != 3 {
				t.Errorf("after deleting 3 of 6, list = %s", rec.Body)
			}
		})
	})
}

// TestTrackedDeletePathDecodedOnce: the path segment is percent-decoded
// exactly once. "Acme%2520Corp" names the company "Acme%20Corp", which is
// not a valid company name (422); it must not be taken for "Acme Corp".
func TestTrackedDeletePathDecodedOnce(t *testing.T) {
	en := newEnv(t)
	_, tok := en.admin(t)
	wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"Acme Corp"}`, token: tok}), http.StatusCreated)
	wantStatus(t, en.do(t, request{method: http.MethodPost, target: "/admin/tracked", body: `{"company_name":"AT&T"}`, token: tok}), http.StatusCreated)

	for _, target := range []string{"/admin/tracked/Acme%2520Corp", "/admin/tracked/AT%2526T"} {
		rec := en.do(t, request{method: http.MethodDelete, target: target, token: tok})
		if rec.Code != http.StatusUnprocessableEntity {
			t.Errorf("DELETE %s = %d %s, want 422: the name is decoded twice", target, rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	}
	var list []map[string]any
	decode(t, en.do(t, request{target: "/admin/tracked", token: tok}), &list)
	if len(list) != 2 {
		t.Errorf("tracked after the double-encoded DELETEs: %v, want both companies still tracked", list)
	}
}

func TestAlerts(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t)

		rec := en.do(t, request{target: "/admin/alerts", token: tok})
		wantStatus(t, rec, http.StatusOK)
		if got := strings.TrimSpace(rec.Body.String()); got != "[]" {
			t.Errorf("empty alert list = %s, want []", got)
		}

		for i := 1; i <= 60; i++ {
			en.clk.Advance(time.Second)
			_, err := en.st.Tracking().CreateAlert(context.Background(), patent.Alert{
				CompanyName: "Acme Corp", AlertType: patent.AlertTypePatentCountChange,
				Message: fmt.Sprintf("alert %d", i), OldValue: float64(i), NewValue: float64(i) * 1.5,
			}, nil)
			if err != nil {
				t.Fatal(err)
			}
		}
		list := func(t *testing.T, query string) []alertBody {
			t.Helper()
			rec := en.do(t, request{target: "/admin/alerts" + query, token: tok})
			wantStatus(t, rec, http.StatusOK)
			var out []alertBody
			decode(t, rec, &out)
			return out
		}
		for _, tt := range []struct {
			query string
			n     int
		}{
			{"", 50}, {"?limit=", 50}, {"?limit=1", 1}, {"?limit=2", 2}, {"?limit=50", 50},
			{"?limit=59", 59}, {"?limit=60", 60}, {"?limit=61", 60}, {"?limit=200", 60},
		} {
			t.Run("200 "+tt.query, func(t *testing.T) {
				got := list(t, tt.query)
				if len(got) != tt.n {
					t.Fatalf("GET /admin/alerts%s returned %d alerts, want %d", tt.query, len(got), tt.n)
				}
				for i, a := range got {
					want := fmt.Sprintf("alert %d", 60-i)
					if a.Message != want {
						t.Fatalf("alert %d is %q, want %q (newest first)", i, a.Message, want)
					}
					if i > 0 && !a.CreatedAt.Before(got[i-1].CreatedAt) {
						t.Errorf("alert %d created %v, not before %v", i, a.CreatedAt, got[i-1].CreatedAt)
					}
				}
			})
		}
		rec = en.do(t, request{target: "/admin/alerts?limit=2", token: tok})
		golden(t, "alerts-200", rec.Body.Bytes())

		for _, q := range []string{"0", "201", "-1", "abc", "1.5", "1e2", "999999999999999999999"} {
			t.Run("422 "+q, func(t *testing.T) {
				rec := en.do(t, request{target: "/admin/alerts?limit=" + q, token: tok})
				b := wantError(t, rec, http.StatusUnprocessableEntity, "limit must be a whole number from 1 to 200")
				if len(b.Errors) != 1 || b.Errors[0].Field != "limit" {
					t.Errorf("errors = %+v, want one naming limit", b.Errors)
				}
			})
		}
		golden(t, "alerts-422", en.do(t, request{target: "/admin/alerts?limit=0", token: tok}).Body.Bytes())
	})
}

type alertBody struct {
	ID          int64     `json:"id"`
	CompanyName string    `json:"company_name"`
	AlertType   string    `json:"alert_type"`
	Message     string    `json:"message"`
	OldValue    float64   `json:"old_value"`
	NewValue    float64   `json:"new_value"`
	CreatedAt   time.Time `json:"created_at"`
}

func TestUsersAdmin(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		admin, tok := en.admin(t)
		en.clk.Advance(time.Second)
		bob, bobTok := en.newUser(t, "bob@example.com")
		en.clk.Advance(time.Second)
		carol, carolTok := en.newUser(t, "carol@example.com")

		rec := en.do(t, request{target: "/admin/users", token: tok})
		wantStatus(t, rec, http.StatusOK)
		golden(t, "users-200", rec.Body.Bytes())

		t.Run("role 200", func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"admin"}`, token: tok})
			wantStatus(t, rec, http.StatusOK)
			wantKeys(t, rec.Body.Bytes(), "id", "email", "role", "created_at")
			golden(t, "role-200", rec.Body.Bytes())
			// Setting the role a user already has is fine.
			rec = en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"admin"}`, token: tok})
			wantStatus(t, rec, http.StatusOK)
			rec = en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"user"}`, token: tok})
			wantStatus(t, rec, http.StatusOK)
			var u userBody
			decode(t, rec, &u)
			if u.Role != "user" || u.ID != bob.ID {
				t.Errorf("demoted bob = %+v", u)
			}
		})

		t.Run("role 404", func(t *testing.T) {
			rec := en.do(t, request{method: http.MethodPatch, target: "/admin/users/999/role", body: `{"role":"user"}`, token: tok})
			wantError(t, rec, http.StatusNotFound, "User 999 not found")
			golden(t, "role-404", rec.Body.Bytes())
		})

		t.Run("role 422", func(t *testing.T) {
			for _, tt := range []struct {
				name, target, body, field string
			}{
				{"role root", "/admin/users/2/role", `{"role":"root"}`, "role"},
				{"role in capitals", "/admin/users/2/role", `{"role":"Admin"}`, "role"},
				{"role empty", "/admin/users/2/role", `{"role":""}`, "role"},
				{"role missing", "/admin/users/2/role", `{}`, "role"},
				{"role null", "/admin/users/2/role", `{"role":null}`, "role"},
				{"role a number", "/admin/users/2/role", `{"role":1}`, "role"},
				{"id abc", "/admin/users/abc/role", `{"role":"user"}`, "user_id"},
				{"id 0", "/admin/users/0/role", `{"role":"user"}`, "user_id"},
				{"id negative", "/admin/users/-1/role", `{"role":"user"}`, "user_id"},
				{"id too large", "/admin/users/99999999999999999999/role", `{"role":"user"}`, "user_id"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					rec := en.do(t, request{method: http.MethodPatch, target: tt.target, body: tt.body, token: tok})
					b := wantError(t, rec, http.StatusUnprocessableEntity, "")
					if len(b.Errors) != 1 || b.Errors[0].Field != tt.field {
						t.Errorf("errors = %+v, want one naming %s", b.Errors, tt.field)
					}
				})
			}
			rec := en.do(t, request{method: http.MethodPatch, target: "/admin/users/2/role", body: `{"role":"root"}`, token: tok})
			golden(t, "role-422", rec.Body.Bytes())
		})

		t.Run("role 400", func(t *testing.T) {
			for _, body := range []string{`{"role":`, ``, `role=admin`} {
				rec := en.do(t, request{method: http.MethodPatch, target: "/admin/users/2/role", body: body, token: tok})
				wantError(t, rec, http.StatusBadRequest, "")
			}
		})

		t.Run("delete", func(t *testing.T) {
			target := fmt.Sprintf("/admin/users/%d", carol.ID)
			wantStatus(t, en.do(t, request{target: "/auth/me", token: carolTok.AccessToken}), http.StatusOK)
			rec := en.do(t, request{method: http.MethodDelete, target: target, token: tok})
			wantStatus(t, rec, http.StatusOK)
			wantKeys(t, rec.Body.Bytes(), "message")
			golden(t, "user-delete-200", rec.Body.Bytes())

			// The deleted user's tokens stop working at once.
			wantError(t, en.do(t, request{target: "/auth/me", token: carolTok.AccessToken}), http.StatusUnauthorized, "Could not validate credentials")
			rec = en.do(t, request{method: http.MethodPost, target: "/auth/refresh", body: refreshBody(carolTok.RefreshToken)})
			wantError(t, rec, http.StatusUnauthorized, "Could not validate credentials")
			// Login fails like an unknown email.
			rec = en.do(t, request{method: http.MethodPost, target: "/auth/login", body: credentials("carol@example.com", password)})
			wantError(t, rec, http.StatusUnauthorized, "Invalid email or password")

			rec = en.do(t, request{method: http.MethodDelete, target: target, token: tok})
			wantError(t, rec, http.StatusNotFound, fmt.Sprintf("User %d not found", carol.ID))
			golden(t, "user-delete-404", rec.Body.Bytes())

			rec = en.do(t, request{method: http.MethodDelete, target: fmt.Sprintf("/admin/users/%d", admin.ID), token: tok})
			wantError(t, rec, http.StatusBadRequest, "Admins cannot delete their own account")
			golden(t, "user-delete-400-self", rec.Body.Bytes())

			for _, id := range []string{"abc", "0", "-3", "1.0"} {
				rec := en.do(t, request{method: http.MethodDelete, target: "/admin/users/" + id, token: tok})
				wantError(t, rec, http.StatusUnprocessableEntity, "user_id must be a whole number from 1 to 4611686018427387904")
			}
			// The email is free again.
			en.register(t, "carol@example.com")
		})

		t.Run("last admin", func(t *testing.T) {
			// Bob is a user again; the first admin is alone.
			rec := en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", admin.ID), body: `{"role":"user"}`, token: tok})
			wantError(t, rec, http.StatusBadRequest, "The last admin cannot be removed or demoted")
			golden(t, "role-400-last-admin", rec.Body.Bytes())
			wantStatus(t, en.do(t, request{target: "/admin/users", token: tok}), http.StatusOK)

			// With a second admin, demoting oneself is allowed and applies
			// to the next request.
			wantStatus(t, en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"admin"}`, token: tok}), http.StatusOK)
			wantStatus(t, en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", admin.ID), body: `{"role":"user"}`, token: tok}), http.StatusOK)
			wantError(t, en.do(t, request{target: "/admin/users", token: tok}), http.StatusForbidden, "Admin privileges required")
			// Bob is now the only admin and cannot demote himself either.
			rec = en.do(t, request{method: http.MethodPatch, target: fmt.Sprintf("/admin/users/%d/role", bob.ID), body: `{"role":"user"}`, token: bobTok.AccessToken})
			wantError(t, rec, http.StatusBadRequest, "The last admin cannot be removed or demoted")
			// ... nor delete himself.
			rec = en.do(t, request{method: http.MethodDelete, target: fmt.Sprintf("/admin/users/%d", bob.ID), token: bobTok.AccessToken})
			wantError(t, rec, http.StatusBadRequest, "Admins cannot delete their own account")
		})

		users, err := en.st.Users().ListUsers(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		admins := 0
		for _, u := range users {
			if u.Role == patent.RoleAdmin {
				admins++
			}
		}
		if admins != 1 {
			t.Errorf("%d admins at the end, want 1: %+v", admins, users)
		}
	})
}
