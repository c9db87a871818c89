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

type deliveryBody struct {
	ID             string     `json:"id"`
	Event          string     `json:"event"`
	URLHost        string     `json:"url_host"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      *string    `json:"last_error"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
}

type deliveryPage struct {
	Items      []deliveryBody `json:"items"`
	NextCursor *string        `json:"next_cursor"`
}

// TestWebhookDeliveries drives the admin endpoints through the router:
// the listing (newest first, status filter, keyset pages, no URL path),
// retry of a failed delivery (202, pending again, fresh attempt count),
// 409 for a pending or delivered one, 404, and admin-only access.
func TestWebhookDeliveries(t *testing.T) {
	eachDialect(t, func(t *testing.T, dialect string) {
		en := newEnv(t, onDialect(dialect))
		_, tok := en.admin(t)
		_, userTok := en.newUser(t, "bob@example.com")
		ctx := context.Background()
		for i := 1; i <= 5; i++ {
			en.clk.Advance(time.Second)
			if _, err := en.st.Tracking().CreateAlert(ctx, patent.Alert{CompanyName: "Acme", AlertType: patent.AlertTypePatentCountChange,
				Message: "m", OldValue: 1, NewValue: 2}, oneDelivery(i)); err != nil {
				t.Fatal(err)
			}
		}
		failed, delivered := settleDeliveries(t, en) // msg_conformance1 failed, 2 delivered

		list := func(query string) deliveryPage {
			t.Helper()
			rec := en.do(t, request{target: "/admin/webhooks/deliveries" + query, token: tok})
			wantStatus(t, rec, http.StatusOK)
			if strings.Contains(rec.Body.String(), "secret-path") {
				t.Errorf("listing shows the URL's path: %s", rec.Body)
			}
			var p deliveryPage
			decode(t, rec, &p)
			return p
		}
		var ids []string
		for q := "?limit=2"; ; {
			p := list(q)
			for _, d := range p.Items {
				ids = append(ids, d.ID)
			}
			if p.NextCursor == nil {
				break
			}
			q = "?limit=2&cursor=" + *p.NextCursor
		}
		if fmt.Sprint(ids) != "[msg_conformance5 msg_conformance4 msg_conformance3 msg_conformance2 msg_conformance1]" {
			t.Errorf("pages = %v, want newest first", ids)
		}
		p := list("?status=failed")
		if len(p.Items) != 1 || p.Items[0].ID != failed || p.Items[0].Attempts != 1 || *p.Items[0].LastStatusCode != 410 ||
			*p.Items[0].LastError != "HTTP 410" || p.Items[0].NextAttemptAt != nil || p.Items[0].URLHost != "https://hooks.example.com" {
			t.Errorf("failed = %+v", p.Items)
		}
		if p := list("?status=pending"); len(p.Items) != 3 {
			t.Errorf("pending = %+v, want 3", p.Items)
		}

		retry := func(id, token string) *deliveryBody {
			t.Helper()
			rec := en.do(t, request{method: "POST", target: "/admin/webhooks/deliveries/" + id + "/retry", token: token})
			if rec.Code != http.StatusAccepted {
				return &deliveryBody{Status: fmt.Sprint(rec.Code)}
			}
			var d deliveryBody
			decode(t, rec, &d)
			return &d
		}
		if d := retry(failed, tok); d.Status != "pending" || d.Attempts != 0 || d.NextAttemptAt == nil {
			t.Errorf("retry of the failed delivery = %+v, want 202, pending, 0 attempts, due", d)
		}
		for name, tt := range map[string]struct {
			id, token string
			want      int
		}{
			"pending 409":   {failed, tok, http.StatusConflict},
			"delivered 409": {delivered, tok, http.StatusConflict},
			"unknown 404":   {"msg_nope", tok, http.StatusNotFound},
			"user 403":      {failed, userTok.AccessToken, http.StatusForbidden},
			"anonymous 401": {failed, "", http.StatusUnauthorized},
		} {
			t.Run(name, func(t *testing.T) {
				if got := retry(tt.id, tt.token); got.Status != fmt.Sprint(tt.want) {
					t.Errorf("retry = %s, want %d", got.Status, tt.want)
				}
			})
		}
		rec := en.do(t, request{target: "/admin/webhooks/deliveries?status=lost", token: tok})
		wantError(t, rec, http.StatusUnprocessableEntity, "status must be pending, delivered or failed")
		rec = en.do(t, request{target: "/admin/webhooks/deliveries", token: userTok.AccessToken})
		wantStatus(t, rec, http.StatusForbidden)
	})
}
