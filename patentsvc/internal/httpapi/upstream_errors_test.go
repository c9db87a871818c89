package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

// wantNamedOnce checks a failure's text: it starts with prefix, names it
// once, and shows neither the search API's address nor its key.
func wantNamedOnce(t testing.TB, what string, msg *string, prefix string) {
	t.Helper()
	if msg == nil {
		t.Fatalf("%s: no error", what)
	}
	if !strings.HasPrefix(*msg, prefix) || strings.Count(*msg, "patent search") != 1 {
		t.Errorf("%s: error %q, want it to start %q and say \"patent search\" once", what, *msg, prefix)
	}
	if strings.Contains(*msg, "127.0.0.1") || strings.Contains(*msg, "test-serpapi-key") {
		t.Errorf("%s: error %q reveals the search API's address or key", what, *msg)
	}
}

// A failed search reaches the client with its cause named once, in the
// synchronous answer and in a background job's result alike.
func TestSearchFailureNamedOnce(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	en.world.Company("Acme Corp", 1)
	// 503 on the first attempt and on the retry (the client makes two).
	down := func() { en.world.Serp.Script(serpapitest.Unavailable(), serpapitest.Unavailable()) }

	down()
	rec := en.do(t, request{target: "/analyze/Acme%20Corp", token: tok})
	wantStatus(t, rec, http.StatusOK)
	var b companyBody
	decode(t, rec, &b)
	if b.Success {
		t.Fatalf("analysis succeeded with the search API down: %s", rec.Body)
	}
	wantNamedOnce(t, "GET /analyze", b.Error, "patent search failed: status 503: ")

	down()
	rec = en.do(t, request{method: http.MethodPost, target: "/analyze/batch/async", token: tok, body: `{"companies":["Acme Corp"]}`})
	wantStatus(t, rec, http.StatusAccepted)
	var j jobBody
	decode(t, rec, &j)
	rec = waitForJob(t, en, tok, j.JobID, "completed")
	decode(t, rec, &j)
	if j.Status != "completed" || j.Result == nil || len(j.Result.Results) != 1 || j.Result.Results[0].Success {
		t.Fatalf("job = %s, want completed with one failed company", rec.Body)
	}
	wantNamedOnce(t, "job result", j.Result.Results[0].Error, "patent search failed: status 503: ")
}

// An upstream's 5xx answer (the language model gateway's 502) logs its
// cause once at ERROR with the request id, as vinsvc's UPSTREAM_ERROR
// does, whatever the number of attempts, and without the upstream's
// address or key.
func TestUpstream502Logged(t *testing.T) {
	en := newEnv(t)
	_, tb := en.newUser(t, "ada@example.com")
	tok := tb.AccessToken
	pns := en.world.Company("Acme Corp", 1)
	wantStatus(t, en.do(t, request{target: "/analyze/Acme%20Corp", token: tok}), http.StatusOK)

	before := len(en.logs.String())
	en.world.LLM.Script(llmtest.Reply{Status: 503}, llmtest.Reply{Status: 503})
	rec := en.do(t, request{target: "/analyze/patent/" + pns[0] + "?company_name=Acme%20Corp", token: tok})
	wantStatus(t, rec, http.StatusBadGateway)
	var body struct{ Detail string }
	decode(t, rec, &body)
	if !strings.HasPrefix(body.Detail, "llm gateway failed: ") || strings.Count(body.Detail, "llm gateway") != 1 {
		t.Errorf("detail %q, want it to start \"llm gateway failed: \" and name the gateway once", body.Detail)
	}

	logs := en.logs.String()[before:]
	var errs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", l, err)
		}
		if m["level"] == "ERROR" {
			errs = append(errs, m)
		}
	}
	if len(errs) != 1 {
		t.Fatalf("%d ERROR lines, want 1; logs:\n%s", len(errs), logs)
	}
	l := errs[0]
	if l["msg"] != "request failed" || l["status"] != 502.0 || l["request_id"] != rec.Header().Get("X-Request-Id") {
		t.Errorf("ERROR line = %v, want request failed, status 502, the response's request id %q", l, rec.Header().Get("X-Request-Id"))
	}
	if cause, _ := l["err"].(string); !strings.HasPrefix(cause, "llm gateway failed: ") || !strings.Contains(cause, "status 503") {
		t.Errorf("logged err = %q, want the gateway's failure with its status", cause)
	}
	u, err := url.Parse(en.world.LLM.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{u.Host, "test-llm-key"} {
		if strings.Contains(logs, secret) {
			t.Errorf("the logs reveal %q:\n%s", secret, logs)
		}
	}
}
