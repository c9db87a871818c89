package patent

// CompletionRequest is one question to the language model: an optional
// system message and the user's prompt, sent to Model.
type CompletionRequest struct {
	Model  string // gateway model id, e.g. "openai/gpt-4o-mini"
	System string // system message; left out of the request when empty
	Prompt string // user message; must not be blank
	// MaxTokens caps the answer's length; 0 leaves it to the gateway.
	MaxTokens int
	// Temperature is always sent, 0 included (0 to 2).
	Temperature float64
	// Fresh asks the model itself, not an answer cached before
	// (analysis.CachedCompletions); it is no part of the request sent.
	Fresh bool
}

// Completion is the language model's answer.
type Completion struct {
	// Text is the answer, trimmed of surrounding white space, clean
	// (CleanText) and within the client's cap (CutAnswer); never empty.
	Text string
	// Model is the model that actually answered: the answer's "model" field,
	// or CompletionRequest.Model when the answer has none. A gateway may
	// fall back to another model, and bills that one.
	Model            string
	PromptTokens     int // 0 when the gateway reports no usage
	CompletionTokens int
	// Cached is set when the answer came from the LLM cache, not the
	// gateway (analysis.CachedCompletions).
	Cached bool
}

// LLMAnswer is a language-model answer as the LLM cache keeps it.
type LLMAnswer struct {
	Key              string // the cache key: model and prompt
	Model            string // requested
	AnsweredModel    string // the model that actually answered
	Response         string
	PromptTokens     int
	CompletionTokens int
}
