package config_test

import (
	"strings"
	"testing"

	"github.com/gatewayapis/vinsvc/internal/config"
)

// TestDemoOnlyInDevelopment: DEMO is make demo's, in development; a
// production-like APP_ENV refuses it.
func TestDemoOnlyInDevelopment(t *testing.T) {
	c, err := config.Load(env(map[string]string{"DEMO": "true"}))
	if err != nil || !c.Demo {
		t.Fatalf("DEMO=true in development: %+v, %v", c.Demo, err)
	}
	_, err = config.Load(env(map[string]string{"DEMO": "true", "APP_ENV": "production", "PROXY_SECRET": "s3cret-s3cret-s3cret"}))
	if err == nil || !strings.Contains(err.Error(), "DEMO") {
		t.Errorf("DEMO=true in production: err = %v, want a DEMO error", err)
	}
}
