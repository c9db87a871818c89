package store

import (
	"context"
	"fmt"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
	"gorm.io/gorm/clause"
)

type searchCacheRow struct {
	CacheKey  string `gorm:"primaryKey"`
	Response  string
	CreatedAt time.Time
}

func (searchCacheRow) TableName() string { return "search_cache" }

// SearchCache returns the cached search answer for key if it is younger
// than maxAge.
func (s Caches) SearchCache(ctx context.Context, key string, maxAge time.Duration) ([]byte, bool, error) {
	var row searchCacheRow
	err := s.db.WithContext(ctx).Where("cache_key = ? AND created_at > ?", key, utc(s.now().Add(-maxAge))).Limit(1).Find(&row).Error
	if err != nil {
		return nil, false, fmt.Errorf("read search cache: %w", err)
	}
	if row.CacheKey == "" {
		return nil, false, nil
	}
	return []byte(row.Response), true, nil
}

// PutSearchCache stores (or refreshes) a search answer.
func (s Caches) PutSearchCache(ctx context.Context, key string, body []byte) error {
	row := searchCacheRow{CacheKey: key, Response: string(body), CreatedAt: utc(s.now())}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "cache_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"response", "created_at"}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("write search cache: %w", err)
	}
	return nil
}

type llmCacheRow struct {
	CacheKey         string `gorm:"primaryKey"`
	Model            string
	AnsweredModel    *string
	Response         string
	PromptTokens     int
	CompletionTokens int
	CreatedAt        time.Time
}

func (llmCacheRow) TableName() string { return "llm_cache" }

// LLMCache returns the cached answer for key.
func (s Caches) LLMCache(ctx context.Context, key string) (patent.LLMAnswer, bool, error) {
	var row llmCacheRow
	if err := s.db.WithContext(ctx).Where("cache_key = ?", key).Limit(1).Find(&row).Error; err != nil {
		return patent.LLMAnswer{}, false, fmt.Errorf("read llm cache: %w", err)
	}
	if row.CacheKey == "" {
		return patent.LLMAnswer{}, false, nil
	}
	return patent.LLMAnswer{Key: row.CacheKey, Model: row.Model, AnsweredModel: deref(row.AnsweredModel), Response: row.Response,
		PromptTokens: row.PromptTokens, CompletionTokens: row.CompletionTokens}, true, nil
}

// PutLLMCache stores (or replaces) an answer.
func (s Caches) PutLLMCache(ctx context.Context, a patent.LLMAnswer) error {
	row := llmCacheRow{CacheKey: a.Key, Model: a.Model, AnsweredModel: opt(a.AnsweredModel), Response: a.Response,
		PromptTokens: a.PromptTokens, CompletionTokens: a.CompletionTokens, CreatedAt: utc(s.now())}
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "cache_key"}},
		DoUpdates: clause.AssignmentColumns([]string{"model", "answered_model", "response", "prompt_tokens", "completion_tokens", "created_at"}),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("write llm cache: %w", err)
	}
	return nil
}
