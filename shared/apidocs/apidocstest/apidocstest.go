// Package apidocstest drives the API reference page that package apidocs
// serves (Swagger UI) in a headless Chromium, through chromedp, over real
// HTTP. Both services' browser tests use it, so their pages are held to
// the same checks: every operation of the document rendered, no request
// to another origin, no console error, no Content-Security-Policy
// violation, and "try it" answered.
//
// Without a browser the tests skip and say so; with REQUIRE_BROWSER=1
// (set by .ci/run) they fail instead. BROWSER_PATH names the browser;
// without it the first of chromium, chromium-browser, google-chrome,
// google-chrome-stable and headless-shell on PATH is used.
//
// The selectors below are Swagger UI's (apidocs.SwaggerUIVersion): a new
// release may move them, and these tests are how an update is checked
// (apidocs/swagger-ui/README.md).
package apidocstest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// RequireEnv is the variable that turns a missing browser from a skip into
// a failure.
const RequireEnv = "REQUIRE_BROWSER"

// PathEnv is the variable that names the browser's executable.
const PathEnv = "BROWSER_PATH"

// ScreenshotEnv names a directory the screenshots go to; without it they
// go to the test's temporary directory, removed after the test.
const ScreenshotEnv = "DOCS_SCREENSHOT_DIR"

// browsers are the executables looked for on PATH, in order.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"}

// Timeout bounds each step that waits for the page (rendering, an answer).
const Timeout = 30 * time.Second

// Browser returns the path of the browser to drive. Without one, it skips
// the test with a message naming what to install, or fails it when
// REQUIRE_BROWSER=1.
func Browser(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(PathEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s=%s: %v", PathEnv, p, err)
		}
		return p
	}
	for _, name := range browsers {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := fmt.Sprintf("no browser for the API reference test: none of %s on PATH and %s unset (apt-get install chromium)",
		strings.Join(browsers, ", "), PathEnv)
	if os.Getenv(RequireEnv) == "1" {
		t.Fatalf("%s, and %s=1", msg, RequireEnv)
	}
	t.Skip(msg)
	return ""
}

// Page is a browser tab on a reference page.
type Page struct {
	t      testing.TB
	ctx    context.Context
	origin string // scheme://host:port of the page

	mu       sync.Mutex
	requests []string // every URL the tab asked for, in order
	problems []string // console errors, exceptions, failed loads
}

// cspProbe records the page's Content-Security-Policy violations for
// Check. It is evaluated by the browser on each new document, as DevTools
// does, which the page's policy does not govern.
const cspProbe = `window.__apidocstestCSP = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__apidocstestCSP.push(e.violatedDirective + " blocked " + (e.blockedURI || "inline") + " at " + e.sourceFile + ":" + e.lineNumber);
});`

// Open starts a headless browser, loads pageURL in it and waits until
// Swagger UI has rendered the document's operations. The browser ends with
// the test.
func Open(t testing.TB, pageURL string) *Page {
	t.Helper()
	u, err := url.Parse(pageURL)
	if err != nil {
		t.Fatal(err)
	}
	browser := Browser(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser),
		chromedp.WindowSize(1280, 1000),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })

	p := &Page{t: t, ctx: ctx, origin: u.Scheme + "://" + u.Host}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", browser, err)
	}
	if err := chromedp.Listen(ctx, p.record); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: cspProbe}); err != nil {
		t.Fatal(err)
	}
	resp, err := chromedp.Run(ctx, chromedp.NavigateResponse(pageURL))
	if err != nil {
		t.Fatalf("loading %s: %v", pageURL, err)
	}
	if resp.Status != 200 {
		t.Fatalf("loading %s: status %d", pageURL, resp.Status)
	}
	p.wait("Swagger UI rendering the document", `document.querySelectorAll(".opblock").length > 0 && !document.querySelector(".loading-container")`)
	return p
}

