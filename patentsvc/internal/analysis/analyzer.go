package analysis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// Searcher finds a company's recent patents; *serpapi.Client implements it.
type Searcher interface {
	// Search's errors reach the client as they are (a company's Error), so
	// they say what failed: *serpapi.Client's read "patent search failed:
	// ..." or "patent search quota exhausted: ...".
	Search(ctx context.Context, q patent.SearchQuery) (patent.SearchResult, error)
	// Key is the search cache's key for q.
	Key(q patent.SearchQuery) string
}

// Completer asks the language model; *llm.Client implements it. Its
// failures are kinds of patent.ErrLLMUpstream.
type Completer interface {
	Complete(ctx context.Context, req patent.CompletionRequest) (patent.Completion, error)
}

// Fetcher downloads PDFs from allowed hosts; *pdfstore.Downloader
// implements it. A link it must not follow is a kind of
// patent.ErrPDFNotFound.
type Fetcher interface {
	Allowed(link string) bool
	Fetch(ctx context.Context, link string) ([]byte, error)
}

// PDFs keeps downloaded PDFs by patent id; pdfstore's Local and S3
// implement it.
type PDFs interface {
	// Put stores a PDF and returns its location (the patent's pdf_path).
	Put(ctx context.Context, patentID string, r io.Reader) (string, error)
	// Open returns a stored PDF, or an error that is a kind of
	// patent.ErrNotFound when none is stored.
	Open(ctx context.Context, patentID string) (io.ReadCloser, error)
}

// Extractor finds the sections of a PDF of size bytes; pdf.Extract is one.
// A document without usable text is a kind of patent.ErrPDFUnreadable.
type Extractor func(ctx context.Context, r io.ReaderAt, size int64) (patent.Sections, error)

// Store is the analyses and patents the analyzer reads and writes;
// store.Analyses implements it.
type Store interface {
	UpsertPatent(ctx context.Context, p patent.StoredPatent) error
	Patent(ctx context.Context, id string) (patent.StoredPatent, error)
	// PDFVerdicts returns the verdicts of the patents ids stored under
	// limits, by patent id.
	PDFVerdicts(ctx context.Context, limits string, ids []string) (map[string]string, error)
	CreateAnalysis(ctx context.Context, a patent.AnalysisRecord) (patent.AnalysisRecord, error)
	// ListAnalyses returns a page of the stored analyses (of one company
	// when company is not empty), newest first, and the next page's
	// cursor ("" on the last).
	ListAnalyses(ctx context.Context, company string, limit int, after string) ([]patent.AnalysisRecord, string, error)
}

// Config holds the analysis settings.
type Config struct {
	Lookback     time.Duration
	MaxPatents   int
	DefaultModel string
	// PromptBudget is the most prompt text, in bytes, given to the patents
	// of one analysis (shared among them).
	PromptBudget int
	// PDFWorkers is how many PDFs of one company are fetched and read at
	// once.
	PDFWorkers int
	// MaxTokens caps the answer's length.
	MaxTokens int
	// PDFLimits names the limits the extractor reads documents under
	// (pdf.Limits.String): a PDF that broke them before, under the same
	// limits, is not read again.
	PDFLimits string
}

// Progress hears a batch's progress: Done is told the number of companies
// done after each one (the jobs core records it on the job). It is an
// alias of an interface literal, not a defined type, so that a consumer of
// AnalyzeBatch (jobs, httpapi) names the very same type with the literal
// alone, without importing this package.
type Progress = interface{ Done(completed int) }

// Analyzer runs analyses. It is safe for concurrent use.
type Analyzer struct {
	cfg     Config
	search  Searcher
	llm     Completer
	fetch   Fetcher
	blobs   PDFs
	extract Extractor
	store   Store
	logger  *slog.Logger
	now     func() time.Time
}

// New returns an Analyzer.
func New(cfg Config, search Searcher, llmc Completer, fetch Fetcher, blobs PDFs, extract Extractor, st Store, logger *slog.Logger, now func() time.Time) *Analyzer {
	if cfg.PDFWorkers < 1 {
		cfg.PDFWorkers = 1
	}
	return &Analyzer{cfg: cfg, search: search, llm: llmc, fetch: fetch, blobs: blobs, extract: extract, store: st, logger: logger, now: now}
}

