package auth_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gatewayapis/patentsvc/internal/auth"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

// TestRefreshReplayRace: one refresh token presented by 8 callers at once
// is a replay, and it revokes every token of the user issued up to its
// detection, including the pair issued to the presentation that won the
// exchange while the others were being refused (decisions.md, "Both
// services: hostile input answered, never a 5xx"; issue 24). After each
// trial no token any presentation got works: the access tokens fail
// Authenticate and the refresh tokens fail Refresh. 200 trials per
// database; the race is lost only now and then, so it takes many.
func TestRefreshReplayRace(t *testing.T) {
	const trials, racers = 200, 8
	storetest.Each(t, func(t *testing.T, st *store.Store) {
		clk := &clock{t: time.Now().UTC()}
		svc, err := auth.New(st.Users(), secret, nil, 30*time.Minute, 168*time.Hour, bcrypt.MinCost, clk.Now)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Register(ctx, "ada@example.com", "correct horse"); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		survived := 0
		for trial := range trials {
			tok, err := svc.Login(ctx, "ada@example.com", "correct horse")
			if err != nil {
				t.Fatalf("trial %d: Login: %v", trial, err)
			}
			got := make([]auth.Tokens, racers)
			errs := make([]error, racers)
			var wg sync.WaitGroup
			ready := make(chan struct{})
			for i := range racers {
				wg.Go(func() {
					<-ready
					got[i], errs[i] = svc.Refresh(ctx, tok.Refresh)
				})
			}
			close(ready)
			wg.Wait()

			issued := []auth.Tokens{{Access: tok.Access}} // the login's refresh token is spent
			for i, err := range errs {
				switch {
				case err == nil:
					issued = append(issued, got[i])
				case !errors.Is(err, auth.ErrInvalidToken):
					t.Fatalf("trial %d: presentation %d: Refresh = %v, want ErrInvalidToken or success", trial, i, err)
				}
			}
			if len(issued) > 2 {
				t.Fatalf("trial %d: %d presentations exchanged one refresh token, want at most 1", trial, len(issued)-1)
			}
			if alive := alive(t, svc, issued); len(alive) > 0 {
				survived++
				if survived <= 3 {
					t.Errorf("trial %d: after the replay %v", trial, alive)
				}
			}
		}
		t.Logf("%d of %d trials left a session alive after the replay (%v)", survived, trials, time.Since(start).Round(time.Millisecond))
		if survived > 0 {
			t.Errorf("%d of %d trials left a session alive after the replay, want 0", survived, trials)
		}
	})
}

// alive lists which of the tokens still work. Any error but
// ErrInvalidToken fails the test.
func alive(t *testing.T, svc *auth.Service, issued []auth.Tokens) []string {
	t.Helper()
	var out []string
	for i, tok := range issued {
		_, err := svc.Authenticate(ctx, tok.Access)
		switch {
		case err == nil:
			out = append(out, fmt.Sprintf("access token %d works", i))
		case !errors.Is(err, auth.ErrInvalidToken):
			t.Fatalf("Authenticate(access token %d) = %v, want ErrInvalidToken", i, err)
		}
		if tok.Refresh == "" {
			continue
		}
		_, err = svc.Refresh(ctx, tok.Refresh)
		switch {
		case err == nil:
			out = append(out, fmt.Sprintf("refresh token %d works", i))
		case !errors.Is(err, auth.ErrInvalidToken):
			t.Fatalf("Refresh(refresh token %d) = %v, want ErrInvalidToken", i, err)
		}
	}
	return out
}
