// Package demo starts make demo's upstreams on free loopback ports: the
// project's recorded fakes of vPIC and SerpApi's Google Patents engine,
// the language-model stand-in, and a PDF host serving real published
// patents. It returns the settings that point the two services at them.
// Nothing here reaches the internet or needs a key.
package demo

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	patentfakes "github.com/gatewayapis/patentsvc/fakes"
	vinfakes "github.com/gatewayapis/vinsvc/fakes"
)

// PDFDir is where the PDF host's documents are, from the repository root:
// patentsvc's own copies of real published patents, taken from the sample
// set beside the repository (../shared/testdata/patents), which a clone
// need not have.
const PDFDir = "patentsvc/internal/pdf/testdata"

// Companies are the companies the fake search knows: the assignees of the
// documents in PDFDir, each with its patent as published (number, title,
// date of the front page). Any other company has no results.
//
// CPC holds each patent's classification subclasses as its PDF prints
// them, field (52) "U.S. Cl. CPC" of the front page (and of its
// continuation on page 2), each symbol cut to its subclass (H04L 67/02
// gives H04L), in the order first printed; the fake search gives their
// shares as summary.cpc. The two patents of 2013 print no CPC, only
// "Int. Cl." and "U.S. Cl." (USPC): for them CPC holds the subclasses of
// "(51) Int. Cl.", which are IPC, not CPC, and say so.
var Companies = []patentfakes.Company{
	{Name: "Apple Inc.", Patents: []patentfakes.Patent{
		{Number: "US11151203B2", Title: "Interest embedding vectors", Date: "2021-10-19", PDFURL: "US11151203.pdf",
			// CPC G06F 16/951; H04L 67/02; G06F 40/166; H04L 67/22; H04L 67/306.
			CPC: []string{"G06F", "H04L"}}}},
	{Name: "Clarios Advanced Solutions", Patents: []patentfakes.Patent{
		{Number: "US11394072B2", Title: "Cell assembly for a battery", Date: "2022-07-19", PDFURL: "US11394072.pdf",
			// CPC H01M 50/20; B60L 50/64; H01M 10/0468; continued on page 2:
			// H01M 10/4207 ... H01M 2220/20; Y02E 60/10; Y02T 10/70.
			CPC: []string{"H01M", "B60L", "Y02E", "Y02T"}}}},
	{Name: "Oticon", Patents: []patentfakes.Patent{
		{Number: "US11363389B2", Title: "Hearing device comprising a beamformer filtering unit for reducing feedback", Date: "2022-06-14", PDFURL: "US11363389.pdf",
			// CPC H04R 25/453; H04R 25/405; ... H04R 2460/13 (pages 1 and 2).
			CPC: []string{"H04R"}}}},
	{Name: "Fuji Jukogyo Kabushiki Kaisha", Patents: []patentfakes.Patent{
		{Number: "US8427103B2", Title: "Charging device for electric vehicle", Date: "2013-04-23", PDFURL: "US8427103.pdf",
			// No CPC on the front page. IPC, from (51) Int. Cl.: H02J 7/00.
			CPC: []string{"H02J"}}}},
	{Name: "Toshiba Global Commerce Solutions", Patents: []patentfakes.Patent{
		{Number: "US8432257B2", Title: "Merchandise-integral transaction receipt and auditable product ownership trail", Date: "2013-04-30", PDFURL: "US8432257.pdf",
			// No CPC on the front page. IPC, from (51) Int. Cl.: H04Q 5/22;
			// G06F 7/00; G07F 19/00.
			CPC: []string{"H04Q", "G06F", "G07F"}}}},
}

// Stack is make demo's running upstreams.
type Stack struct {
	VPIC    *vinfakes.VPIC
	SerpAPI *patentfakes.SerpAPI
	LLM     *patentfakes.LLM
	pdfs    *http.Server
	pdfURL  string
}

// Start starts the upstreams; root is the repository's root.
func Start(root string) (*Stack, error) {
	dir := filepath.Join(root, PDFDir)
	for _, c := range Companies {
		for _, p := range c.Patents {
			if _, err := os.Stat(filepath.Join(dir, p.PDFURL)); err != nil {
				return nil, fmt.Errorf("demo PDF: %w", err)
			}
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Stack{pdfs: &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second},
		pdfURL: "http://" + ln.Addr().String() + "/"}
	go func() {
		if err := s.pdfs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			fmt.Fprintln(os.Stderr, "devstack: PDF host:", err)
		}
	}()
	companies := make([]patentfakes.Company, len(Companies))
	for i, c := range Companies {
		c.Patents = append([]patentfakes.Patent(nil), c.Patents...)
		for j := range c.Patents {
			c.Patents[j].PDFURL = s.pdfURL + c.Patents[j].PDFURL
			c.Patents[j].CPC = append([]string(nil), c.Patents[j].CPC...)
		}
		companies[i] = c
	}
	s.VPIC = vinfakes.StartVPIC()
	s.SerpAPI = patentfakes.StartSerpAPI(companies)
	s.LLM = patentfakes.StartLLM()
	return s, nil
}

// isolated empties the settings of the developer's shell that would take
// a demo service out of the machine (a shared Redis, a real collector);
// the services' own defaults then apply. The variables come after the
// shell's, so they win.
var isolated = []string{"REDIS_URL=", "OTEL_EXPORTER_OTLP_ENDPOINT=", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT="}

// VinsvcEnv is vinsvc's settings under make demo, its data in dataDir.
func (s *Stack) VinsvcEnv(dataDir string) []string {
	return append([]string{
		"APP_ENV=development", "DEMO=true", "PORT=8080",
		"VPIC_BASE_URL=" + s.VPIC.BaseURL(),
		"CACHE_PATH=" + filepath.Join(dataDir, "vincache.db"),
	}, isolated...)
}

// PatentsvcEnv is patentsvc's settings under make demo, its data in
// dataDir. The keys are placeholders: the stand-ins accept any.
func (s *Stack) PatentsvcEnv(dataDir string) []string {
	return append([]string{
		"APP_ENV=development", "DEMO=true", "PORT=8081",
		"DATABASE_URL=sqlite:" + filepath.Join(dataDir, "patentsvc.db"),
		"STORAGE_BACKEND=local", "STORAGE_DIR=" + filepath.Join(dataDir, "patents"),
		"SERPAPI_API_KEY=demo-key-not-secret", "SERPAPI_BASE_URL=" + s.SerpAPI.BaseURL(),
		"LLM_API_KEY=demo-key-not-secret", "LLM_BASE_URL=" + s.LLM.BaseURL(),
		"PDF_ALLOWED_HOSTS=127.0.0.1",
	}, isolated...)
}

// Describe is what make demo prints about its upstreams.
func (s *Stack) Describe() []string {
	return []string{
		"vPIC (recorded answers)       " + s.VPIC.BaseURL(),
		"SerpApi Google Patents (fake) " + s.SerpAPI.BaseURL(),
		"language model (stand-in)     " + s.LLM.BaseURL(),
		"patent PDFs (" + PDFDir + ") " + s.pdfURL,
	}
}

// Close stops the upstreams.
func (s *Stack) Close() {
	_ = s.pdfs.Close()
	s.VPIC.Close()
	s.SerpAPI.Close()
	s.LLM.Close()
}