// record runs on chromedp's event loop: it only appends, under the lock.
func (p *Page) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	case *network.EventLoadingFailed:
		p.problems = append(p.problems, fmt.Sprintf("load failed (%s, %s): request %s", ev.ErrorText, ev.BlockedReason, ev.RequestID))
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		text := d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			text += " " + d.Exception.Description
		}
		p.problems = append(p.problems, fmt.Sprintf("exception at %s:%d: %s", d.URL, d.LineNumber+1, text))
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range ev.Args {
				if a.Description != "" {
					args = append(args, a.Description)
				} else {
					args = append(args, string(a.Value))
				}
			}
			p.problems = append(p.problems, "console."+string(ev.Type)+": "+strings.Join(args, " "))
		}
	case *log.EventEntryAdded:
		if e := ev.Entry; e.Level == log.EntryLevelError {
			p.problems = append(p.problems, fmt.Sprintf("browser log (%s): %s %s", e.Source, e.Text, e.URL))
		}
	}
}

// wait polls the JavaScript predicate until it holds, failing the test
// after Timeout.
func (p *Page) wait(what, predicate string) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.Poll[chromedp.Void](predicate, chromedp.WithPollingTimeout(Timeout))); err != nil {
		p.fatalf("waiting for %s: %v", what, err)
	}
}

// fatalf fails the test with what the tab saw and a screenshot of it.
func (p *Page) fatalf(format string, args ...any) {
	p.t.Helper()
	msg := fmt.Sprintf(format, args...)
	if png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100)); err == nil {
		path := filepath.Join(p.screenshotDir(), "failure.png")
		if os.WriteFile(path, png, 0o644) == nil {
			msg += "\nscreenshot: " + path
		}
	}
	p.t.Fatalf("%s\n%s", msg, p.report())
}

// eval evaluates a JavaScript expression and decodes its value into T.
func eval[T any](p *Page, expr string) T {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// Operations returns the number of operation blocks the page shows.
func (p *Page) Operations() int {
	p.t.Helper()
	return eval[int](p, `document.querySelectorAll(".opblock").length`)
}

// OperationIDs returns the ids of the operation blocks, Swagger UI's
// "operations-<tag>-<operationId>".
func (p *Page) OperationIDs() []string {
	p.t.Helper()
	return eval[[]string](p, `Array.from(document.querySelectorAll(".opblock")).map(function (e) { return e.id; })`)
}

// mark gives the element the JavaScript expression finds a data attribute
// and returns the attribute's selector, so that chromedp's input actions
// (real mouse and key events, which Swagger UI's React inputs need) can
// reach it. It fails the test when the expression finds nothing.
func (p *Page) mark(what, expr string) chromedp.CSS {
	p.t.Helper()
	id := fmt.Sprintf("m%d", time.Now().UnixNano())
	ok := eval[bool](p, `(function () { var el = `+expr+`; if (!el) return false; el.setAttribute("data-apidocstest", "`+id+`"); return true; })()`)
	if !ok {
		p.fatalf("the page has no %s", what)
	}
	return chromedp.CSS(`[data-apidocstest="` + id + `"]`)
}

func (p *Page) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		p.fatalf("%s: %v", what, err)
	}
}

// Authorize opens Swagger UI's Authorize dialog, types value into the
// security scheme named scheme (an API key, or a bearer token without
// "Bearer "), submits it and closes the dialog.
func (p *Page) Authorize(scheme, value string) {
	p.t.Helper()
	p.do("opening the Authorize dialog", chromedp.Click(chromedp.CSS(".scheme-container .auth-wrapper button.authorize")))
	p.wait("the Authorize dialog", `!!document.querySelector(".dialog-ux .modal-ux")`)
	container := `Array.from(document.querySelectorAll(".dialog-ux .auth-container")).find(function (c) {
		var h = c.querySelector("h4"); return h && h.textContent.trim().split(/\s/)[0] === ` + jsString(scheme) + `; })`
	input := p.mark("input for the scheme "+scheme, `(`+container+` || document).querySelector("input:not([type=hidden])")`)
	p.do("typing into "+scheme, chromedp.SendKeys(input, value))
	submit := p.mark("Authorize button of "+scheme, `(`+container+` || document).querySelector("button.authorize")`)
	p.do("submitting "+scheme, chromedp.Click(submit))
	p.wait(scheme+" authorized", `(function () { var c = `+container+`; return !!c && /Logout/.test(c.textContent); })()`)
	p.do("closing the Authorize dialog", chromedp.Click(chromedp.CSS(".dialog-ux .modal-ux-header button.close-modal")))
	p.wait("the Authorize dialog closed", `!document.querySelector(".dialog-ux .modal-ux")`)
}

