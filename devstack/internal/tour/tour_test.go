package tour_test

import (
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/gatewayapis/devstack/internal/tour"
)

func readme(body string) string {
	return "# Title\n\n```sh\ncurl -s http://outside.invalid/ # outside the tour: ignored\n```\n\n" +
		tour.Begin + "\n```sh\n" + body + "```\n" + tour.End + "\n"
}

func TestParse(t *testing.T) {
	steps, err := tour.Parse(readme(`# First → 201, then the others of the group.
curl -s -d x \
  http://a/one
curl -s http://a/two

# A command without curl needs no promise.
echo hi
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 3 {
		t.Fatalf("steps = %+v, want 3", steps)
	}
	if steps[0].Status != 201 || steps[1].Status != 201 || steps[2].Status != 0 {
		t.Errorf("statuses = %d %d %d, want 201 201 0", steps[0].Status, steps[1].Status, steps[2].Status)
	}
	if steps[0].Command != "curl -s -d x \\\n  http://a/one" {
		t.Errorf("continued command = %q", steps[0].Command)
	}
}

// TestParseWithoutSnapshot: a second promise names the status without the
// vPIC snapshot; the script holds it only when told the snapshot is
// missing.
func TestParseWithoutSnapshot(t *testing.T) {
	steps, err := tour.Parse(readme("# Suggestions → 200 (→ 503 without the vPIC snapshot)\ncurl -s http://a/suggest\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 1 || steps[0].Status != 200 || steps[0].WithoutSnapshot != 503 {
		t.Fatalf("steps = %+v, want 200, and 503 without the snapshot", steps)
	}
	if with, without := tour.Script(steps, true), tour.Script(steps, false); !strings.Contains(with, "__tour_check $? 200 1 ") || !strings.Contains(without, "__tour_check $? 503 1 ") {
		t.Errorf("the scripts do not hold the promise of their case:\n%s\n%s", with, without)
	}
}

func TestParseRefuses(t *testing.T) {
	for name, body := range map[string]string{
		"curl without a promise":  "# Nothing promised.\ncurl -s http://a/\n",
		"a new comment resets it": "# → 200\ncurl -s http://a/\n# Another, without.\ncurl -s http://a/\n",
		"empty":                   "",
	} {
		if _, err := tour.Parse(readme(body)); err == nil {
			t.Errorf("%s: Parse accepted it", name)
		}
	}
	if _, err := tour.Parse("no markers"); err == nil {
		t.Error("Parse accepted a README without a tour")
	}
}

// TestScript runs generated scripts against a real server: the promised
// statuses pass, a wrong status or a failing command stops the tour, and
// variables carry over from one step to the next.
func TestScript(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			w.Write([]byte(`{"token":"abc"}`))
		case "/needs-abc":
			if r.Header.Get("Authorization") != "abc" {
				w.WriteHeader(http.StatusUnauthorized)
			}
		case "/created":
			w.WriteHeader(http.StatusCreated)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	u := srv.URL
	run := func(body string) (string, error) {
		steps, err := tour.Parse(readme(body))
		if err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("bash", "-c", tour.Script(steps, true)).CombinedOutput()
		return string(out), err
	}

	out, err := run("# → 200\nT=$(curl -s --fail-with-body " + u + "/token | sed -E 's/.*\"token\":\"([^\"]+)\".*/\\1/')\ncurl -s -H \"Authorization: $T\" " + u + "/needs-abc\n\n# → 201\ncurl -s " + u + "/created\n\n# → 404\ncurl -s " + u + "/missing\n")
	if err != nil || !strings.Contains(out, "all 4 steps answered") {
		t.Fatalf("a right tour failed: %v\n%s", err, out)
	}

	for name, body := range map[string]string{
		"another status":  "# → 200\ncurl -s " + u + "/created\n",
		"a failing curl":  "# → 404\ncurl -s --fail-with-body " + u + "/missing\n",
		"a failing grep":  "# → 200\ncurl -s " + u + "/token | grep -q nothing-like-this\n",
		"a later failure": "# → 201\ncurl -s " + u + "/created\n\n# → 200\ncurl -s " + u + "/missing\necho never\n",
	} {
		out, err := run(body)
		if err == nil || !strings.Contains(out, "FAILED") {
			t.Errorf("%s: the tour passed:\n%s", name, out)
		}
		if strings.Contains(out, "answered as the README says") {
			t.Errorf("%s: the tour went on after the failure:\n%s", name, out)
		}
	}
}
