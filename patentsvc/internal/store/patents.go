package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm/clause"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

type patentRow struct {
	PatentID        string `gorm:"primaryKey"`
	CompanyName     *string
	Title           *string
	PublicationDate *string
	PDFLink         *string `gorm:"column:pdf_link"`
	Summary         *string
	PDFPath         *string `gorm:"column:pdf_path"`
	// PDFVerdict and PDFLimits: migration 0010.
	PDFVerdict *string `gorm:"column:pdf_verdict"`
	PDFLimits  *string `gorm:"column:pdf_limits"`
	UpdatedAt  time.Time
}

func (patentRow) TableName() string { return "patents" }

// UpsertPatent records what the search said of a patent, and what reading
// its PDF found. Empty fields do not overwrite known ones, so a later
// search without a PDF link keeps the cached link (the single-patent
// endpoint reuses it), and a verdict stays until another replaces it.
func (s Analyses) UpsertPatent(ctx context.Context, p patent.StoredPatent) error {
	row := patentRow{PatentID: p.PatentID, CompanyName: opt(p.CompanyName), Title: opt(p.Title),
		PublicationDate: opt(p.PublicationDate), PDFLink: opt(p.PDFLink), Summary: opt(p.Summary),
		PDFPath: opt(p.PDFPath), PDFVerdict: opt(p.PDFVerdict), PDFLimits: opt(p.PDFLimits), UpdatedAt: utc(s.now())}
	var set []string
	for col, v := range map[string]*string{"company_name": row.CompanyName, "title": row.Title,
		"publication_date": row.PublicationDate, "pdf_link": row.PDFLink, "summary": row.Summary, "pdf_path": row.PDFPath,
		"pdf_verdict": row.PDFVerdict, "pdf_limits": row.PDFLimits} {
		if v != nil {
			set = append(set, col)
		}
	}
	set = append(set, "updated_at")
	err := s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "patent_id"}},
		DoUpdates: clause.AssignmentColumns(set),
	}).Create(&row).Error
	if err != nil {
		return fmt.Errorf("store patent %s: %w", p.PatentID, err)
	}
	return nil
}

// Patent returns a stored patent, or patent.ErrNotFound.
func (s Analyses) Patent(ctx context.Context, id string) (patent.StoredPatent, error) {
	var row patentRow
	if err := s.db.WithContext(ctx).Take(&row, "patent_id = ?", id).Error; err != nil {
		return patent.StoredPatent{}, fmt.Errorf("patent %s: %w", id, translate(err, patent.ErrNotFound, patent.ErrConflict))
	}
	return patent.StoredPatent{PatentID: row.PatentID, CompanyName: deref(row.CompanyName), Title: deref(row.Title),
		PublicationDate: deref(row.PublicationDate), PDFLink: deref(row.PDFLink), Summary: deref(row.Summary),
		PDFPath: deref(row.PDFPath), PDFVerdict: deref(row.PDFVerdict), PDFLimits: deref(row.PDFLimits)}, nil
}

// PDFVerdicts returns, of the patents ids, the verdicts stored under
// limits (their PDFs past the limits on reading a document), by patent
// id: one query for a whole analysis.
func (s Analyses) PDFVerdicts(ctx context.Context, limits string, ids []string) (map[string]string, error) {
	var rows []patentRow
	err := s.db.WithContext(ctx).Select("patent_id", "pdf_verdict").
		Where("patent_id IN ? AND pdf_limits = ? AND pdf_verdict IS NOT NULL", ids, limits).Find(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("pdf verdicts: %w", err)
	}
	out := make(map[string]string, len(rows))
	for _, r := range rows {
		out[r.PatentID] = deref(r.PDFVerdict)
	}
	return out, nil
}
