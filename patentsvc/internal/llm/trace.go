package llm

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// tracerName names the tracer of the model's spans.
const tracerName = "github.com/gatewayapis/patentsvc/internal/llm"

// The OpenTelemetry GenAI semantic conventions' attribute names (the Go
// semconv packages have them only in newer, unstable versions).
const (
	attrOperation     = attribute.Key("gen_ai.operation.name")
	attrRequestModel  = attribute.Key("gen_ai.request.model")
	attrResponseModel = attribute.Key("gen_ai.response.model")
	attrMaxTokens     = attribute.Key("gen_ai.request.max_tokens")
	attrInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
)

// startChat starts the span of the chat completion req asks for.
func startChat(ctx context.Context, req patent.CompletionRequest) (context.Context, trace.Span) {
	attrs := []attribute.KeyValue{attrOperation.String("chat"), attrRequestModel.String(req.Model)}
	if req.MaxTokens > 0 {
		attrs = append(attrs, attrMaxTokens.Int(req.MaxTokens))
	}
	return otel.Tracer(tracerName).Start(ctx, "chat "+req.Model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// endChat records the answer's model and token counts on the span, or the
// failure. err's text carries the status and the gateway's message, never
// the URL or the key (Complete's contract), so it may be the status
// description.
func endChat(span trace.Span, out patent.Completion, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
		return
	}
	span.SetAttributes(attrResponseModel.String(out.Model), attrInputTokens.Int(out.PromptTokens), attrOutputTokens.Int(out.CompletionTokens))
}