func (a *Analyzer) model(m string) string {
	if m == "" {
		return a.cfg.DefaultModel
	}
	return m
}

// Analyses returns a page of the stored analyses (of one company when
// company is not empty), newest first, and the next page's cursor ("" on
// the last): GET /analyze/batch.
func (a *Analyzer) Analyses(ctx context.Context, company string, limit int, after string) ([]patent.AnalysisRecord, string, error) {
	return a.store.ListAnalyses(ctx, company, limit, after)
}

// AnalyzeCompany analyses a company's recent patents. It never fails: a
// failure is the result's Success false and Error.
//
// It runs in a span, "analyze company", the parent of the search, the PDF
// downloads and extractions, the model's call and the database statements
// of the analysis (decisions.md, "Tracing (issue 13)").
func (a *Analyzer) AnalyzeCompany(ctx context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis {
	ctx, span := startAnalysis(ctx, name)
	defer span.End()
	res := a.analyzeCompany(ctx, name, opts)
	endAnalysis(span, res)
	return res
}

func (a *Analyzer) analyzeCompany(ctx context.Context, name patent.CompanyName, opts patent.AnalyzeOptions) patent.CompanyAnalysis {
	model := a.model(opts.Model)
	res := patent.CompanyAnalysis{CompanyName: name.String(), Model: &model, Timestamp: a.now().UTC()}
	fail := func(format string, args ...any) patent.CompanyAnalysis {
		msg := fmt.Sprintf(format, args...)
		res.Success, res.Error = false, &msg
		return res
	}

	found, err := a.searchPatents(ctx, name, opts.Fresh)
	if err != nil {
		a.logger.WarnContext(ctx, "patent search failed", "company", name.String(), "err", err.Error())
		// The searcher's error names the failure already; a prefix of our
		// own would read "patent search failed: patent search failed: ...".
		return fail("%v", err)
	}
	res.Searched, res.TotalResults = true, found.TotalResults
	res.Publications, res.Portfolio = found.Publications, found.Portfolio
	res.PatentCount = len(found.Patents)
	for _, p := range found.Patents {
		res.Patents = append(res.Patents, patent.PatentRef{PatentID: p.PatentID, Title: p.Title, PublicationDate: p.PublicationDate, PDFLink: p.PDFLink})
	}
	if len(found.Patents) == 0 {
		return fail(patent.NoPatentsError)
	}

	texts := a.patentTexts(ctx, name, found.Patents, res.Patents)
	prompt := portfolio(name.String(), texts, found.Portfolio)
	ans, err := a.complete(ctx, model, prompt, opts.Fresh)
	if err != nil {
		a.logger.WarnContext(ctx, "analysis failed", "company", name.String(), "model", model, "err", err.Error())
		return fail("analysis failed: %v", err)
	}
	rec, err := a.store.CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: name.String(), AnalysisType: patent.AnalysisPortfolio,
		Model: ans.Model, Response: ans.Text, Cached: ans.Cached, PromptTokens: ans.PromptTokens,
		CompletionTokens: ans.CompletionTokens, RequestedBy: opts.RequestedBy, Portfolio: found.Portfolio, Patents: res.Patents})
	if err != nil {
		a.logger.ErrorContext(ctx, "storing analysis failed", "company", name.String(), "err", err.Error())
		return fail("storing the analysis failed")
	}
	res.Success, res.Analysis, res.Cached, res.Timestamp = true, &ans.Text, ans.Cached, rec.Timestamp
	res.Model = &ans.Model
	return res
}

// searchPatents returns the company's recent patents with a PDF; fresh
// asks the search API itself, not the search cache (CachedSearch).
func (a *Analyzer) searchPatents(ctx context.Context, name patent.CompanyName, fresh bool) (patent.SearchResult, error) {
	return a.search.Search(ctx, patent.SearchQuery{Company: name.String(), Since: a.now().Add(-a.cfg.Lookback), Max: a.cfg.MaxPatents, Fresh: fresh})
}

