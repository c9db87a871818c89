// Package fakes starts patentsvc's recorded stand-ins for its third-party
// upstreams outside the tests: the SerpApi Google Patents fake
// (internal/serpapi/serpapitest, answers in SerpApi's recorded format) and
// the language-model gateway stand-in (internal/llm/llmtest, OpenRouter's
// format, answers built from the prompt). They are the fakes the tests
// use, exported for make demo's devstack command, which cannot import
// internal packages. Nothing in the service imports this package: no
// setting of patentsvc can start them.
package fakes

import (
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
)

// Patent is one search result: its publication number (US11151203B2),
// title, publication date (YYYY-MM-DD), the link to its PDF and its CPC
// subclasses (H04L, G06F), which the fake counts in the answer's
// summary.cpc (the result itself carries none, as SerpApi's do not).
type Patent struct {
	Number, Title, Date, PDFURL string
	CPC                         []string
}

// Company is a company the search knows, with its patents, newest first.
type Company struct {
	Name    string
	Patents []Patent
}

// SerpAPI is a running fake SerpApi.
type SerpAPI struct{ s *serpapitest.Server }

// StartSerpAPI starts a fake SerpApi on a free loopback port. A search for
// one of companies (matched case-insensitively) answers its patents as
// organic results in SerpApi's format, with the company as assignee and a
// summary whose cpc group gives each CPC subclass's share of them; any
// other company gets SerpApi's recorded "no results" answer. Any non-empty
// api_key is accepted.
func StartSerpAPI(companies []Company) *SerpAPI {
	s := serpapitest.Start()
	for _, c := range companies {
		results := make([]map[string]any, len(c.Patents))
		for i, p := range c.Patents {
			r := serpapitest.Organic(p.Number, p.Title, p.Date, p.PDFURL)
			r["assignee"] = c.Name
			results[i] = r
			s.SetCPC(p.Number, p.CPC...)
		}
		s.SetResults(c.Name, len(results), results)
	}
	return &SerpAPI{s: s}
}

// BaseURL is the value for patentsvc's SERPAPI_BASE_URL.
func (f *SerpAPI) BaseURL() string { return f.s.URL }

// Calls is how many requests the fake has answered.
func (f *SerpAPI) Calls() int { return f.s.CallCount() }

// Close stops the fake.
func (f *SerpAPI) Close() { f.s.Close() }

// LLM is a running stand-in for the language-model gateway.
type LLM struct{ s *llmtest.Server }

// StartLLM starts the stand-in on a free loopback port. It answers every
// chat completion with StandInAnswer of the prompt, in OpenRouter's
// format, with token counts; it needs a bearer token but not a real one.
func StartLLM() *LLM { return &LLM{s: llmtest.Start()} }

// BaseURL is the value for patentsvc's LLM_BASE_URL.
func (f *LLM) BaseURL() string { return f.s.BaseURL() }

// Calls is how many requests the stand-in has answered.
func (f *LLM) Calls() int { return f.s.CallCount() }

// Close stops the stand-in.
func (f *LLM) Close() { f.s.Close() }

// StandInAnswer is the stand-in's answer to a prompt: Markdown that says it
// is a stand-in and restates the patents the prompt names.
func StandInAnswer(prompt string) string { return llmtest.Answer(prompt) }
