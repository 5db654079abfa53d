import type { TokenUsage } from '../../core/usage';
import type { MessagesUsage } from './api';

/**
 * Anthropic usage in OpenAI's shape (TokenUsage, which the request log and the chunk emitter both
 * take). Anthropic counts cache writes and cache reads apart from `input_tokens`, so the prompt
 * total is the sum of the three; cache reads are OpenAI's `cached_tokens`. Thinking tokens are part
 * of `output_tokens`; when Anthropic breaks them out they become `reasoning_tokens`.
 * @see https://docs.anthropic.com/en/api/messages#response-usage
 */
export function mapUsage(usage: MessagesUsage): TokenUsage {
  const cacheWrite = usage.cache_creation_input_tokens ?? 0;
  const cacheRead = usage.cache_read_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + cacheWrite + cacheRead;
  const completion = usage.output_tokens ?? 0;
  const mapped: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (usage.cache_read_input_tokens != null || usage.cache_creation_input_tokens != null) {
    mapped.prompt_tokens_details = { cached_tokens: cacheRead };
  }
  const thinking = usage.output_tokens_details?.thinking_tokens;
  if (typeof thinking === 'number') mapped.completion_tokens_details = { reasoning_tokens: thinking };
  return mapped;
}

/**
 * Streamed usage: `message_start` reports the input side, each `message_delta` the output so far
 * (cumulative) and, on newer API versions, the input side again. Later fields replace earlier ones.
 */
export function mergeUsage(previous: MessagesUsage, update: MessagesUsage | undefined): MessagesUsage {
  if (!update) return previous;
  const merged: MessagesUsage = { ...previous };
  for (const key of ['input_tokens', 'output_tokens', 'cache_creation_input_tokens', 'cache_read_input_tokens', 'output_tokens_details'] as const) {
    if (update[key] != null) (merged as Record<string, unknown>)[key] = update[key];
  }
  return merged;
}
