package pdf

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// mustEngine returns the PDF engine, failing the test without it.
func mustEngine(t *testing.T) *engine {
	t.Helper()
	en, err := findEngine()
	if err != nil {
		t.Fatal(err)
	}
	return en
}

func readTestdata(t *testing.T, name string) *bytes.Reader {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// TestEngineCeiling: a program that needs more memory than its ceiling is
// the document's *LimitError, whether it dies of it (pdftotext) or goes on
// without what it could not hold and exits 0 (pdftoppm draws the page
// without its scan); under a ceiling it fits, the same work succeeds.
func TestEngineCeiling(t *testing.T) {
	t.Parallel()
	en := mustEngine(t)
	ctx := context.Background()
	const tight = 20 << 20 // less than the program and its libraries take
	wantLimit := func(what string, err error) {
		t.Helper()
		var limit *LimitError
		if !errors.As(err, &limit) || !strings.Contains(err.Error(), "of memory") {
			t.Errorf("%s under %d MiB: %v, want the memory limit", what, tight>>20, err)
		}
	}
	words := func(ceiling int64) (int, error) {
		n := 0
		err := en.words(ctx, ceiling, readTestdata(t, "US8427103.pdf"), 500, func(p textPage) error { n += len(p.spans); return nil })
		return n, err
	}
	if n, err := words(DefaultLimits.MaxDecoded + EngineBase); err != nil || n < 1000 {
		t.Fatalf("pdftotext under the default ceiling: %d words, %v", n, err)
	}
	_, err := words(tight)
	wantLimit("pdftotext", err)

	render := func(ceiling int64) (int64, error) {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		wait, err := en.render(ctx, ceiling, readTestdata(t, "US11762912.pdf"), 1, 300, pw)
		pw.Close()
		if err != nil {
			t.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, pr)
		return n, wait()
	}
	if n, err := render(DefaultLimits.MaxDecoded + EngineBase); err != nil || n < 2550*3300 {
		t.Fatalf("pdftoppm under the default ceiling: %d bytes, %v", n, err)
	}
	_, err = render(tight)
	wantLimit("pdftoppm", err)
}

// TestEngineMissingProgram: a program that is not there is the engine's
// absence, not the document's fault.
func TestEngineMissingProgram(t *testing.T) {
	t.Parallel()
	en := *mustEngine(t)
	en.text = filepath.Join(t.TempDir(), "pdftotext")
	err := en.words(context.Background(), DefaultLimits.MaxDecoded+EngineBase, readTestdata(t, "US8427103.pdf"), 500, func(textPage) error { return nil })
	if !errors.Is(err, errNoEngine) || errors.Is(err, ErrMalformed) {
		t.Errorf("words with no pdftotext = %v, want errNoEngine", err)
	}
}

// TestParseWords reads pdftotext's TSV: pages and their words in order,
// the layout's rows passed over, a word with a tab kept whole, a row
// broken by a line end in a word passed over, and each bound a
// *LimitError.
func TestParseWords(t *testing.T) {
	t.Parallel()
	const head = "level\tpage_num\tpar_num\tblock_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n"
	row := func(level, left, top, width, height, text string) string {
		return level + "\t1\t0\t0\t0\t0\t" + left + "\t" + top + "\t" + width + "\t" + height + "\t100\t" + text + "\n"
	}
	in := head +
		row("1", "0", "0", "612", "792", "###PAGE###") +
		row("3", "72", "100", "200", "12", "###FLOW###") +
		row("5", "72", "100", "30", "12", "Hello") +
		row("5", "110", "100", "40", "12", "wide\tword") +
		"5\t1\t0\t0\t0\t0\t150\t100\t20\t12\t100\tbro\nken\n" +
		row("1", "0", "0", "300", "400", "###PAGE###") +
		row("5", "nan", "-inf", "1e300", "x", "odd")
	var pages []textPage
	if err := parseWords(strings.NewReader(in), func(p textPage) error { pages = append(pages, p); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].width != 612 || pages[0].height != 792 || pages[1].width != 300 {
		t.Fatalf("pages = %+v, want 612x792 and 300x400", pages)
	}
	var got []string
	for _, s := range pages[0].spans {
		got = append(got, s.text)
	}
	if strings.Join(got, "|") != "Hello |wide word |bro " {
		t.Errorf("page 1 words = %q", got)
	}
	if s := pages[0].spans[0]; s.x0 != 72 || s.x1 != 102 || s.y != 792-112 || s.size != 12 {
		t.Errorf("Hello placed at %+v, want x 72-102, baseline 680, size 12", s)
	}
	if s := pages[1].spans[0]; s.x0 != 0 || s.x1 != 0 || s.size != 0 {
		t.Errorf("a word of non-numbers placed at %+v, want zeros", s)
	}

	for _, tt := range []struct {
		name, in, want string
	}{
		{"a row past 64 KiB", head + row("1", "0", "0", "612", "792", "p") + row("5", "0", "0", "1", "1", strings.Repeat("x", 70<<10)), "a word longer than 64 KiB"},
		{"more words than a page may show", head + row("1", "0", "0", "612", "792", "p") + strings.Repeat(row("5", "0", "0", "1", "1", "w"), maxSpans+1), "a page shows more than 100000 words"},
		{"more text than a document may hold", head + row("1", "0", "0", "612", "792", "p") + strings.Repeat(row("5", "0", "0", "1", "1", strings.Repeat("w", 60<<10)), maxTextBytes/(60<<10)+1), "more than 8 MiB of text"},
	} {
		err := parseWords(strings.NewReader(tt.in), func(textPage) error { return nil })
		var limit *LimitError
		if !errors.As(err, &limit) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want a *LimitError saying %q", tt.name, err, tt.want)
		}
	}
}

// FuzzParseWords: no output of the engine makes the parser panic, or keep
// a word past its bounds.
func FuzzParseWords(f *testing.F) {
	f.Add([]byte("level\tpage_num\n1\t1\t0\t0\t0\t0\t0\t0\t612\t792\t-1\t###PAGE###\n5\t1\t0\t0\t0\t0\t72\t100\t30\t12\t100\tHello\n"))
	f.Add([]byte("5\t1\t0\t0\t0\t0\t72\t100\t30\t12\t100\tno page\n1\t\t\t\t\t\t\t\t\t\t\t\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		parseWords(bytes.NewReader(data), func(p textPage) error {
			if len(p.spans) > maxSpans {
				t.Errorf("a page of %d words", len(p.spans))
			}
			for _, s := range p.spans {
				if s.x1 < s.x0 || s.size < 0 {
					t.Errorf("a word placed at %+v", s)
				}
			}
			return nil
		})
	})
}
