package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"github.com/gatewayapis/patentsvc/internal/store"
	"github.com/gatewayapis/patentsvc/internal/store/storetest"
)

var ctx = context.Background()

func TestMigrationsIdempotent(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			dsn := storetest.DSN(t, d)
			if d == store.SQLite {
				// SQLite is one process's file: it is created (and switched
				// to WAL) once, then opened again.
				mustOpen(t, d, dsn).Close()
			}
			// Several replicas starting at once: every Open applies or
			// finds the migrations, none fails.
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Go(func() {
					s, err := store.Open(ctx, d, dsn, store.Pool{MaxOpen: 4, MaxIdle: 1, MaxLifetime: time.Minute}, discard(), time.Now)
					if err == nil {
						err = s.Close()
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("concurrent Open: %v", err)
				}
			}
			s := mustOpen(t, d, dsn)
			if s.Dialect() != d {
				t.Errorf("Dialect() = %s, want %s", s.Dialect(), d)
			}
			if _, err := s.Users().CreateUser(ctx, "a@example.com", []byte("h")); err != nil {
				t.Fatalf("schema unusable after concurrent migrations: %v", err)
			}
		})
	}
}

func TestCreateUserFirstAdmin(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		u1, err := s.Users().CreateUser(ctx, "first@example.com", []byte("hash1"))
		if err != nil || u1.Role != patent.RoleAdmin || u1.ID == 0 || u1.CreatedAt.IsZero() {
			t.Fatalf("first CreateUser = %+v, %v; want an admin", u1, err)
		}
		u2, err := s.Users().CreateUser(ctx, "second@example.com", []byte("hash2"))
		if err != nil || u2.Role != patent.RoleUser {
			t.Fatalf("second CreateUser = %+v, %v; want a user", u2, err)
		}
		if _, err := s.Users().CreateUser(ctx, "second@example.com", []byte("x")); !errors.Is(err, patent.ErrConflict) {
			t.Fatalf("duplicate email error = %v, want ErrConflict", err)
		}
		// A failed registration does not consume anything: the next one works.
		u3, err := s.Users().CreateUser(ctx, "third@example.com", []byte("hash3"))
		if err != nil || u3.Role != patent.RoleUser {
			t.Fatalf("third CreateUser = %+v, %v", u3, err)
		}
		got, err := s.Users().UserByEmail(ctx, "first@example.com")
		if err != nil || got.ID != u1.ID || string(got.PasswordHash) != "hash1" || !got.CreatedAt.Equal(u1.CreatedAt) {
			t.Errorf("UserByEmail = %+v, %v; want %+v", got, err, u1)
		}
		if _, err := s.Users().UserByID(ctx, 9999); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("UserByID(unknown) = %v, want ErrNotFound", err)
		}
		if _, err := s.Users().UserByEmail(ctx, "nobody@example.com"); !errors.Is(err, patent.ErrNotFound) {
			t.Errorf("UserByEmail(unknown) = %v, want ErrNotFound", err)
		}
		users, err := s.Users().ListUsers(ctx)
		if err != nil || len(users) != 3 || users[0].ID != u1.ID {
			t.Errorf("ListUsers = %+v, %v", users, err)
		}
	})
}

// TestFirstAdminRace: many registrations racing on an empty database make
// exactly one admin.
func TestFirstAdminRace(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		const n = 12
		var wg sync.WaitGroup
		roles := make(chan patent.Role, n)
		for i := range n {
			wg.Go(func() {
				u, err := s.Users().CreateUser(ctx, fmt.Sprintf("u%d@example.com", i), []byte("h"))
				if err != nil {
					t.Errorf("CreateUser %d: %v", i, err)
					return
				}
				roles <- u.Role
			})
		}
		wg.Wait()
		close(roles)
		admins := 0
		for r := range roles {
			if r == patent.RoleAdmin {
				admins++
			}
		}
		if admins != 1 {
			t.Fatalf("%d admins after %d concurrent first registrations, want exactly 1", admins, n)
		}
	})
}

