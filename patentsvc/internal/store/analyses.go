package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type analysisRow struct {
	ID               int64 `gorm:"primaryKey"`
	CompanyName      *string
	AnalysisType     string
	PatentID         *string
	Model            *string
	Response         *string
	Cached           bool
	PromptTokens     int
	CompletionTokens int
	AnalyzedAt       time.Time
	RequestedBy      *string
	// Portfolio and Patents: migration 0011 (JSON, facts.go).
	Portfolio *string
	Patents   *string
}

func (analysisRow) TableName() string { return "analyses" }

func (r analysisRow) toDomain() patent.AnalysisRecord {
	return patent.AnalysisRecord{ID: r.ID, CompanyName: deref(r.CompanyName), AnalysisType: r.AnalysisType,
		PatentID: deref(r.PatentID), Model: deref(r.Model), Response: deref(r.Response), Cached: r.Cached,
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Timestamp: r.AnalyzedAt.UTC(),
		RequestedBy: deref(r.RequestedBy), Portfolio: readPortfolio(r.Portfolio), Patents: readPatentRefs(r.Patents)}
}

// CreateAnalysis stores an analysis, stamped now unless it carries a time.
func (s Analyses) CreateAnalysis(ctx context.Context, a patent.AnalysisRecord) (patent.AnalysisRecord, error) {
	at := a.Timestamp
	if at.IsZero() {
		at = s.now()
	}
	row := analysisRow{CompanyName: opt(a.CompanyName), AnalysisType: a.AnalysisType, PatentID: opt(a.PatentID),
		Model: opt(a.Model), Response: opt(a.Response), Cached: a.Cached, PromptTokens: a.PromptTokens,
		CompletionTokens: a.CompletionTokens, AnalyzedAt: utc(at), RequestedBy: opt(a.RequestedBy),
		Portfolio: portfolioColumn(a.Portfolio), Patents: patentRefsColumn(a.Patents)}
	if err := s.db.WithContext(ctx).Create(&row).Error; err != nil {
		return patent.AnalysisRecord{}, fmt.Errorf("store analysis: %w", err)
	}
	return row.toDomain(), nil
}

// ListAnalyses returns a page of non-cached analyses, newest first (ties
// broken by id, newest first), optionally only those of a company (exact
// name, any letter case): at most limit analyses and PageBytes of answers
// (at least one analysis, however long). next is the cursor of the
// following page, after the last analysis returned, empty on the last one.
func (s Analyses) ListAnalyses(ctx context.Context, company string, limit int, after string) ([]patent.AnalysisRecord, string, error) {
	q := s.db.WithContext(ctx).Model(&analysisRow{}).Where("NOT cached")
	if company != "" {
		q = q.Where("lower(company_name) = lower(?)", company)
	}
	if c, ok := decodeCursor(after); ok {
		id, err := strconv.ParseInt(c.id, 10, 64)
		if err == nil {
			q = q.Where("(analyzed_at, id) < (?, ?)", c.at, id)
		}
	}
	newest := clause.OrderBy{Columns: []clause.OrderByColumn{
		{Column: clause.Column{Name: "analyzed_at"}, Desc: true},
		{Column: clause.Column{Name: "id"}, Desc: true},
	}}
	// The page is sized before it is loaded (PageBytes).
	var keys []pageKey[int64]
	err := q.Select("analyzed_at AS at, id, COALESCE(octet_length(response), 0) AS size").
		Order(newest).Limit(limit + 1).Scan(&keys).Error
	if err != nil {
		return nil, "", fmt.Errorf("list analyses: %w", err)
	}
	rows, next, err := listPage(keys, limit, func(ids []int64) ([]analysisRow, error) {
		var rows []analysisRow
		// The listing shows neither the portfolio nor the patents: they are
		// not read (a page's bytes are its answers').
		err := s.db.WithContext(ctx).Omit("portfolio", "patents").Where("id IN ?", ids).Order(newest).Find(&rows).Error
		return rows, err
	}, analysisRow.key)
	if err != nil {
		return nil, "", fmt.Errorf("list analyses: %w", err)
	}
	out := make([]patent.AnalysisRecord, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, next, nil
}

// key is r's place in the listing and the bytes of its answer.
func (r analysisRow) key() pageKey[int64] {
	return pageKey[int64]{At: r.AnalyzedAt, ID: r.ID, Size: int64(len(deref(r.Response)))}
}

func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// optID is a user id as a nullable column: 0 (none) is NULL.
func optID(id int64) *int64 {
	if id == 0 {
		return nil
	}
	return &id
}

func derefID(id *int64) int64 {
	if id == nil {
		return 0
	}
	return *id
}
