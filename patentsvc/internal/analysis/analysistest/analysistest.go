// Package analysistest is the outside world of the analysis pipeline for
// tests and benchmarks: the SerpApi and LLM gateway fakes and a PDF host
// serving real patent PDFs, wired to a real analyzer on a real store and
// local storage.
package analysistest

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/analysis"
	"github.com/gatewayapis/patentsvc/internal/llm"
	"github.com/gatewayapis/patentsvc/internal/llm/llmtest"
	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/pdf"
	"github.com/gatewayapis/patentsvc/internal/pdfstore"
	"github.com/gatewayapis/patentsvc/internal/serpapi"
	"github.com/gatewayapis/patentsvc/internal/serpapi/serpapitest"
	"github.com/gatewayapis/patentsvc/internal/store"
)

// PDFDir is the folder of real patent PDFs (the pdf package's test data).
func PDFDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "pdf", "testdata")
}

// TextPDFs lists the PDFs of PDFDir with a text layer (the first two are
// whole documents with claims, the others front pages only), and
// ScannedPDF one without.
var (
	TextPDFs   = []string{"US11394072.pdf", "US8427103.pdf", "US11151203.pdf", "US11363389.pdf", "US8432257.pdf", "US9795977.pdf", "US20090043621A1.pdf"}
	ScannedPDF = "US11762912.pdf"
)

// NoOCR is why the world's analyzer reads no scan by OCR: it runs as
// under PDF_OCR=off, so that tests do not depend on tesseract.
const NoOCR = "PDF_OCR is off"

// PDFHost serves PDFs at /pdfs/<publication number>.pdf, each mapped to a
// file, and counts requests.
type PDFHost struct {
	*httptest.Server
	mu           sync.Mutex
	files        map[string]string
	docs         map[string][]byte
	latency      time.Duration
	hits         atomic.Int64
	traceparents []string
}

// NewPDFHost starts a PDF host, closed when the test ends.
func NewPDFHost(tb testing.TB) *PDFHost {
	h := StartPDFHost()
	tb.Cleanup(h.Close)
	return h
}

// StartPDFHost starts a PDF host outside a test; the caller closes it.
func StartPDFHost() *PDFHost {
	h := &PDFHost{files: map[string]string{}, docs: map[string][]byte{}}
	h.Server = httptest.NewServer(http.HandlerFunc(h.serve))
	return h
}

// Add maps a publication number to a file of PDFDir and returns its URL.
func (h *PDFHost) Add(pn, file string) string {
	h.mu.Lock()
	h.files[pn] = file
	h.mu.Unlock()
	return h.URL + "/pdfs/" + pn + ".pdf"
}

// AddDoc maps a publication number to a document built in the test (say
// by pdftest) and returns its URL.
func (h *PDFHost) AddDoc(pn string, doc []byte) string {
	h.mu.Lock()
	h.docs[pn] = doc
	h.mu.Unlock()
	return h.URL + "/pdfs/" + pn + ".pdf"
}

// SetLatency delays every answer.
func (h *PDFHost) SetLatency(d time.Duration) { h.mu.Lock(); h.latency = d; h.mu.Unlock() }

// Hits is the number of requests served.
func (h *PDFHost) Hits() int64 { return h.hits.Load() }

// Traceparents returns the traceparent header of each request served, in
// order ("" for a request without one).
func (h *PDFHost) Traceparents() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.traceparents)
}

