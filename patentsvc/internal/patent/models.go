package patent

import (
	"errors"
	"fmt"
	"strings"
)

// Model is an entry of the model allow-list.
type Model struct {
	ID       string // <provider>/<model>, as the LLM gateway names it
	Name     string
	Provider string
}

// DefaultModel is the built-in default for MODEL.
const DefaultModel = "openai/gpt-4o-mini"

// models is the allow-list (decisions.md: exactly these five).
var models = []Model{
	{ID: "openai/gpt-4o-mini", Name: "GPT-4o mini", Provider: "openai"},
	{ID: "anthropic/claude-sonnet-4.5", Name: "Claude Sonnet 4.5", Provider: "anthropic"},
	{ID: "google/gemini-2.5-flash", Name: "Gemini 2.5 Flash", Provider: "google"},
	{ID: "meta-llama/llama-3.3-70b-instruct", Name: "Llama 3.3 70B Instruct", Provider: "meta-llama"},
	{ID: "mistralai/mistral-nemo", Name: "Mistral Nemo", Provider: "mistralai"},
}

// Models returns the allow-list, in a stable order.
func Models() []Model { return append([]Model(nil), models...) }

// ModelIDs returns the allowed model ids.
func ModelIDs() []string {
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	return ids
}

// ErrUnknownModel is returned for a model outside the allow-list (a 400,
// not a validation 422: decisions.md).
var ErrUnknownModel = errors.New("unsupported model")

// ResolveModel returns the model to use for a request: requested when it is
// on the allow-list, def when requested is empty. Anything else is an error
// wrapping ErrUnknownModel whose text lists the supported ids.
func ResolveModel(requested, def string) (string, error) {
	if requested == "" {
		return def, nil
	}
	for _, m := range models {
		if m.ID == requested {
			return requested, nil
		}
	}
	return "", fmt.Errorf("%w %q; supported models: %s", ErrUnknownModel, requested, strings.Join(ModelIDs(), ", "))
}
