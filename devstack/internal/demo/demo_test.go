package demo_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gatewayapis/devstack/internal/demo"
)

// TestStack starts make demo's upstreams and asks each what the services
// would: a recorded vPIC answer, a search whose result links a real PDF
// that the PDF host serves, and a stand-in answer that says what it is.
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
