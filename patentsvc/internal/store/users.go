package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type userRow struct {
	ID           int64 `gorm:"primaryKey"`
	Email        string
	PasswordHash []byte
	Role         string
	CreatedAt    time.Time
	TokenVersion int
}

func (userRow) TableName() string { return "users" }

func (r userRow) toDomain() patent.User {
	return patent.User{ID: r.ID, Email: r.Email, Role: patent.Role(r.Role), PasswordHash: r.PasswordHash,
		CreatedAt: r.CreatedAt.UTC(), TokenVersion: r.TokenVersion}
}

type adminClaimRow struct {
	ID        int `gorm:"primaryKey"`
	ClaimedAt time.Time
}

func (adminClaimRow) TableName() string { return "admin_claim" }

// ErrRefreshReused is returned for a refresh token that was already
// exchanged; all of the user's refresh tokens are revoked when it happens.
var ErrRefreshReused = patent.ErrTokenReplayed

// CreateUser stores a new user with a lowercased email. The first user ever
// registered becomes admin: the registration that inserts the admin_claim
// row wins, which holds under concurrency on both dialects (on PostgreSQL
// a concurrent claim waits for the first one's transaction and then does
// nothing). Returns patent.ErrConflict for an email already registered.
func (s Users) CreateUser(ctx context.Context, email string, passwordHash []byte) (patent.User, error) {
	row := userRow{Email: email, PasswordHash: passwordHash, Role: string(patent.RoleUser)}
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		claim := tx.Clauses(clause.OnConflict{DoNothing: true}).Create(&adminClaimRow{ID: 1, ClaimedAt: utc(s.now())})
		if claim.Error != nil {
			return claim.Error
		}
		if claim.RowsAffected == 1 {
			row.Role = string(patent.RoleAdmin)
		}
		return tx.Create(&row).Error
	})
	if err != nil {
		return patent.User{}, fmt.Errorf("create user: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// UserByID returns the user, or patent.ErrNotFound.
func (s Users) UserByID(ctx context.Context, id int64) (patent.User, error) {
	var row userRow
	if err := s.db.WithContext(ctx).Take(&row, id).Error; err != nil {
		return patent.User{}, fmt.Errorf("user %d: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// UserByEmail returns the user with this (lowercased) email, or
// patent.ErrNotFound.
func (s Users) UserByEmail(ctx context.Context, email string) (patent.User, error) {
	var row userRow
	if err := s.db.WithContext(ctx).Where("email = ?", email).Take(&row).Error; err != nil {
		return patent.User{}, fmt.Errorf("user by email: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// ListUsers returns every user, oldest first.
func (s Users) ListUsers(ctx context.Context) ([]patent.User, error) {
	var rows []userRow
	if err := s.db.WithContext(ctx).Order("id").Find(&rows).Error; err != nil {
		return nil, fmt.Errorf("list users: %w", err)
	}
	users := make([]patent.User, len(rows))
	for i, r := range rows {
		users[i] = r.toDomain()
	}
	return users, nil
}

// SetRole changes a user's role and returns the user. Demoting the last
// admin returns patent.ErrLastAdmin; an unknown user patent.ErrNotFound.
// Role changes are serialised, so two admins demoting each other at once
// cannot leave none.
func (s Users) SetRole(ctx context.Context, id int64, role patent.Role) (patent.User, error) {
	var row userRow
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := s.lockKey(tx, lockAdmins); err != nil {
			return err
		}
		if err := tx.Take(&row, id).Error; err != nil {
			return err
		}
		if row.Role == string(patent.RoleAdmin) && role != patent.RoleAdmin {
			if err := lastAdminGuard(tx); err != nil {
				return err
			}
		}
		row.Role = string(role)
		return tx.Model(&row).Update("role", row.Role).Error
	})
	if err != nil {
		return patent.User{}, fmt.Errorf("set role of user %d: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return row.toDomain(), nil
}

// DeleteUser deletes a user and their refresh tokens. Their jobs stay,
// with their user id (jobs.user_id has no foreign key), for admins to see.
// It returns patent.ErrNotFound for an unknown user and
// patent.ErrLastAdmin for the last admin (counted under the admins' lock,
// in the same transaction).
func (s Users) DeleteUser(ctx context.Context, id int64) error {
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		if err := s.lockKey(tx, lockAdmins); err != nil {
			return err
		}
		var row userRow
		if err := tx.Take(&row, id).Error; err != nil {
			return err
		}
		if row.Role == string(patent.RoleAdmin) {
			if err := lastAdminGuard(tx); err != nil {
				return err
			}
		}
		return tx.Delete(&row).Error
	})
	if err != nil {
		return fmt.Errorf("delete user %d: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return nil
}

func lastAdminGuard(tx *gorm.DB) error {
	var admins int64
	if err := tx.Model(&userRow{}).Where("role = ?", string(patent.RoleAdmin)).Count(&admins).Error; err != nil {
		return err
	}
	if admins <= 1 {
		return patent.ErrLastAdmin
	}
	return nil
}

type refreshTokenRow struct {
	JTI       string `gorm:"primaryKey;column:jti"`
	UserID    int64
	ExpiresAt time.Time
	UsedAt    *time.Time
	CreatedAt time.Time
}

func (refreshTokenRow) TableName() string { return "refresh_tokens" }

// SaveRefreshToken records an issued refresh token so that it can be
// exchanged exactly once.
func (s Users) SaveRefreshToken(ctx context.Context, jti string, userID int64, expiresAt time.Time) error {
	row := refreshTokenRow{JTI: jti, UserID: userID, ExpiresAt: utc(expiresAt)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return fmt.Errorf("save refresh token: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return nil
}

// UseRefreshToken marks an unexpired refresh token used and returns its
// user. A token used before returns ErrRefreshReused, after revoking every
// refresh token of that user (someone holds a stolen copy); an unknown or
// expired one returns patent.ErrNotFound.
func (s Users) UseRefreshToken(ctx context.Context, jti string) (int64, error) {
	now := utc(s.now())
	var userID int64
	err := s.inTx(ctx, func(tx *gorm.DB) error {
		res := tx.Model(&refreshTokenRow{}).
			Where("jti = ? AND used_at IS NULL AND expires_at > ?", jti, now).
			Update("used_at", now)
		if res.Error != nil {
			return res.Error
		}
		var row refreshTokenRow
		if err := tx.Take(&row, "jti = ?", jti).Error; err != nil {
			return err
		}
		userID = row.UserID
		if res.RowsAffected == 1 {
			return nil
		}
		if row.UsedAt == nil || !row.ExpiresAt.After(now) {
			return gorm.ErrRecordNotFound // expired
		}
		return ErrRefreshReused
	})
	if errors.Is(err, ErrRefreshReused) {
		// Revoke outside the failed exchange, so the revocation commits:
		// every refresh token, and every access token (a new version).
		if rerr := s.revokeTokens(ctx, userID, now); rerr != nil {
			return 0, fmt.Errorf("revoke tokens: %w", rerr)
		}
		return 0, ErrRefreshReused
	}
	if err != nil {
		return 0, fmt.Errorf("use refresh token: %w", translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return userID, nil
}

// revokeTokens ends every token of the user at once: its token version
// goes up, which every token issued before no longer matches (auth checks
// it on access and refresh tokens alike), and its unused refresh tokens are
// marked used. The marking can miss a refresh token saved concurrently (a
// racing exchange of the replayed token); that one carries the old version,
// so auth refuses it all the same.
func (s *base) revokeTokens(ctx context.Context, userID int64, now time.Time) error {
	return s.inTx(ctx, func(tx *gorm.DB) error {
		if err := tx.Model(&refreshTokenRow{}).Where("user_id = ? AND used_at IS NULL", userID).
			Update("used_at", now).Error; err != nil {
			return err
		}
		return tx.Model(&userRow{}).Where("id = ?", userID).
			Update("token_version", gorm.Expr("token_version + 1")).Error
	})
}

// PruneRefreshTokens deletes refresh tokens that expired before now and
// returns how many.
func (s Users) PruneRefreshTokens(ctx context.Context) (int64, error) {
	res := s.db.WithContext(ctx).Where("expires_at <= ?", utc(s.now())).Delete(&refreshTokenRow{})
	if res.Error != nil {
		return 0, fmt.Errorf("prune refresh tokens: %w", res.Error)
	}
	return res.RowsAffected, nil
}
