package analysis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/gatewayapis/patentsvc/internal/patent"
)

// The caching policies of the analysis (decisions.md, USE_CACHE,
// SERP_CACHE_TTL_HOURS), each a decorator around the upstream it caches
// (STYLE.md item 26): the analyzer asks a Searcher and a Completer and
// never sees a cache. main composes them: CachedSearch(serpapi client),
// CachedCompletions(llm client).

// SearchCache keeps search answers by key; store.Caches implements it.
type SearchCache interface {
	// SearchCache returns the answer stored under key less than maxAge
	// ago; ok is false when there is none.
	SearchCache(ctx context.Context, key string, maxAge time.Duration) (body []byte, ok bool, err error)
	PutSearchCache(ctx context.Context, key string, body []byte) error
}

// LLMCache keeps the language model's answers by key; store.Caches
// implements it.
type LLMCache interface {
	// LLMCache returns the answer stored under key; ok is false when there
	// is none.
	LLMCache(ctx context.Context, key string) (a patent.LLMAnswer, ok bool, err error)
	PutLLMCache(ctx context.Context, a patent.LLMAnswer) error
}

// CacheConfig holds the caching policies' settings.
type CacheConfig struct {
	// Read (USE_CACHE) answers from the caches; off, they are still
	// written, so they are warm when it is turned on.
	Read bool
	// SearchTTL (SERP_CACHE_TTL_HOURS) is how long a search answer is
	// answered again.
	SearchTTL time.Duration
	// MaxAnswerBytes caps an answer read from the LLM cache
	// (LLM_MAX_ANSWER_KB; 0: no cap). The language model's client cuts
	// fresh answers; this cuts cached ones, which may predate the cap or a
	// lower one.
	MaxAnswerBytes int
}

// CachedSearch returns next with the search cache: when cfg.Read is set
// (USE_CACHE) and the query is not Fresh, a search answered less than
// cfg.SearchTTL ago is answered again from cache; every answer next gives is stored, so
// a fresh search refreshes the cache. A cache that fails is logged and
// passed by: the search still runs.
func CachedSearch(next Searcher, cache SearchCache, cfg CacheConfig, logger *slog.Logger) Searcher {
	return cachedSearch{next: next, cache: cache, read: cfg.Read, ttl: cfg.SearchTTL, logger: logger}
}

type cachedSearch struct {
	next   Searcher
	cache  SearchCache
	read   bool
	ttl    time.Duration
	logger *slog.Logger
}

func (c cachedSearch) Key(q patent.SearchQuery) string { return c.next.Key(q) }

func (c cachedSearch) Search(ctx context.Context, q patent.SearchQuery) (patent.SearchResult, error) {
	key := c.next.Key(q)
	if c.read && !q.Fresh {
		body, ok, err := c.cache.SearchCache(ctx, key, c.ttl)
		if err != nil {
			c.logger.WarnContext(ctx, "search cache read failed", "err", err.Error())
		}
		var r patent.SearchResult
		if ok && json.Unmarshal(body, &r) == nil {
			return r, nil
		}
	}
	r, err := c.next.Search(ctx, q)
	if err != nil {
		return patent.SearchResult{}, err
	}
	if body, err := json.Marshal(r); err == nil {
		if err := c.cache.PutSearchCache(ctx, key, body); err != nil {
			c.logger.WarnContext(ctx, "search cache write failed", "err", err.Error())
		}
	}
	return r, nil
}

// CachedCompletions returns next with the LLM cache: when cfg.Read is set
// (USE_CACHE) and the request is not Fresh, a request asked before (the
// same model, prompt version, system prompt and prompt) is answered from
// cache, Completion.Cached set; every answer next gives is stored. A
// cached answer is held to the rules of a fresh one (decisions.md, "Both
// services: hostile input answered, never a 5xx"): an entry written
// before them may hold NUL characters (SQLite kept them), or be longer
// than cfg.MaxAnswerBytes is now; clean
// entries are returned as they are, and one that cleaning empties is a
// miss. A cache that fails is logged and passed by.
func CachedCompletions(next Completer, cache LLMCache, cfg CacheConfig, logger *slog.Logger) Completer {
	return cachedCompletions{next: next, cache: cache, read: cfg.Read, maxAnswer: cfg.MaxAnswerBytes, logger: logger}
}

type cachedCompletions struct {
	next      Completer
	cache     LLMCache
	read      bool
	maxAnswer int
	logger    *slog.Logger
}

func (c cachedCompletions) Complete(ctx context.Context, req patent.CompletionRequest) (patent.Completion, error) {
	key := cacheKey(req.Model, req.System, req.Prompt)
	if c.read && !req.Fresh {
		ans, ok, err := c.cache.LLMCache(ctx, key)
		if err != nil {
			c.logger.WarnContext(ctx, "llm cache read failed", "err", err.Error())
		}
		if ok {
			text := patent.CutAnswer(patent.CleanText(ans.Response), c.maxAnswer)
			if text != "" {
				return patent.Completion{Text: text, Model: patent.CleanText(ans.AnsweredModel), Cached: true,
					PromptTokens: ans.PromptTokens, CompletionTokens: ans.CompletionTokens}, nil
			}
		}
	}
	resp, err := c.next.Complete(ctx, req)
	if err != nil {
		return patent.Completion{}, err
	}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	ans := patent.LLMAnswer{Key: key, Model: req.Model, AnsweredModel: resp.Model, Response: resp.Text,
		PromptTokens: resp.PromptTokens, CompletionTokens: resp.CompletionTokens}
	if err := c.cache.PutLLMCache(ctx, ans); err != nil {
		c.logger.WarnContext(ctx, "llm cache write failed", "err", err.Error())
	}
	return resp, nil
}

// cacheKey identifies an LLM answer: the model and a hash of everything
// sent, under the prompt's version.
func cacheKey(model, system, prompt string) string {
	h := sha256.New()
	for _, part := range []string{PromptVersion, model, system, prompt} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
