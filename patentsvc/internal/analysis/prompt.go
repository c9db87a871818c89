package analysis

import (
	"bytes"
	"embed"
	"fmt"
	"regexp"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// PromptVersion names the prompt files in use. It is part of every LLM
// cache key, so changing a prompt means bumping the version, which leaves
// the answers to the old prompt unused.
const PromptVersion = "v2"

//go:embed prompts/*.txt
var promptFiles embed.FS

var (
	portfolioPrompt = template.Must(template.ParseFS(promptFiles, "prompts/portfolio_"+PromptVersion+".txt"))
	singlePrompt    = template.Must(template.ParseFS(promptFiles, "prompts/single_patent_"+PromptVersion+".txt"))
)

// systemPrompt frames every request.
const systemPrompt = "You analyse patent documents accurately and concisely. You never invent patent numbers, claims or facts that are not in the text you are given."

// promptPatent is one patent as the prompt templates see it.
type promptPatent struct {
	ID, Title, Date, Company, Text string
}

func render(t *template.Template, data any) string {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		// The templates are fixed and their data are plain strings: an
		// error here is a programming error caught by the tests.
		panic(err)
	}
	return b.String()
}

// portfolio renders the portfolio prompt, with the search's portfolio
// facts (none when facts is nil).
func portfolio(company string, patents []promptPatent, facts *patent.Portfolio) string {
	return render(portfolioPrompt, struct {
		Company string
		Patents []promptPatent
		Found   int
		Facts   []string
	}{company, patents, facts.Total(), factLines(facts)})
}

// Most entries of a list the prompt's facts name (the portfolio keeps
// more countries than a reader needs).
const maxFactEntries = 12

// factLines words a portfolio as the prompt's plain facts, one a line:
// "CPC subclasses by share of results: H04R 60.0%, G10L 30.0%",
// "Publications per year: 2023: 2, 2024: 5", "Status by country (active /
// not active): US 5 / 1, EP 3 / 0", "Granted: 4; applications: 6". Empty
// lists are left out; nil has no facts.
func factLines(p *patent.Portfolio) []string {
	if p == nil {
		return nil
	}
	var out []string
	list := func(label string, n int, item func(i int) string) {
		if n == 0 {
			return
		}
		parts := make([]string, 0, min(n, maxFactEntries))
		for i := range min(n, maxFactEntries) {
			parts = append(parts, item(i))
		}
		if n > maxFactEntries {
			parts = append(parts, fmt.Sprintf("and %d more", n-maxFactEntries))
		}
		out = append(out, label+": "+strings.Join(parts, ", "))
	}
	list("CPC subclasses by share of results", len(p.CPC), func(i int) string {
		return fmt.Sprintf("%s %.1f%%", p.CPC[i].Code, p.CPC[i].Share*100)
	})
	list("Publications per year", len(p.ByYear), func(i int) string {
		return fmt.Sprintf("%d: %d", p.ByYear[i].Year, p.ByYear[i].Count)
	})
	list("Status by country (active / not active)", len(p.Countries), func(i int) string {
		c := p.Countries[i]
		return fmt.Sprintf("%s %d / %d", c.Country, c.Active, c.Inactive)
	})
	if p.Total() > 0 {
		out = append(out, fmt.Sprintf("Granted: %d; applications: %d", p.Granted, p.Applications))
	}
	return out
}

// single renders the single-patent prompt.
func single(p promptPatent) string { return render(singlePrompt, p) }

var (
	paragraphMarks = regexp.MustCompile(`\[\d{4,5}\]\s*`)
	spaces         = regexp.MustCompile(`\s+`)
)

// clean collapses white space and drops paragraph numbers ([0012]).
func clean(s string) string {
	s = paragraphMarks.ReplaceAllString(s, "")
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// clip cuts s to at most n bytes at a word boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 1 {
		return ""
	}
	cut := s[:n-1]
	for !utf8.ValidString(cut) {
		cut = cut[:len(cut)-1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

// minimize reduces a patent's sections to at most budget bytes of prompt
// text, most telling first: the abstract, the independent claims, the
// summary, and the detailed description only with what budget is left.
// Dependent claims are dropped (they narrow what the independent ones
// say).
func minimize(s patent.Sections, budget int) string {
	var parts []string
	used := 0
	add := func(label, text string, share float64) {
		text = clean(text)
		if text == "" || used >= budget {
			return
		}
		room := budget - used - len(label) - 2
		if share > 0 {
			room = min(room, int(float64(budget)*share))
		}
		if room <= 20 {
			return
		}
		part := label + ": " + clip(text, room)
		parts = append(parts, part)
		used += len(part) + 1
	}
	add("Abstract", s.Abstract, 0.3)
	var claims []string
	for _, c := range s.Claims {
		if c.Independent {
			claims = append(claims, clean(c.Text))
		}
	}
	add("Independent claims", strings.Join(claims, " | "), 0.45)
	add("Summary", s.Summary, 0.25)
	add("Description", s.Description, 0)
	return strings.Join(parts, "\n")
}