// patentTexts records the patents and reduces each to prompt text,
// fetching and reading the PDFs a few at a time. A PDF that was not read (not found, not downloaded, not
// readable, or past the limits on reading a document) gives the search's
// snippet instead; a verdict of the limits is stored with the patent, so
// the same file is not read again under the same limits. How each PDF was
// read goes into refs (the patents' entries in the analysis, in found's
// order): Read, or Error saying why not.
func (a *Analyzer) patentTexts(ctx context.Context, company patent.CompanyName, found []patent.SearchHit, refs []patent.PatentRef) []promptPatent {
	out := make([]promptPatent, len(found))
	budget := a.cfg.PromptBudget / max(len(found), 1)
	ids := make([]string, len(found))
	for i, p := range found {
		ids[i] = p.PatentID
	}
	verdicts, err := a.store.PDFVerdicts(ctx, a.cfg.PDFLimits, ids)
	if err != nil {
		a.logger.WarnContext(ctx, "reading pdf verdicts failed; the pdfs are read", "err", err.Error())
	}
	sem := make(chan struct{}, a.cfg.PDFWorkers)
	var wg sync.WaitGroup
	for i, p := range found {
		out[i] = promptPatent{ID: p.PatentID, Title: p.Title, Date: p.PublicationDate, Company: company.String()}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			rec := patent.StoredPatent{PatentID: p.PatentID, CompanyName: company.String(), Title: p.Title,
				PublicationDate: p.PublicationDate, PDFLink: p.PDFLink, Summary: p.Snippet}
			secs, path, err := a.readPDF(ctx, p.PatentID, p.PDFLink, verdicts[p.PatentID])
			rec.PDFPath = path
			if err != nil {
				a.logger.InfoContext(ctx, "patent pdf not used", "patent_id", p.PatentID, "err", err.Error())
				out[i].Text = minimize(patent.Sections{Abstract: p.Snippet}, budget)
				why := unread(err)
				refs[i].Error = &why
				if errors.Is(err, patent.ErrPDFOverLimit) {
					rec.PDFVerdict, rec.PDFLimits = why, a.cfg.PDFLimits
				}
			} else {
				out[i].Text = minimize(secs, budget)
				refs[i].Read = true
				if secs.Abstract != "" {
					rec.Summary = clean(secs.Abstract)
				}
			}
			if err := a.store.UpsertPatent(ctx, rec); err != nil {
				a.logger.WarnContext(ctx, "storing patent failed", "patent_id", p.PatentID, "err", err.Error())
			}
		})
	}
	wg.Wait()
	return out
}

// readPDF is sections, but a PDF that broke the limits on reading a
// document before, under the same limits (verdict, "" when none), is not
// read again: its verdict is the error (a kind of patent.ErrPDFOverLimit).
func (a *Analyzer) readPDF(ctx context.Context, id, link, verdict string) (patent.Sections, string, error) {
	if verdict != "" {
		return patent.Sections{}, "", patent.NewKindError(patent.ErrPDFOverLimit, verdict)
	}
	return a.sections(ctx, id, link)
}

// unread is why a patent's PDF was not read, as its entry in an analysis
// says it: the limit it broke as the extractor words it, or a short reason
// of our own (no link, host, path or library detail reaches a client).
func unread(err error) string {
	var no *patent.NotOCRedError
	switch {
	case errors.Is(err, patent.ErrPDFOverLimit):
		return err.Error()
	case errors.As(err, &no):
		return "document not read: no text layer (" + no.Reason + ")"
	case errors.Is(err, patent.ErrPDFUnreadable):
		return "document not read: not a readable PDF"
	case errors.Is(err, patent.ErrPDFNotFound):
		return "no PDF to read: the link is missing or not on an allowed host"
	case errors.Is(err, patent.ErrPDFEngine):
		return "document not read: the PDF engine is not installed"
	}
	return "PDF not downloaded"
}

