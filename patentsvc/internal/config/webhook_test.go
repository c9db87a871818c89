package config_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/config"
)

// TestWebhookRetrySchedule: the default is decisions.md's 7 waits (8
// attempts); a list is parsed in order; a bad entry stops start-up naming
// the variable and the entry.
func TestWebhookRetrySchedule(t *testing.T) {
	load := func(v string) (config.Config, error) {
		return config.Load(func(k string) string {
			if k == "WEBHOOK_RETRY_SCHEDULE" {
				return v
			}
			return ""
		})
	}
	c, err := load("")
	want := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	if err != nil || !slices.Equal(c.WebhookRetrySchedule, want) || c.WebhookTimeout != 15*time.Second {
		t.Fatalf("default = %v, %v (%v), want %v and 15s", c.WebhookRetrySchedule, c.WebhookTimeout, err, want)
	}
	if c, err := load(" 1s, 2m "); err != nil || !slices.Equal(c.WebhookRetrySchedule, []time.Duration{time.Second, 2 * time.Minute}) {
		t.Errorf("\" 1s, 2m \" = %v, %v", c.WebhookRetrySchedule, err)
	}
	for _, bad := range []string{"5s,x", "0s", "5s,,5m", "-1s", strings.Repeat("1s,", 20) + "1s"} {
		if _, err := load(bad); err == nil || !strings.Contains(err.Error(), "WEBHOOK_RETRY_SCHEDULE") {
			t.Errorf("%q = %v, want an error naming WEBHOOK_RETRY_SCHEDULE", bad, err)
		}
	}
}
