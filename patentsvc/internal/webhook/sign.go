package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ErrVerification is wrapped by every error Verify returns.
var ErrVerification = errors.New("webhook verification failed")

// tolerance is how far webhook-timestamp may be from the receiver's clock,
// either way (the Standard Webhooks libraries' value).
const tolerance = 5 * time.Minute

// secretPrefix marks a Standard Webhooks secret: base64 after it.
const secretPrefix = "whsec_"

// errSecret reports a whsec_ secret whose rest is not base64.
var errSecret = errors.New("secret starts with " + secretPrefix + " but the rest is not base64")

// signingKey is the HMAC key of secret (decisions.md): the base64-decoded
// part after whsec_ when the secret has that prefix, its raw bytes
// otherwise. Padding is optional.
func signingKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, secretPrefix)
	if !ok {
		return []byte(secret), nil
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(rest)
	}
	if err != nil {
		return nil, errSecret
	}
	return key, nil
}

// sign is the webhook-signature value: "v1," and the base64 HMAC-SHA256 of
// "{id}.{timestamp}.{body}".
func sign(key []byte, id, timestamp string, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(mac(key, id, timestamp, body))
}

func mac(key []byte, id, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(timestamp))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a generic delivery the Standard Webhooks way. body must be
// the raw request body, unparsed. header must hold webhook-id,
// webhook-timestamp (unix seconds, at most 5 minutes away from now) and
// webhook-signature, a space-separated list of "v1,<base64>" entries of
// which one must match (compared in constant time); entries of other
// versions are ignored. secret is WEBHOOK_SECRET as configured, with or
// without the whsec_ prefix. Every error wraps ErrVerification; none holds
// the secret or a signature.
func Verify(secret string, header http.Header, body []byte, now time.Time) error {
	if secret == "" {
		return fmt.Errorf("%w: no secret", ErrVerification)
	}
	key, err := signingKey(secret)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrVerification, err)
	}
	id, ts, sigs := get(header, "webhook-id"), get(header, "webhook-timestamp"), get(header, "webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("%w: missing webhook-id, webhook-timestamp or webhook-signature header", ErrVerification)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || len(ts) > 19 {
		return fmt.Errorf("%w: webhook-timestamp is not unix seconds", ErrVerification)
	}
	// Compared in seconds: a Duration overflows for absurd timestamps.
	switch d := now.Unix() - sec; {
	case d > int64(tolerance/time.Second):
		return fmt.Errorf("%w: message timestamp too old", ErrVerification)
	case d < -int64(tolerance/time.Second):
		return fmt.Errorf("%w: message timestamp too new", ErrVerification)
	}
	want := mac(key, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err != nil {
			continue
		}
		if hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no matching signature", ErrVerification)
}

// get reads a header by its canonical name and, for headers built by hand,
// by the lowercase name Standard Webhooks writes.
func get(h http.Header, name string) string {
	if v := h.Get(name); v != "" {
		return strings.TrimSpace(v)
	}
	if v := h[name]; len(v) > 0 {
		return strings.TrimSpace(v[0])
	}
	return ""
}
