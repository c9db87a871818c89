package demo_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gatewayapis/devstack/internal/demo"
)

// TestStack starts make demo's upstreams and asks each what the services
// would: a recorded vPIC answer, a search whose result links a real PDF
// that the PDF host serves and whose summary.cpc gives the shares of the
// patents' subclasses (every demo patent has at least one), and a
// stand-in answer that says what it is.
func TestStack(t *testing.T) {
	s, err := demo.Start("../../..")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	get := func(u string) []byte {
		t.Helper()
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s", u, resp.StatusCode, b)
		}
		return b
	}

	subclass := regexp.MustCompile(`^[A-HY][0-9]{2}[A-Z]$`)

	if b := get(s.VPIC.BaseURL() + "/DecodeVinValues/1HGCM82633A004352?format=json"); !bytes.Contains(b, []byte(`"Make":"HONDA"`)) {
		t.Errorf("vPIC answer: %.200s", b)
	}

	for _, c := range demo.Companies {
		var ans struct {
			OrganicResults []struct {
				PublicationNumber string `json:"publication_number"`
				Assignee          string `json:"assignee"`
				PDF               string `json:"pdf"`
			} `json:"organic_results"`
			Summary struct {
				CPC []struct {
					Key        string  `json:"key"`
					Percentage float64 `json:"percentage"`
				} `json:"cpc"`
			} `json:"summary"`
		}
		q := url.Values{"engine": {"google_patents"}, "api_key": {"demo"}, "assignee": {c.Name}, "q": {"*"}}
		if err := json.Unmarshal(get(s.SerpAPI.BaseURL()+"/search.json?"+q.Encode()), &ans); err != nil {
			t.Fatal(err)
		}
		if len(ans.OrganicResults) != len(c.Patents) {
			t.Fatalf("%s: %d results, want %d", c.Name, len(ans.OrganicResults), len(c.Patents))
		}
		r := ans.OrganicResults[0]
		if r.PublicationNumber != c.Patents[0].Number || r.Assignee != c.Name {
			t.Errorf("%s: result %+v", c.Name, r)
		}
		if pdf := get(r.PDF); !bytes.HasPrefix(pdf, []byte("%PDF-")) {
			t.Errorf("%s: %s is not a PDF", c.Name, r.PDF)
		}

		// summary.cpc: Total, then each subclass of the company's
		// patents with its share of them.
		want := map[string]float64{"Total": 100}
		for _, p := range c.Patents {
			if len(p.CPC) == 0 {
				t.Errorf("%s: %s has no CPC subclass", c.Name, p.Number)
			}
			for _, code := range p.CPC {
				if !subclass.MatchString(code) {
					t.Errorf("%s: %s subclass %q is not a subclass code", c.Name, p.Number, code)
				}
				want[code] += 100 / float64(len(c.Patents))
			}
		}
		got := map[string]float64{}
		for _, e := range ans.Summary.CPC {
			got[e.Key] = e.Percentage
		}
		if len(ans.Summary.CPC) == 0 || ans.Summary.CPC[0].Key != "Total" || !maps.EqualFunc(got, want, func(a, b float64) bool { return math.Abs(a-b) < 0.051 }) {
			t.Errorf("%s: summary.cpc = %+v, want Total first and %v", c.Name, ans.Summary.CPC, want)
		}
	}

	body := `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"=== US1B2 (published 2020-01-01): A widget\nText."}]}`
	req, _ := http.NewRequest(http.MethodPost, s.LLM.BaseURL()+"/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer demo")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !bytes.Contains(b, []byte("stand-in")) || !bytes.Contains(b, []byte("US1B2 (published 2020-01-01): A widget")) {
		t.Errorf("stand-in answer: %d %s", resp.StatusCode, b)
	}
}
