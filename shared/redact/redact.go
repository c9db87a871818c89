// Package redact turns errors of outbound HTTP calls, links and upstream
// text into text fit for logs and client messages. It is the one place the
// services' redaction rules live:
//
//   - Error drops the request URL (*url.Error embeds it, and URLs carry API
//     keys in queries and tokens in paths), the peer address
//     (*net.OpError) and the host name (*net.DNSError).
//   - URL keeps a link's scheme, host and path: no userinfo, query or
//     fragment, where credentials and signatures travel.
//   - Links reduces every URL in a line the service writes about links it
//     chose to follow (a client library's "GET <url> (status: 500)") with
//     URL.
//   - Text hides every URL in untrusted free text (an upstream's error
//     message, which may quote the request back), the given secrets and
//     anything shaped like a credential (OpenAI-style "sk-" keys, bearer
//     tokens).
package redact

import (
	"errors"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Placeholder replaces a secret in Text's output.
const Placeholder = "[redacted]"

var (
	// urlPattern finds absolute URLs in free text.
	urlPattern = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s"'<>]*`)
	// credentialPattern finds secrets an upstream might echo: OpenAI-style
	// keys (OpenRouter's are sk-or-v1-...) and bearer credentials.
	credentialPattern = regexp.MustCompile(`sk-[A-Za-z0-9_-]{6,}|(?i:bearer)\s+\S+`)
)

// URL returns raw with only its scheme, host and path, or "[unparsable
// url]" when it does not parse.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "[unparsable url]"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}

// Links returns s with every word (run of non-space characters) that holds
// an absolute URL reduced by URL: the whole word, so that quotes or
// brackets inside a query cannot end the URL early and leave the rest of
// the query (a signature) behind.
func Links(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if strings.Contains(w, "://") {
			words[i] = URL(w)
		}
	}
	return strings.Join(words, " ")
}

// Text returns s with every absolute URL in it replaced by "[url]", then
// every non-empty secret and every credential-shaped word replaced by
// Placeholder. Secrets are replaced longest first, so one that contains
// another is hidden whole.
func Text(s string, secrets ...string) string {
	s = urlPattern.ReplaceAllString(s, "[url]")
	sorted := make([]string, 0, len(secrets))
	for _, sec := range secrets {
		if sec != "" {
			sorted = append(sorted, sec)
		}
	}
	// Longest first: "host:8080" before "host".
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	for _, sec := range sorted {
		s = strings.ReplaceAll(s, sec, Placeholder)
	}
	return credentialPattern.ReplaceAllString(s, Placeholder)
}

// Error returns err's text without URLs, hosts or addresses, prefixed
// "timeout: " when err is a network timeout.
func Error(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	prefix := ""
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		prefix = "timeout: "
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return prefix + "dns lookup failed: " + dnsErr.Err
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) && opErr.Err != nil {
		return prefix + opErr.Op + ": " + opErr.Err.Error()
	}
	return prefix + err.Error()
}
