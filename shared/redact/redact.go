// Package redact turns errors of outbound HTTP calls into text fit for
// logs and client messages: without the request URL (*url.Error embeds
// it, and URLs carry API keys in queries and tokens in paths), the peer
// address (*net.OpError) or the host name (*net.DNSError).
package redact

import (
	"errors"
	"net"
	"net/url"
)

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
