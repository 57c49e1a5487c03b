package normalize

import (
	"encoding/json"

	"github.com/perch-tui/perch/events"
)

// Usage reads a usage record of any vocabulary into perch's meaning:
// InputTokens is the whole prompt, cache reads and writes included;
// CachedTokens the cache reads. It understands
//   - OpenAI (prompt_tokens, completion_tokens, prompt_tokens_details
//     .cached_tokens / .cache_write_tokens, completion_tokens_details
//     .reasoning_tokens, cost): the prompt already includes the cache;
//   - Anthropic (input_tokens, output_tokens, cache_read_input_tokens,
//     cache_creation_input_tokens): input_tokens excludes the cache, so the
//     prompt is their sum;
//   - both at once (LiteLLM): prompt_tokens is trusted as the total and each
//     cache count is taken once (the larger of its two spellings);
//   - Attocode (cache_read_tokens, cache_creation_tokens, cost) and camelCase
//     (inputTokens, cacheReadTokens, cacheWriteTokens, cachedTokens);
//   - a list of records (summed) and null (unknown, nil).
//
// Numbers may be strings or floats. A record with no count at all is nil.
func Usage(raw json.RawMessage) *events.Usage {
	if l := list(raw); l != nil {
		var sum *events.Usage
		for _, r := range l {
			if u := Usage(r); u != nil {
				if sum == nil {
					sum = &events.Usage{}
				}
				sum.Add(u)
			}
		}
		return sum
	}
	o := object(raw)
	if o == nil {
		return nil
	}
	get := func(keys ...string) (int64, bool) {
		for _, k := range keys {
			if v, ok := Int(o[k]); ok {
				return v, true
			}
		}
		return 0, false
	}
	details := object(o["prompt_tokens_details"])
	if details == nil {
		details = object(o["input_tokens_details"])
	}
	detail := func(key string) (int64, bool) { return Int(details[key]) }

	prompt, hasPrompt := get("prompt_tokens")
	input, hasInput := get("input_tokens", "inputTokens", "input")
	output, hasOutput := get("completion_tokens", "output_tokens", "outputTokens", "output")
	total, hasTotal := get("total_tokens", "totalTokens", "total")

	cacheRead, hasRead := maxOf(
		pair(get("cache_read_input_tokens", "cache_read_tokens", "cacheReadTokens", "cachedTokens", "cached")),
		pair(get("cached_input_tokens")),
		pair(detail("cached_tokens")))
	cacheWrite, hasWrite := maxOf(
		pair(get("cache_creation_input_tokens", "cache_creation_tokens", "cacheWriteTokens", "cache_write_tokens")),
		pair(detail("cache_write_tokens")))

	reasoning, hasReasoning := int64(0), false
	if cd := object(o["completion_tokens_details"]); cd != nil {
		reasoning, hasReasoning = Int(cd["reasoning_tokens"])
	}
	if od := object(o["output_tokens_details"]); od != nil && !hasReasoning {
		reasoning, hasReasoning = Int(od["reasoning_tokens"])
	}
	if v, ok := get("reasoning_tokens", "reasoningTokens", "reasoning_output_tokens"); ok && !hasReasoning {
		reasoning, hasReasoning = v, true
	}

	if !hasPrompt && !hasInput && !hasOutput && !hasTotal && !hasRead && !hasWrite {
		return nil
	}
	u := &events.Usage{OutputTokens: output, CachedTokens: cacheRead}
	switch {
	case hasPrompt:
		// OpenAI meaning (also when Anthropic keys ride along): the prompt
		// total already holds the cache.
		u.InputTokens = prompt
	case hasInput && isOpenAIResponses(o):
		u.InputTokens = input
	default:
		// Anthropic meaning: input excludes cache reads and writes.
		u.InputTokens = input + cacheRead + cacheWrite
	}
	if hasTotal {
		u.TotalTokens = total
	} else {
		u.TotalTokens = u.InputTokens + u.OutputTokens
	}
	if hasWrite {
		u.CacheWriteTokens, u.HasCacheWrite = cacheWrite, true
	}
	if hasReasoning {
		u.ReasoningTokens, u.HasReasoning = reasoning, true
	}
	for _, k := range []string{"cost", "cost_usd", "total_cost_usd", "costUSD"} {
		if c, ok := Float(o[k]); ok {
			u.CostUSD, u.HasCost = c, true
			break
		}
	}
	return u
}

// isOpenAIResponses: OpenAI's Responses API (and codex) say input_tokens
// with input_tokens_details.cached_tokens, and mean the whole prompt.
func isOpenAIResponses(o Object) bool {
	_, ok := o["input_tokens_details"]
	_, ok2 := o["cached_input_tokens"]
	return ok || ok2
}

type counted struct {
	v  int64
	ok bool
}

func pair(v int64, ok bool) counted { return counted{v, ok} }

func maxOf(cs ...counted) (int64, bool) {
	var best int64
	any := false
	for _, c := range cs {
		if c.ok && (!any || c.v > best) {
			best, any = c.v, true
		}
	}
	return best, any
}
