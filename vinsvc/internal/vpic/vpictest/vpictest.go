// Package vpictest is a fake vPIC server for tests and benchmarks. It
// answers in vPIC's real formats, from recorded answers (testdata/), and
// reproduces vPIC's behaviours that matter to a client: the flat envelope,
// batch answers in input order with an empty SearchCriteria, XML when the
// batch's format travels in the query string, and scripted faults (status
// codes, garbage, slow answers).
package vpictest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/testkit/fakehttp"
)

//go:embed testdata/*.json
var fixtures embed.FS

// Known VINs with recorded answers.
const (
	VINFordF150      = "1FTMW1T88MFA00001" // 2021 schema, 145 keys, "TRUCK " with a trailing space
	VINHondaAccord   = "1HGCM82633A004352" // 150 keys
	VINVWTiguan      = "3VV3B7AXXNM077525" // 2026 schema, 154 keys
	VINHyundaiIoniq  = "KMHC85LCXHU026758" // 154 keys
	VINBMWCheckDigit = "WBA3A5C51CF256987" // ErrorCode "1"
)

// XMLAnswer is what vPIC sends when format=json is not in the POST body.
const XMLAnswer = `<Response xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><Count>1</Count><Message>Results returned successfully</Message><SearchCriteria /><Results><DecodedVINValues><MakeID>515</MakeID></DecodedVINValues></Results></Response>`

// Reply is a scripted answer (Script). Status 0 means 200.
type Reply = fakehttp.Reply

// Call is a request the fake received.
type Call struct {
	Method   string
	Path     string
	RawQuery string
	Form     url.Values // POST body fields
	VINs     []string   // VINs asked for
	At       time.Time
}

// Server is the fake. Its zero behaviour answers every VIN: recorded ones
// from testdata, others with vPIC's "no detailed data" answer.
//
// The Recorder's methods script replies (Script), slow every answer
// (SetLatency), and count the calls (CallCount) or wait for them
// (WaitCalls). A request to a path vPIC does not serve is answered 404
// and not counted.
type Server struct {
	*httptest.Server
	fakehttp.Recorder[received]

	mu      sync.Mutex
	records map[string]map[string]any
}

// received is a call with its request headers, which Calls and Headers
// return apart.
type received struct {
	call   Call
	header http.Header
}

// New starts a fake vPIC server, closed when the test ends.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := Start()
	tb.Cleanup(s.Close)
	return s
}

// Start starts a fake vPIC server outside a test (a benchmark's server
// process, say); the caller closes it.
func Start() *Server {
	s := &Server{records: map[string]map[string]any{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// BaseURL is the value for VPIC_BASE_URL.
func (s *Server) BaseURL() string { return s.URL + "/api/vehicles" }

// SetRecord makes the fake answer v with rec (a flat record) from now on.
func (s *Server) SetRecord(v string, rec map[string]any) {
	s.mu.Lock()
	s.records[v] = rec
	s.mu.Unlock()
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	var out []Call
	for _, r := range s.Recorder.Calls() {
		out = append(out, r.call)
	}
	return out
}

// Headers returns the request headers of the calls received so far, in
// the order of Calls (the traceparent a client sent, say). They are kept
// apart from Call so that tests comparing calls need not list them.
func (s *Server) Headers() []http.Header {
	var out []http.Header
	for _, r := range s.Recorder.Calls() {
		out = append(out, r.header)
	}
	return out
}

// Record returns the recorded answer's record for v (a copy), or the
// no-data record when v has none.
func Record(v string) map[string]any {
	b, err := fixtures.ReadFile("testdata/decode_" + v + ".json")
	if err != nil {
		b, _ = fixtures.ReadFile("testdata/nodata_template.json")
		b = []byte(strings.ReplaceAll(string(b), "{VIN}", v))
	}
	var env struct{ Results []map[string]any }
	if err := json.Unmarshal(b, &env); err != nil || len(env.Results) != 1 {
		panic(fmt.Sprintf("vpictest: bad fixture for %s: %v", v, err))
	}
	return env.Results[0]
}

const message = "Results returned successfully. NOTE: Any missing decoded values should be interpreted as NHTSA does not have data on the specific variable. Missing value should NOT be interpreted as an indication that a feature or technology is unavailable for a vehicle."

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	call := Call{Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, At: time.Now()}
	lower := strings.ToLower(r.URL.Path)
	var batch bool
	switch {
	case r.Method == http.MethodGet && strings.HasPrefix(lower, "/api/vehicles/decodevinvalues/"):
		call.VINs = []string{r.URL.Path[len("/api/vehicles/decodevinvalues/"):]}
	case r.Method == http.MethodPost && strings.TrimSuffix(lower, "/") == "/api/vehicles/decodevinvaluesbatch":
		batch = true
		body, _ := io.ReadAll(r.Body)
		call.Form, _ = url.ParseQuery(string(body))
		for _, entry := range strings.Split(call.Form.Get("DATA"), ";") {
			v, _, _ := strings.Cut(entry, ",")
			if v = strings.TrimSpace(v); v != "" {
				call.VINs = append(call.VINs, v)
			}
		}
	default:
		http.Error(w, "<html><body>The resource cannot be found.</body></html>", http.StatusNotFound)
		return
	}

	s.mu.Lock()
	records := make([]map[string]any, len(call.VINs))
	for i, v := range call.VINs {
		if rec, ok := s.records[v]; ok {
			records[i] = rec
		}
	}
	s.mu.Unlock()

	reply, ok := s.Receive(r, received{call, r.Header.Clone()})
	if !ok {
		return
	}
	if reply != nil {
		reply.Write(w)
		return
	}

	// vPIC answers XML unless format=json is in the query of a GET or the
	// form body of the batch POST; a format in a POST's query string wins
	// and gives XML (davidpeckham/vpic-api PR #8).
	json1 := r.URL.Query().Get("format") == "json"
	if batch {
		json1 = call.Form.Get("format") == "json" && !r.URL.Query().Has("format")
	}
	if !json1 {
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		io.WriteString(w, XMLAnswer)
		return
	}

	for i, v := range call.VINs {
		if records[i] == nil {
			records[i] = Record(v)
		}
	}
	env := map[string]any{"Count": len(records), "Message": message, "Results": records}
	if batch {
		env["SearchCriteria"] = ""
	} else {
		env["SearchCriteria"] = "VIN(s): " + call.VINs[0]
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(env)
}
