package analysis

import (
	"bytes"
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// tracerName names the tracer of the analysis spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/analysis"

// startAnalysis starts the span of a company's analysis. The company's
// name is public (it is in the request's path); the span holds nothing of
// the prompt or the answer.
func startAnalysis(ctx context.Context, name patent.CompanyName) (context.Context, trace.Span) {
	return otel.Tracer(tracerName).Start(ctx, "analyze company",
		trace.WithAttributes(attribute.String("patent.company", name.String())))
}

// endAnalysis records the analysis's outcome on its span: the number of
// patents found, whether the answer came from the cache, and an error
// status with the result's message when it failed.
func endAnalysis(span trace.Span, res patent.CompanyAnalysis) {
	span.SetAttributes(attribute.Int("patent.count", res.PatentCount), attribute.Bool("patent.analysis.cached", res.Cached))
	if !res.Success && res.Error != nil {
		span.SetStatus(codes.Error, *res.Error)
	}
}

// extractTraced reads a patent's PDF in a span of its own, "extract pdf",
// with the patent's id; the extractor adds the page count and whether OCR
// read the document (pdf.Extractor sets them on the span in its context).
func (a *Analyzer) extractTraced(ctx context.Context, id string, data []byte) (patent.Sections, error) {
	ctx, span := otel.Tracer(tracerName).Start(ctx, "extract pdf",
		trace.WithAttributes(attribute.String("patent.id", id), attribute.Int("pdf.size_bytes", len(data)), attribute.Bool("pdf.ocr", false)))
	defer span.End()
	s, err := a.extract(ctx, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "pdf not readable")
		return s, err
	}
	span.SetAttributes(attribute.Int("pdf.pages", s.Pages))
	return s, nil
}