// sections returns a patent's sections from its stored PDF, fetching the
// PDF from link into storage first when it is not there. path is the
// storage location ("" when nothing new was stored).
func (a *Analyzer) sections(ctx context.Context, id, link string) (patent.Sections, string, error) {
	data, path, err := a.pdfBytes(ctx, id, link)
	if err != nil {
		return patent.Sections{}, "", err
	}
	s, err := a.extractTraced(ctx, id, data)
	if err != nil {
		return patent.Sections{}, path, err
	}
	return s, path, nil
}

func (a *Analyzer) pdfBytes(ctx context.Context, id, link string) ([]byte, string, error) {
	if rc, err := a.blobs.Open(ctx, id); err == nil {
		defer rc.Close()
		data, err := io.ReadAll(rc)
		return data, "", err
	} else if !errors.Is(err, patent.ErrNotFound) {
		return nil, "", err
	}
	if link == "" || !a.fetch.Allowed(link) {
		return nil, "", fmt.Errorf("%w: no allowed PDF link", patent.ErrPDFNotFound)
	}
	data, err := a.fetch.Fetch(ctx, link)
	if err != nil {
		return nil, "", err
	}
	path, err := a.blobs.Put(ctx, id, bytes.NewReader(data))
	if err != nil {
		a.logger.WarnContext(ctx, "storing pdf failed", "patent_id", id, "err", err.Error())
	}
	return data, path, nil
}

// complete asks the model (fresh: the model itself, not the LLM cache,
// CachedCompletions) and returns its answer; the answered model is the
// requested one when the answer names none.
func (a *Analyzer) complete(ctx context.Context, model, prompt string, fresh bool) (patent.Completion, error) {
	resp, err := a.llm.Complete(ctx, patent.CompletionRequest{Model: model, System: systemPrompt, Prompt: prompt, MaxTokens: a.cfg.MaxTokens,
		Temperature: 0.2, Fresh: fresh})
	if err != nil {
		return patent.Completion{}, err
	}
	if resp.Model == "" {
		resp.Model = model
	}
	return resp, nil
}

// AnalyzePatent analyses one patent from its stored PDF, downloading it
// from the previously recorded link when it is not in storage, with
// opts.Model and recording opts.RequestedBy (opts.Fresh is ignored). It
// returns patent.ErrPDFNotFound when neither exists, a kind of
// patent.ErrPDFOverLimit (whose text says which limit) for a PDF past the
// limits on reading a document (now, or before under the same limits),
// patent.ErrPDFUnreadable for a PDF without text, patent.ErrPDFEngine
// when the server cannot read PDFs at all, and the gateway's error when
// the model fails.
func (a *Analyzer) AnalyzePatent(ctx context.Context, id string, company patent.CompanyName, opts patent.AnalyzeOptions) (patent.PatentAnalysis, error) {
	model := a.model(opts.Model)
	link := ""
	stored, err := a.store.Patent(ctx, id)
	switch {
	case err == nil:
		link = stored.PDFLink
	case !errors.Is(err, patent.ErrNotFound):
		return patent.PatentAnalysis{}, err
	}
	verdict := ""
	if stored.PDFLimits == a.cfg.PDFLimits {
		verdict = stored.PDFVerdict
	}
	secs, path, err := a.readPDF(ctx, id, link, verdict)
	switch {
	case errors.Is(err, patent.ErrPDFOverLimit):
		if stored.PDFVerdict != err.Error() || stored.PDFLimits != a.cfg.PDFLimits {
			rec := patent.StoredPatent{PatentID: id, PDFPath: path, PDFVerdict: err.Error(), PDFLimits: a.cfg.PDFLimits}
			if err := a.store.UpsertPatent(ctx, rec); err != nil {
				a.logger.WarnContext(ctx, "storing patent failed", "patent_id", id, "err", err.Error())
			}
		}
		return patent.PatentAnalysis{}, err
	case errors.Is(err, patent.ErrPDFNotFound):
		return patent.PatentAnalysis{}, fmt.Errorf("%w: %s", patent.ErrPDFNotFound, id)
	case errors.Is(err, patent.ErrPDFUnreadable):
		// err stays in the chain: its *patent.NotOCRedError says why OCR
		// did not read the scan.
		return patent.PatentAnalysis{}, fmt.Errorf("%w: %s: %w", patent.ErrPDFUnreadable, id, err)
	case errors.Is(err, patent.ErrPDFEngine): // the server's fault: no verdict
		return patent.PatentAnalysis{}, err
	case err != nil:
		return patent.PatentAnalysis{}, fmt.Errorf("%w: %s: %v", patent.ErrPDFNotFound, id, err)
	}
	if path != "" {
		rec := patent.StoredPatent{PatentID: id, PDFPath: path, Summary: clean(secs.Abstract)}
		if err := a.store.UpsertPatent(ctx, rec); err != nil {
			a.logger.WarnContext(ctx, "storing patent failed", "patent_id", id, "err", err.Error())
		}
	}
	title := stored.Title
	prompt := single(promptPatent{ID: id, Title: title, Company: company.String(), Text: minimize(secs, a.cfg.PromptBudget)})
	ans, err := a.complete(ctx, model, prompt, false)
	if err != nil {
		return patent.PatentAnalysis{}, err
	}
	if _, err := a.store.CreateAnalysis(ctx, patent.AnalysisRecord{CompanyName: company.String(), AnalysisType: patent.AnalysisSinglePatent,
		PatentID: id, Model: ans.Model, Response: ans.Text, Cached: ans.Cached,
		PromptTokens: ans.PromptTokens, CompletionTokens: ans.CompletionTokens, RequestedBy: opts.RequestedBy}); err != nil {
		return patent.PatentAnalysis{}, fmt.Errorf("store analysis: %w", err)
	}
	return patent.PatentAnalysis{PatentID: id, CompanyName: company.String(), Analysis: ans.Text, Model: ans.Model, Cached: ans.Cached}, nil
}

