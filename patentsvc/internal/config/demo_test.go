package config_test

import (
	"strings"
	"testing"

	"github.com/gatewayapis/patentsvc/internal/config"
)

// TestDemoOnlyInDevelopment: DEMO is make demo's, in development; a
// production-like APP_ENV refuses it.
func TestDemoOnlyInDevelopment(t *testing.T) {
	c, err := config.Load(env(map[string]string{"DEMO": "true"}))
	if err != nil || !c.Demo {
		t.Fatalf("DEMO=true in development: %+v, %v", c.Demo, err)
	}
	_, err = config.Load(env(map[string]string{"DEMO": "true", "APP_ENV": "production",
		"JWT_SECRET": strings.Repeat("k", 40), "DATABASE_URL": "postgres://u@db/x"}))
	if err == nil || !strings.Contains(err.Error(), "DEMO") {
		t.Errorf("DEMO=true in production: err = %v, want a DEMO error", err)
	}
}
