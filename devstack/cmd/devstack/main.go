// Command devstack runs the project's services on one machine:
//
//	devstack run          bin/vinsvc and bin/patentsvc on their defaults (make run)
//	devstack demo         the same against the recorded stand-ins of vPIC,
//	                      SerpApi, the language model and the PDF host, with
//	                      DEMO=true and fresh data in data/demo (make demo)
//	devstack tour [FILE]  make demo in the background, then the README's
//	                      quick start, each command checked against the
//	                      status it promises (make tour; FILE: README.md)
//
// Run it from the repository's root, after building bin/vinsvc and
// bin/patentsvc (the Makefile does both). The services' lines are prefixed
// with their names; when one stops, the other is stopped too and devstack
// exits non-zero with the stopped service's last error line.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gatewayapis/devstack/internal/demo"
	"github.com/gatewayapis/devstack/internal/supervise"
	"github.com/gatewayapis/devstack/internal/tour"
)

// The services' usual addresses (their PORT defaults).
const (
	vinsvcURL    = "http://127.0.0.1:8080"
	patentsvcURL = "http://127.0.0.1:8081"
)

// DemoData is where make demo keeps its data, emptied at every start.
const DemoData = "data/demo"

// ReadyTimeout bounds the wait for both services to answer.
const ReadyTimeout = 2 * time.Minute

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "devstack:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New("usage: devstack run | demo | tour [README.md]")
	}
	switch args[0] {
	case "run":
		return supervise.Run(ctx, out, services(nil, nil), func() {
			fmt.Fprintf(out, "devstack: vinsvc on %s, patentsvc on %s (Ctrl-C stops both)\n", vinsvcURL, patentsvcURL)
		})
	case "demo":
		return runDemo(ctx, out)
	case "tour":
		readme := "README.md"
		if len(args) > 1 {
			readme = args[1]
		}
		return runTour(ctx, out, readme)
	}
	return fmt.Errorf("unknown command %q (usage: devstack run | demo | tour [README.md])", args[0])
}

// services are the two binaries with the extra settings of each.
func services(vinsvcEnv, patentsvcEnv []string) []supervise.Service {
	return []supervise.Service{
		{Name: "vinsvc", Path: filepath.Join("bin", "vinsvc"), Env: vinsvcEnv},
		{Name: "patentsvc", Path: filepath.Join("bin", "patentsvc"), Env: patentsvcEnv},
	}
}

// startDemo empties DemoData and starts the stand-ins.
func startDemo() (*demo.Stack, []supervise.Service, error) {
	if err := os.RemoveAll(DemoData); err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(DemoData, 0o755); err != nil {
		return nil, nil, err
	}
	stack, err := demo.Start(".")
	if err != nil {
		return nil, nil, err
	}
	return stack, services(stack.VinsvcEnv(DemoData), stack.PatentsvcEnv(DemoData)), nil
}

func runDemo(ctx context.Context, out io.Writer) error {
	stack, svcs, err := startDemo()
	if err != nil {
		return err
	}
	defer stack.Close()
	fmt.Fprintln(out, "devstack: make demo: no internet, no keys; the upstreams are the project's recorded stand-ins:")
	for _, l := range stack.Describe() {
		fmt.Fprintln(out, "  "+l)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- supervise.Run(ctx, out, svcs, nil) }()
	select {
	case err := <-done:
		return err
	case err := <-waitReady(ctx):
		if err != nil {
			cancel()
			<-done
			return err
		}
	}
	fmt.Fprintf(out, "devstack: demo ready: vinsvc on %s, patentsvc on %s; try the README's quick start, or make tour (Ctrl-C stops everything)\n",
		vinsvcURL, patentsvcURL)
	return <-done
}

// runTour starts the demo with the services' lines in DemoData/services.log,
// runs the README's tour against it and stops it.
func runTour(ctx context.Context, out io.Writer, readme string) error {
	text, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	steps, err := tour.Parse(string(text))
	if err != nil {
		return err
	}
	probe := &http.Client{Timeout: 2 * time.Second}
	for _, base := range []string{vinsvcURL, patentsvcURL} {
		if resp, err := probe.Get(base + "/livez"); err == nil {
			resp.Body.Close()
			return fmt.Errorf("%s answers already (a make demo or make run?): make tour starts a fresh demo of its own; stop that one first", base)
		}
	}
	stack, svcs, err := startDemo()
	if err != nil {
		return err
	}
	defer stack.Close()
	logPath := filepath.Join(DemoData, "services.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- supervise.Run(ctx, logFile, svcs, nil) }()
	select {
	case err := <-done:
		return fmt.Errorf("the demo did not start: %w (its log: %s)", err, logPath)
	case err := <-waitReady(ctx):
		if err != nil {
			cancel()
			<-done
			return err
		}
	}
	snapshot, err := vinsvcHasSnapshot(ctx)
	if err != nil {
		cancel()
		<-done
		return err
	}
	fmt.Fprintf(out, "devstack: make demo is up (vinsvc's vPIC snapshot: %s); running %d steps of %s's tour\n", map[bool]string{true: "loaded", false: "none"}[snapshot], len(steps), readme)
	cmd := exec.CommandContext(ctx, "bash", "-c", tour.Script(steps, snapshot))
	cmd.Stdout, cmd.Stderr = out, out
	tourErr := cmd.Run()
	cancel()
	if err := <-done; err != nil {
		return fmt.Errorf("a service stopped during the tour: %w (its log: %s)", err, logPath)
	}
	if tourErr != nil {
		return fmt.Errorf("the tour failed: %w (the services' log: %s)", tourErr, logPath)
	}
	return nil
}

// vinsvcHasSnapshot reports whether the demo's vinsvc answers with its vPIC
// snapshot (its health's snapshot.available), which decides the promises
// the tour holds for steps that need it.
func vinsvcHasSnapshot(ctx context.Context) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, vinsvcURL+"/v1/health", nil)
	if err != nil {
		return false, err
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return false, fmt.Errorf("vinsvc's health: %w", err)
	}
	defer resp.Body.Close()
	var h struct {
		Snapshot struct {
			Available bool `json:"available"`
		} `json:"snapshot"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&h); err != nil {
		return false, fmt.Errorf("vinsvc's health: %w", err)
	}
	return h.Snapshot.Available, nil
}

// waitReady reports nil once both services are ready (/readyz 200: vinsvc
// is not while its vPIC snapshot loads, when one is there), an error after
// ReadyTimeout.
func waitReady(ctx context.Context) <-chan error {
	ch := make(chan error, 1)
	go func() {
		deadline := time.Now().Add(ReadyTimeout)
		client := &http.Client{Timeout: 2 * time.Second}
		for _, base := range []string{vinsvcURL, patentsvcURL} {
			for {
				resp, err := client.Get(base + "/readyz")
				if err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						break
					}
				}
				if time.Now().After(deadline) {
					ch <- fmt.Errorf("%s did not answer within %s", base, ReadyTimeout)
					return
				}
				select {
				case <-ctx.Done():
					ch <- ctx.Err()
					return
				case <-time.After(100 * time.Millisecond):
				}
			}
		}
		ch <- nil
	}()
	return ch
}