func (h *PDFHost) serve(w http.ResponseWriter, r *http.Request) {
	h.hits.Add(1)
	pn := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/pdfs/"), ".pdf")
	h.mu.Lock()
	h.traceparents = append(h.traceparents, r.Header.Get("traceparent"))
	file, ok := h.files[pn]
	doc, built := h.docs[pn]
	latency := h.latency
	h.mu.Unlock()
	time.Sleep(latency)
	if built {
		w.Header().Set("Content-Type", "application/pdf")
		w.Write(doc)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	f, err := os.Open(filepath.Join(PDFDir(), file))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/pdf")
	io.Copy(w, f)
}

// World is the fakes and the real components of one analyzer.
type World struct {
	Serp  *serpapitest.Server
	LLM   *llmtest.Server
	PDFs  *PDFHost
	Store *store.Store
	Blobs *pdfstore.Local
	Cfg   analysis.Config
	// Caches are the caching policies' settings, around the world's search
	// and model clients.
	Caches analysis.CacheConfig
	// Limits are the extractor's (pdf.DefaultLimits); Analyzer names them
	// in its configuration's PDFLimits.
	Limits pdf.Limits
	// Extract, when set, wraps the world's extractor (a test counting the
	// documents read, say).
	Extract func(analysis.Extractor) analysis.Extractor
	seq     atomic.Int64
}

// DefaultConfig is the analyzer configuration the tests start from.
func DefaultConfig() analysis.Config {
	return analysis.Config{Lookback: 365 * 24 * time.Hour, MaxPatents: 10,
		DefaultModel: patent.DefaultModel, PromptBudget: 24000, PDFWorkers: 4, MaxTokens: 1500}
}

// DefaultCaches are the caching policies the tests start from: read,
// searches kept a day, answers capped at the default.
func DefaultCaches() analysis.CacheConfig {
	return analysis.CacheConfig{Read: true, SearchTTL: 24 * time.Hour, MaxAnswerBytes: patent.DefaultMaxAnswerBytes}
}

// NewWorld starts the fakes (closed when the test ends) around st.
func NewWorld(tb testing.TB, st *store.Store) *World {
	tb.Helper()
	blobs, err := pdfstore.NewLocal(filepath.Join(tb.TempDir(), "patents"))
	if err != nil {
		tb.Fatal(err)
	}
	return &World{Serp: serpapitest.New(tb), LLM: llmtest.New(tb), PDFs: NewPDFHost(tb), Store: st, Blobs: blobs, Cfg: DefaultConfig(), Caches: DefaultCaches(),
		Limits: pdf.DefaultLimits}
}

// Analyzer builds a real analyzer against the world with w.Cfg, reading
// PDFs within w.Limits.
func (w *World) Analyzer(logger *slog.Logger) *analysis.Analyzer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	extract := analysis.Extractor(pdf.NewExtractor(nil, NoOCR, w.Limits).Extract)
	if w.Extract != nil {
		extract = w.Extract(extract)
	}
	cfg := w.Cfg
	cfg.PDFLimits = w.Limits.String()
	search := serpapi.NewClient(w.Serp.BaseURL(), "test-serpapi-key", 5*time.Second, 1, logger)
	model := llm.NewClient(w.LLM.BaseURL(), "test-llm-key", 5*time.Second, 1, w.Caches.MaxAnswerBytes, logger)
	return analysis.New(cfg,
		analysis.CachedSearch(search, w.Store.Caches(), w.Caches, logger),
		analysis.CachedCompletions(model, w.Store.Caches(), w.Caches, logger),
		pdfstore.NewDownloader([]string{"127.0.0.1"}, 30<<20, 10*time.Second, 1, logger),
		w.Blobs, extract, w.Store.Analyses(), logger, time.Now)
}

// Company registers a company whose search returns n recent patents, each
// with a PDF on the host (real documents, cycled), and returns their
// publication numbers, newest first.
func (w *World) Company(name string, n int) []string {
	var pns []string
	var results []map[string]any
	base := time.Now().UTC().AddDate(0, 0, -1)
	for i := range n {
		pn := fmt.Sprintf("US%08dB2", 90000000+w.seq.Add(1))
		url := w.PDFs.Add(pn, TextPDFs[i%len(TextPDFs)])
		date := base.AddDate(0, 0, -i).Format("2006-01-02")
		results = append(results, serpapitest.Organic(pn, fmt.Sprintf("%s invention %d", name, i+1), date, url))
		pns = append(pns, pn)
	}
	w.Serp.SetResults(name, n+3, results)
	return pns
}

// CompanyDocs registers a company whose search returns one recent patent
// per document of docs, served by the host (nil: a real patent PDF), and
// returns their publication numbers, newest first.
func (w *World) CompanyDocs(name string, docs ...[]byte) []string {
	var pns []string
	var results []map[string]any
	base := time.Now().UTC().AddDate(0, 0, -1)
	for i, doc := range docs {
		pn := fmt.Sprintf("US%08dB2", 90000000+w.seq.Add(1))
		url := w.PDFs.Add(pn, TextPDFs[i%len(TextPDFs)])
		if doc != nil {
			url = w.PDFs.AddDoc(pn, doc)
		}
		date := base.AddDate(0, 0, -i).Format("2006-01-02")
		results = append(results, serpapitest.Organic(pn, fmt.Sprintf("%s invention %d", name, i+1), date, url))
		pns = append(pns, pn)
	}
	w.Serp.SetResults(name, len(docs)+3, results)
	return pns
}

// Analyses returns every stored analysis, oldest first.
func Analyses(tb testing.TB, st *store.Store) []patent.AnalysisRecord {
	tb.Helper()
	var all []patent.AnalysisRecord
	cursor := ""
	for {
		page, next, err := st.Analyses().ListAnalyses(tb.Context(), "", 200, cursor)
		if err != nil {
			tb.Fatal(err)
		}
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ID < all[j].ID })
	return all
}