func TestRolesAndDeletion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		admin, _ := s.Users().CreateUser(ctx, "admin@example.com", []byte("h"))
		user, _ := s.Users().CreateUser(ctx, "user@example.com", []byte("h"))

		if _, err := s.Users().SetRole(ctx, admin.ID, patent.RoleUser); !errors.Is(err, patent.ErrLastAdmin) {
			t.Fatalf("demoting the last admin: %v, want ErrLastAdmin", err)
		}
		if _, err := s.Users().SetRole(ctx, 9999, patent.RoleAdmin); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("SetRole(unknown): %v, want ErrNotFound", err)
		}
		u, err := s.Users().SetRole(ctx, user.ID, patent.RoleAdmin)
		if err != nil || u.Role != patent.RoleAdmin {
			t.Fatalf("promote = %+v, %v", u, err)
		}
		// Now two admins: one may go.
		if err := s.Users().DeleteUser(ctx, admin.ID); err != nil {
			t.Fatalf("delete an admin while another remains: %v", err)
		}
		if err := s.Users().DeleteUser(ctx, user.ID); !errors.Is(err, patent.ErrLastAdmin) {
			t.Fatalf("delete the last admin: %v, want ErrLastAdmin", err)
		}
		if err := s.Users().DeleteUser(ctx, 9999); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("delete unknown: %v, want ErrNotFound", err)
		}
		// The first-admin claim is spent: a new registration is a user even
		// though the first admin is gone.
		if u, _ := s.Users().CreateUser(ctx, "late@example.com", []byte("h")); u.Role != patent.RoleUser {
			t.Errorf("registration after the first admin was deleted got role %s, want user", u.Role)
		}
	})
}

// TestConcurrentDemotion: two admins demoting each other at once leave one.
func TestConcurrentDemotion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		a, _ := s.Users().CreateUser(ctx, "a@example.com", []byte("h"))
		b, _ := s.Users().CreateUser(ctx, "b@example.com", []byte("h"))
		s.Users().SetRole(ctx, b.ID, patent.RoleAdmin)
		var wg sync.WaitGroup
		for _, id := range []int64{a.ID, b.ID} {
			wg.Go(func() { s.Users().SetRole(ctx, id, patent.RoleUser) })
		}
		wg.Wait()
		users, _ := s.Users().ListUsers(ctx)
		admins := 0
		for _, u := range users {
			if u.Role == patent.RoleAdmin {
				admins++
			}
		}
		if admins != 1 {
			t.Fatalf("%d admins after concurrent mutual demotion, want 1", admins)
		}
	})
}

func TestRefreshTokens(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		u, _ := s.Users().CreateUser(ctx, "r@example.com", []byte("h"))
		exp := time.Now().Add(time.Hour)
		for _, jti := range []string{"j1", "j2", "j3"} {
			if err := s.Users().SaveRefreshToken(ctx, jti, u.ID, exp); err != nil {
				t.Fatal(err)
			}
		}
		if id, err := s.Users().UseRefreshToken(ctx, "j1"); err != nil || id != u.ID {
			t.Fatalf("first use = %d, %v", id, err)
		}
		if _, err := s.Users().UseRefreshToken(ctx, "j1"); !errors.Is(err, store.ErrRefreshReused) {
			t.Fatalf("second use = %v, want ErrRefreshReused", err)
		}
		// Reuse revoked the user's other tokens.
		if _, err := s.Users().UseRefreshToken(ctx, "j2"); err == nil {
			t.Fatal("a token of a user whose token was replayed still works")
		}
		if _, err := s.Users().UseRefreshToken(ctx, "nope"); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("unknown token = %v, want ErrNotFound", err)
		}
		s.Users().SaveRefreshToken(ctx, "old", u.ID, time.Now().Add(-time.Minute))
		if _, err := s.Users().UseRefreshToken(ctx, "old"); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("expired token = %v, want ErrNotFound", err)
		}
		if n, err := s.Users().PruneRefreshTokens(ctx); err != nil || n != 1 {
			t.Errorf("PruneRefreshTokens = %d, %v; want the expired one", n, err)
		}
		// Deleting the user deletes their tokens (foreign key cascade).
		s.Users().SaveRefreshToken(ctx, "j9", u.ID, exp)
		other, _ := s.Users().CreateUser(ctx, "o@example.com", []byte("h"))
		s.Users().SetRole(ctx, other.ID, patent.RoleAdmin)
		if err := s.Users().DeleteUser(ctx, u.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Users().UseRefreshToken(ctx, "j9"); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("token of a deleted user = %v, want ErrNotFound", err)
		}
	})
}