// TryIt opens the operation's block (Swagger UI's id
// "operations-<tag>-<operationId>"), presses "Try it out", types params
// (parameter name to value) into its form, executes it and returns the
// status and the body the page shows for the answer.
func (p *Page) TryIt(tag, operationID string, params map[string]string) (status int, body string) {
	p.t.Helper()
	block := "#operations-" + tag + "-" + operationID
	if ok := eval[bool](p, `!!document.querySelector(`+jsString(block)+`)`); !ok {
		p.t.Fatalf("the page has no operation block %s (blocks: %v)", block, p.OperationIDs())
	}
	p.do("opening "+block, chromedp.Click(chromedp.CSS(block+" .opblock-summary-control")))
	p.do("pressing Try it out in "+block, chromedp.Click(chromedp.CSS(block+" button.try-out__btn"), chromedp.NodeVisible))
	for name, v := range params {
		in := p.mark("input for the parameter "+name+" of "+block,
			`document.querySelector(`+jsString(block+` tr[data-param-name="`+name+`"] input`)+`)`)
		// Swagger UI fills the field with the parameter's example: empty it
		// first, the way React sees (the value setter, then an input event).
		eval[chromedp.Void](p, `(function () { var el = document.querySelector(`+jsString(string(in))+`);
			Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(el, "");
			el.dispatchEvent(new Event("input", { bubbles: true })); })()`)
		p.do("typing the parameter "+name, chromedp.SendKeys(in, v))
	}
	p.do("executing "+block, chromedp.Click(chromedp.CSS(block+" button.execute"), chromedp.NodeVisible))
	cell := block + " .live-responses-table .response .response-col_status"
	p.wait("the answer to "+block, `!!document.querySelector(`+jsString(cell)+`)`)
	text := eval[string](p, `document.querySelector(`+jsString(cell)+`).textContent`)
	status, err := strconv.Atoi(strings.Fields(text + " x")[0])
	if err != nil {
		p.t.Fatalf("%s: the answer's status cell says %q", block, text)
	}
	body = eval[string](p, `(function () { var b = document.querySelector(`+jsString(block+" .live-responses-table .response .response-col_description pre")+`); return b ? b.textContent : ""; })()`)
	return status, body
}

// Screenshot saves a PNG of the whole page as name in DOCS_SCREENSHOT_DIR,
// or in the test's temporary directory, and returns its path.
func (p *Page) Screenshot(name string) string {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(p.screenshotDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// screenshotDir is DOCS_SCREENSHOT_DIR, created if need be, or the test's
// temporary directory.
func (p *Page) screenshotDir() string {
	p.t.Helper()
	dir := os.Getenv(ScreenshotEnv)
	if dir == "" {
		return p.t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		p.t.Fatal(err)
	}
	return dir
}

// Check fails the test for each of Problems.
func (p *Page) Check() {
	p.t.Helper()
	for _, m := range p.Problems() {
		p.t.Error(m)
	}
}

// Problems lists what breaks the page's promises so far: every request the
// tab made outside the page's origin (data: URLs aside: Swagger UI's
// stylesheet draws its icons with them, which the policy allows), every
// console error, exception or failed load, and every
// Content-Security-Policy violation.
func (p *Page) Problems() []string {
	p.t.Helper()
	violations := eval[[]string](p, `window.__apidocstestCSP || ["the CSP probe did not run"]`)
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	if len(p.requests) == 0 {
		out = append(out, "no request recorded: the network events did not reach the test")
	}
	for _, r := range p.requests {
		if !strings.HasPrefix(r, p.origin+"/") && !strings.HasPrefix(r, "data:") {
			out = append(out, fmt.Sprintf("request to another origin: %s (the page is on %s)", r, p.origin))
		}
	}
	out = append(out, p.problems...)
	for _, v := range violations {
		out = append(out, "Content-Security-Policy violation: "+v)
	}
	return out
}

// Requests returns the URLs the tab asked for so far, data: URLs left out.
func (p *Page) Requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.requests {
		if !strings.HasPrefix(r, "data:") {
			out = append(out, r)
		}
	}
	return out
}

// report is what the tab saw, for failure messages.
func (p *Page) report() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("requests: %v\nproblems: %v", p.requests, p.problems)
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
