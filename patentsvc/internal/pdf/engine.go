package pdf

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// This file is the PDF engine: poppler's command-line programs, each run
// as a child process on one document inside a boundary the operating
// system enforces (decisions.md, "patentsvc: PDFs read by a maintained
// engine"; docs/architecture.md, "The PDF engine"):
//
//   - pdftotext -tsv gives each word of the text layer with its box, for
//     the line builder (layout.go), page by page, so that a document
//     past PDF_MAX_PAGES is refused when its first page too many comes;
//   - pdftoppm renders a page without text to a grey image, for OCR
//     (ocr.go), whatever the encoding of its scan (CCITT fax, JBIG2, JPEG,
//     JPEG 2000, Flate).
//
// The boundary: the program runs under an address-space limit (ulimit -v,
// set by /bin/sh before it execs the program: the ceiling is
// PDF_MAX_DECODED_MB plus EngineBase for the program and its libraries),
// and is killed (SIGKILL) when the document's PDF_EXTRACT_TIMEOUT or the
// caller's context ends. The document reaches it on its standard input;
// what it prints is read as it comes and bounded (maxTextBytes of words,
// maxSpans words a page, maxRow bytes a row).

// EngineBase is the address space a poppler program takes before it reads
// a document (its code and shared libraries: pdftotext needs 20 to 40 MiB
// to read a patent); the ceiling of each engine program is the document's
// memory budget (Limits.MaxDecoded, PDF_MAX_DECODED_MB) plus this.
const EngineBase = 64 << 20

// engine is the set of poppler programs, found on PATH.
type engine struct {
	text, ppm string
}

// errNoEngine is the error of Extract when poppler's programs are not
// installed: the document is not at fault, and nothing is stored for it
// (a kind of patent.ErrPDFEngine).
var errNoEngine = patent.NewKindError(patent.ErrPDFEngine, "pdf engine unavailable: poppler's pdftotext and pdftoppm are not on PATH (Debian package poppler-utils)")

// found is the engine once found: its programs' paths stay valid.
var found struct {
	sync.Mutex
	en *engine
}

// findEngine looks for the programs on PATH, until they are found once.
func findEngine() (*engine, error) {
	found.Lock()
	defer found.Unlock()
	if found.en != nil {
		return found.en, nil
	}
	var en engine
	for _, p := range []struct {
		name string
		path *string
	}{{"pdftotext", &en.text}, {"pdftoppm", &en.ppm}} {
		path, err := exec.LookPath(p.name)
		if err == nil {
			path, err = filepath.EvalSymlinks(path)
		}
		if err != nil {
			return nil, errNoEngine
		}
		*p.path = path
	}
	if _, err := os.Stat("/bin/sh"); err != nil {
		return nil, fmt.Errorf("%w: no /bin/sh to set its memory limit: %v", errNoEngine, err)
	}
	found.en = &en
	return found.en, nil
}

// CheckEngine reports whether the PDF engine is installed: nil, or the
// error every extraction would give (for the service's start-up log).
func CheckEngine() error {
	_, err := findEngine()
	return err
}

// child is one run of a poppler program on a document.
type child struct {
	cmd     *exec.Cmd
	stderr  *stderrLog
	ceiling int64
}

// bounded prepares prog with args under the boundary: an address space
// of ceiling bytes, in a process group of its own SIGKILLed when ctx ends.
// The OCR engine (ocr.go) runs under it too.
func bounded(ctx context.Context, ceiling int64, prog string, args ...string) *exec.Cmd {
	// "$0" is the program, "$@" its arguments: nothing of the document's
	// reaches the shell's parsing.
	script := "ulimit -v " + strconv.FormatInt(ceiling>>10, 10) + " && exec \"$0\" \"$@\""
	cmd := exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", script, prog}, args...)...)
	// Its own process group, so that nothing it starts outlives it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	return cmd
}

// command prepares the poppler program prog with args under the boundary
// (bounded), the document on its standard input.
func command(ctx context.Context, ceiling int64, doc io.Reader, prog string, args ...string) *child {
	cmd := bounded(ctx, ceiling, prog, args...)
	cmd.Stdin = doc
	// poppler reads no configuration from the environment that matters
	// here; a fixed locale keeps its messages in English.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "LC_ALL=C"}
	c := &child{cmd: cmd, stderr: &stderrLog{}, ceiling: ceiling}
	cmd.Stderr = c.stderr
	return c
}

// stderrLog keeps the first lines a program prints on its standard error
// (poppler's "Syntax Error" lines can run to megabytes) and notes whether
// it ran out of memory anywhere in them.
type stderrLog struct {
	mu       sync.Mutex
	head     bytes.Buffer
	outOfMem bool
}

// maxStderr is how much of a program's standard error is kept.
const maxStderr = 2 << 10

