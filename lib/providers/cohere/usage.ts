import type { TokenUsage } from '../../core/usage';
import type { CohereUsage } from './api';

/**
 * Cohere usage in OpenAI's shape, from `usage.tokens` — the tokens the model read and wrote,
 * including the chat template and tool definitions — rather than `billed_units`, which leaves
 * those out (a Cohere pricing choice). `cached_tokens` becomes `prompt_tokens_details.cached_tokens`.
 * @see https://docs.cohere.com/reference/chat#response.body.usage
 */
export function mapUsage(usage: CohereUsage | undefined): TokenUsage | undefined {
  if (!usage) return undefined;
  const counts = usage.tokens ?? usage.billed_units;
  if (!counts) return undefined;
  const prompt = counts.input_tokens ?? 0;
  const completion = counts.output_tokens ?? 0;
  const mapped: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (typeof usage.cached_tokens === 'number') mapped.prompt_tokens_details = { cached_tokens: usage.cached_tokens };
  return mapped;
}
