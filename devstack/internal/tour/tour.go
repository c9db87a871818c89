// Package tour runs the README's quick start as a test: every shell
// command of the fenced ```sh blocks between the markers
//
//	<!-- tour -->  and  <!-- /tour -->
//
// in order, in one bash session (so TOKEN=... carries over), each checked
// against the status its comment promises. A comment line such as
//
//	# Decode a VIN → 200
//
// promises 200 for every curl call of the commands that follow it, up to
// the next blank line or comment. A second promise may name what vinsvc
// answers when it runs without its vPIC snapshot (make tour-offline):
//
//	# Suggestions → 200 (→ 503 without the vPIC snapshot)
//
// A curl
// command without a promise is an error in the README, and any command
// that exits non-zero fails the tour.
package tour

import (
	"bufio"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Begin and End mark the README's tour.
const (
	Begin = "<!-- tour -->"
	End   = "<!-- /tour -->"
)

// Step is one command of the tour.
type Step struct {
	Line    int    // of the README, where the command starts
	Comment string // the comment lines before it, joined
	Command string // as bash reads it, continuation lines included
	Status  int    // promised HTTP status of its curl calls; 0: none
	// WithoutSnapshot is the status promised instead when vinsvc runs
	// without its vPIC snapshot; 0: Status in either case.
	WithoutSnapshot int
}

var (
	promise        = regexp.MustCompile(`→\s*([1-5][0-9]{2})\b`)
	promiseOffline = regexp.MustCompile(`→\s*([1-5][0-9]{2})\s+without the vPIC snapshot`)
)

// Parse reads the tour's steps from a README.
func Parse(readme string) ([]Step, error) {
	var (
		steps   []Step
		in      bool // between the markers
		fenced  bool // inside a ```sh block
		comment []string
		cur     *Step
		found   bool
		// afterCommand: a command came after the current comment
		afterCommand bool
	)
	sc := bufio.NewScanner(strings.NewReader(readme))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == Begin:
			in, found = true, true
			continue
		case trimmed == End:
			in = false
			continue
		case !in:
			continue
		case !fenced && (trimmed == "```sh" || trimmed == "```bash"):
			fenced, comment, afterCommand = true, nil, false
			continue
		case fenced && trimmed == "```":
			if cur != nil {
				return nil, fmt.Errorf("README line %d: the block ends inside a continued command", n)
			}
			fenced = false
			continue
		case !fenced:
			continue
		}
		if cur != nil { // a continuation line
			cur.Command += "\n" + line
			if !strings.HasSuffix(trimmed, `\`) {
				steps = append(steps, *cur)
				cur = nil
			}
			continue
		}
		switch {
		case trimmed == "":
			comment, afterCommand = nil, false
		case strings.HasPrefix(trimmed, "#"):
			if afterCommand { // a new group's comment
				comment, afterCommand = nil, false
			}
			comment = append(comment, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
		default:
			// The comment covers every command up to the next blank line
			// or comment.
			s := Step{Line: n, Comment: strings.Join(comment, " "), Command: line}
			afterCommand = true
			if m := promiseOffline.FindStringSubmatch(s.Comment); m != nil {
				s.WithoutSnapshot, _ = strconv.Atoi(m[1])
			}
			if m := promise.FindAllStringSubmatch(promiseOffline.ReplaceAllString(s.Comment, ""), -1); m != nil {
				s.Status, _ = strconv.Atoi(m[len(m)-1][1])
			}
			if strings.HasSuffix(trimmed, `\`) {
				cur = &s
				continue
			}
			steps = append(steps, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, errors.New("the README has no " + Begin + " section")
	}
	if fenced || in {
		return nil, errors.New("the README's tour is not closed (" + End + " or a fence is missing)")
	}
	var errs []error
	for _, s := range steps {
		if s.Status == 0 && curl.MatchString(s.Command) {
			errs = append(errs, fmt.Errorf("README line %d: a curl command without a promised status (a comment with → <status>)", s.Line))
		}
	}
	if len(steps) == 0 {
		errs = append(errs, errors.New("the README's tour has no commands"))
	}
	return steps, errors.Join(errs...)
}

var curl = regexp.MustCompile(`(^|[\s(|;&])curl\s`)

// Script is the bash program that runs steps: curl is a function that
// records each call's status on the side (curl's --write-out to stderr,
// into a file), and after each command a check compares the statuses and
// the exit code with the promise, printing one line per step and stopping
// at the first failure. snapshot says whether vinsvc runs with its vPIC
// snapshot: without it, a step's WithoutSnapshot promise is the one held.
func Script(steps []Step, snapshot bool) string {
	var b strings.Builder
	b.WriteString(`set -uo pipefail
__tour_log=$(mktemp)
trap 'rm -f "$__tour_log"' EXIT
__tour_seen=0
curl() { command curl --write-out '%{stderr}@@tour-status %{http_code}\n' "$@" 2>>"$__tour_log"; }
__tour_check() { # exit-code promised-status step-number README-line
	local rc=$1 want=$2 n=$3 line=$4 got="" bad=""
	local new
	new=$(tail -n +$((__tour_seen + 1)) "$__tour_log")
	__tour_seen=$(wc -l <"$__tour_log")
	while IFS= read -r l; do
		case $l in
		"@@tour-status "*) s=${l#@@tour-status }; got="$got $s"; [ "$want" = 0 ] || [ "$s" = "$want" ] || bad=1 ;;
		"") ;;
		*) echo "$l" >&2 ;;
		esac
	done <<<"$new"
	if [ "$want" != 0 ] && [ -z "$got" ]; then bad=1; got=" (no curl call)"; fi
	if [ "$rc" -ne 0 ] || [ -n "$bad" ]; then
		echo "tour: step $n (README line $line) FAILED: exit code $rc, statuses${got:- none}, promised ${want/#0/none}" >&2
		exit 1
	fi
	echo "tour: step $n (README line $line) ok:${got:- exit 0}" >&2
}
`)
	for i, s := range steps {
		fmt.Fprintf(&b, "\necho \"tour: step %d (README line %d): %s\" >&2\n", i+1, s.Line, shellQuoteInner(firstLine(s.Command)))
		b.WriteString(s.Command)
		want := s.Status
		if !snapshot && s.WithoutSnapshot != 0 {
			want = s.WithoutSnapshot
		}
		fmt.Fprintf(&b, "\n__tour_check $? %d %d %d\n", want, i+1, s.Line)
	}
	b.WriteString("\necho \"tour: all " + strconv.Itoa(len(steps)) + " steps answered as the README says\" >&2\n")
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), `\`))
}

// shellQuoteInner makes s safe inside double quotes.
func shellQuoteInner(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(s)
}