func TestTrackedCompanies(t *testing.T) {
	storetest.Each(t, func(t *testing.T, s *store.Store) {
		acme, err := storetest.Track(ctx, s, "Acme Corp", time.Now())
		if err != nil || acme.ID == 0 || acme.CompanyName != "Acme Corp" || acme.LastPatentCount != 0 || acme.LastAnalysisAt != nil {
			t.Fatalf("CreateTracked = %+v, %v", acme, err)
		}
		for _, dup := range []patent.CompanyName{"Acme Corp", "ACME CORP", "acme corp"} {
			if _, err := storetest.Track(ctx, s, dup, time.Now()); !errors.Is(err, patent.ErrConflict) {
				t.Errorf("CreateTracked(%q) = %v, want ErrConflict", dup, err)
			}
		}
		storetest.Track(ctx, s, "IBM", time.Now())
		list, err := s.Tracking().ListTracked(ctx)
		if err != nil || len(list) != 2 || list[0].CompanyName != "Acme Corp" || list[1].CompanyName != "IBM" {
			t.Fatalf("ListTracked = %+v, %v", list, err)
		}
		if err := s.Tracking().DeleteTracked(ctx, "aCmE cOrP"); err != nil {
			t.Fatalf("case-insensitive delete: %v", err)
		}
		if err := s.Tracking().DeleteTracked(ctx, "Acme Corp"); !errors.Is(err, patent.ErrNotFound) {
			t.Fatalf("delete untracked = %v, want ErrNotFound", err)
		}
		if list, _ := s.Tracking().ListTracked(ctx); len(list) != 1 {
			t.Errorf("after delete: %+v", list)
		}
	})
}

func TestAlertsNewestFirst(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(d, func(t *testing.T) {
			base := time.Date(2026, 11, 25, 12, 0, 0, 123456789, time.UTC)
			clock := base
			s := storetest.Open(t, d, func() time.Time { return clock })
			// Alert 3 is stamped an hour earlier than the others, though
			// inserted later.
			for i, at := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, -time.Hour, 4 * time.Second} {
				clock = base.Add(at)
				if _, err := s.Tracking().CreateAlert(ctx, patent.Alert{CompanyName: "Acme", AlertType: patent.AlertTypePatentCountChange,
					Message: fmt.Sprintf("alert %d", i), OldValue: 10, NewValue: float64(10 + i)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.Tracking().ListAlerts(ctx, 3)
			if err != nil || len(got) != 3 {
				t.Fatalf("ListAlerts(3) = %v, %v", got, err)
			}
			var msgs []string
			for _, a := range got {
				msgs = append(msgs, a.Message)
			}
			if strings.Join(msgs, ",") != "alert 4,alert 2,alert 1" {
				t.Errorf("order = %v, want newest first: alert 4, alert 2, alert 1", msgs)
			}
			if got[0].CreatedAt.Nanosecond()%1000 != 0 || got[0].CreatedAt.Location() != time.UTC {
				t.Errorf("CreatedAt = %v, want UTC with microsecond precision", got[0].CreatedAt)
			}
		})
	}
}

func mustOpen(t *testing.T, dialect, dsn string) *store.Store {
	t.Helper()
	s, err := store.Open(ctx, dialect, dsn, store.Pool{MaxOpen: 4, MaxIdle: 1, MaxLifetime: time.Minute}, discard(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