func (s *stderrLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Contains(p, []byte("Out of memory")) || bytes.Contains(p, []byte("bad_alloc")) {
		s.outOfMem = true
	}
	if room := maxStderr - s.head.Len(); room > 0 {
		s.head.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// reason is the program's error message: its first line that says
// "Error", else its first line.
func (s *stderrLog) reason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(s.head.String()), "\n")
	for _, l := range lines {
		if strings.Contains(l, "Error") && !strings.HasPrefix(l, "Syntax Warning") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(lines[0])
}

// verdict turns the end of a child (err from Wait) into the document's
// error: nil when it read the document; ctx's error when the deadline or
// the caller ended it; a *LimitError when it ran out of its memory; else
// ErrMalformed with what it said.
//
// Running out of memory counts wherever it happens: poppler survives some
// failed allocations, printing "Out of memory", and goes on without what
// it could not hold (a blank image, a page's text cut), exiting 0.
func (c *child) verdict(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if c.stderr.outOfMem {
		return tooMuchMemory(c.ceiling - EngineBase)
	}
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return fmt.Errorf("pdf engine: %w", err)
	}
	if exit.ExitCode() == 127 { // the shell found no program to run
		return fmt.Errorf("%w: %s", errNoEngine, c.stderr.reason())
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGPIPE {
		return errOutputClosed
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		// A memory limit also ends in a signal when the program dies
		// allocating without a word (SIGSEGV on a failed mmap).
		return fmt.Errorf("%w: the pdf engine stopped on it (%v)", ErrMalformed, ws.Signal())
	}
	if r := c.stderr.reason(); r != "" {
		return fmt.Errorf("%w: %s", ErrMalformed, r)
	}
	return fmt.Errorf("%w: %v", ErrMalformed, err)
}

// errOutputClosed is the end of a program whose reader stopped reading
// (SIGPIPE): the reader's own error says why.
var errOutputClosed = errors.New("pdf engine: its output was closed")

// textPage is one page of the text layer: its size in points and the
// words on it, placed as spans.
type textPage struct {
	width, height float64
	spans         []span
}

// words runs pdftotext -tsv on the first pages of the document and hands
// each page to page as soon as it is read, in order. An error of page
// stops the run and is returned.
func (en *engine) words(ctx context.Context, ceiling int64, doc io.Reader, pages int, page func(textPage) error) error {
	outer := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c := command(ctx, ceiling, doc, en.text, "-tsv", "-enc", "UTF-8", "-l", strconv.Itoa(pages), "-", "-")
	out, err := c.cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := c.cmd.Start(); err != nil {
		return fmt.Errorf("pdf engine: %w", err)
	}
	perr := parseWords(out, page)
	if perr != nil {
		cancel() // stop the program: what it prints is past a bound
	}
	// Drain what is left, so that the program is not blocked writing.
	io.Copy(io.Discard, out)
	werr := c.cmd.Wait()
	if perr != nil {
		if err := outer.Err(); err != nil {
			return err
		}
		if isLimit(perr) {
			return perr
		}
		return fmt.Errorf("%w: the engine's text: %v", ErrMalformed, perr)
	}
	return c.verdict(ctx, werr)
}

// maxRow bounds one row of pdftotext's output: a word's row has about 60
// bytes; a longer one is a word no patent has.
const maxRow = 64 << 10

// parseWords reads the TSV that pdftotext -tsv prints: a header, then a
// row a page (level 1, its size as width and height) and a row a word
// (level 5, its box), among rows of its layout (levels 3 and 4, not used):
//
//	level page_num par_num block_num line_num word_num left top width height conf text
//	1 1 0 0 0 0 0.000000 0.000000 612.000000 792.000000 -1 ###PAGE###
//	5 1 0 0 0 1 302.40 14.27 14.16 35.36 100 HAO
//
// Coordinates are points from the page's top left corner. A word is taken
// as its row gives it (a tab in it adds columns, which are joined back; a
// line end in it breaks the row, whose pieces are passed over); what
// leaves the package is cleaned (cleanSections).
func parseWords(r io.Reader, page func(textPage) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxRow)
	var (
		cur   *textPage
		total int
	)
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 12 || (f[0] != "1" && f[0] != "5") {
			continue
		}
		var box [4]float64
		for i := range box {
			box[i] = number(f[6+i])
		}
		switch f[0] {
		case "1":
			if cur != nil {
				if err := page(*cur); err != nil {
					return err
				}
			}
			cur = &textPage{width: box[2], height: box[3]}
		case "5":
			w := strings.TrimSpace(strings.Join(f[11:], " "))
			if cur == nil || w == "" {
				continue
			}
			if total += len(w); total > maxTextBytes {
				return &LimitError{Reason: fmt.Sprintf("more than %d MiB of text", maxTextBytes>>20)}
			}
			if len(cur.spans) == maxSpans {
				return &LimitError{Reason: fmt.Sprintf("a page shows more than %d words", maxSpans)}
			}
			bottom := box[1] + max(box[3], 0)
			cur.spans = append(cur.spans, span{x0: box[0], x1: box[0] + max(box[2], 0), y: cur.height - bottom, size: max(box[3], 0), text: w + " "})
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &LimitError{Reason: fmt.Sprintf("a word longer than %d KiB", maxRow>>10)}
		}
		return err
	}
	if cur != nil {
		return page(*cur)
	}
	return nil
}

// number is a coordinate of the engine's output (0 when it is not a
// number, or not a finite one within a billion points).
func number(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != f || f > 1e9 || f < -1e9 {
		return 0
	}
	return f
}

// render starts pdftoppm on one page (from 1) at dpi dots per inch, as a
// grey PGM image written to out. The caller waits for it with wait.
func (en *engine) render(ctx context.Context, ceiling int64, doc io.Reader, page, dpi int, out *os.File) (wait func() error, err error) {
	p := strconv.Itoa(page)
	c := command(ctx, ceiling, doc, en.ppm, "-f", p, "-l", p, "-r", strconv.Itoa(dpi), "-gray", "-singlefile", "-")
	c.cmd.Stdout = out
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("pdf engine: %w", err)
	}
	return func() error { return c.verdict(ctx, c.cmd.Wait()) }, nil
}