// AnalyzeBatch analyses companies, each with opts, on at most workers
// goroutines and returns the results in input order with a summary. Names
// equal but for letter case are analysed once and reported at each
// position. progress, if not nil, is told the number of companies done
// after each one. Once ctx ends no further company is started; those
// left are reported as failed, "not analysed: " and ctx's cause (a job's
// JOBS_TIMEOUT, say).
func (a *Analyzer) AnalyzeBatch(ctx context.Context, names []patent.CompanyName, workers int, opts patent.AnalyzeOptions,
	progress Progress) patent.BatchResult {
	start := a.now()
	model := a.model(opts.Model)
	opts.Model = model
	results := make([]patent.CompanyAnalysis, len(names))
	first := map[string]int{} // name key -> first position
	var unique []int
	for i, n := range names {
		if _, seen := first[n.Key()]; !seen {
			first[n.Key()] = i
			unique = append(unique, i)
		}
	}

	var (
		mu   sync.Mutex
		done int
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, max(workers, 1))
	for _, i := range unique {
		wg.Go(func() {
			notStarted := func() {
				msg := "not analysed: " + context.Cause(ctx).Error()
				results[i] = patent.CompanyAnalysis{CompanyName: names[i].String(), Error: &msg, Model: &model, Timestamp: a.now().UTC()}
			}
			if ctx.Err() != nil {
				notStarted()
				return
			}
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				notStarted()
				return
			}
			defer func() { <-sem }()
			results[i] = a.AnalyzeCompany(ctx, names[i], opts)
			mu.Lock()
			for j, n := range names {
				if j != i && first[n.Key()] == i {
					done++
				}
			}
			done++
			d := done
			mu.Unlock()
			if progress != nil {
				progress.Done(d)
			}
		})
	}
	wg.Wait()
	for i, n := range names {
		if j := first[n.Key()]; j != i {
			results[i] = results[j]
			results[i].CompanyName = n.String()
		}
	}

	sum := patent.BatchSummary{Total: len(names), DurationSeconds: a.now().Sub(start).Seconds()}
	for _, r := range results {
		if r.Success {
			sum.Successful++
		} else {
			sum.Failed++
		}
		sum.TotalPatents += r.PatentCount
	}
	return patent.BatchResult{Timestamp: a.now().UTC(), Results: results, Summary: sum, Model: model}
}
