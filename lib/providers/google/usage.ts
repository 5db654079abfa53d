import type { TokenUsage } from '../../core/usage';
import type { GeminiUsageMetadata } from './api';

/**
 * Gemini's `usageMetadata` as OpenAI usage. Thinking tokens are billed as output, so they count as
 * completion tokens and are reported as `reasoning_tokens`; tool-use prompt tokens count as prompt
 * tokens; `cachedContentTokenCount` is `cached_tokens`. Undefined while a chunk has no counts yet
 * (Vertex streams only carry them on the last chunk).
 * @see https://ai.google.dev/api/generate-content#UsageMetadata
 */
export function toUsage(metadata: GeminiUsageMetadata | undefined): TokenUsage | undefined {
  if (!metadata || (metadata.promptTokenCount === undefined && metadata.totalTokenCount === undefined)) return undefined;
  const prompt = (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0);
  const completion = (metadata.candidatesTokenCount ?? 0) + (metadata.thoughtsTokenCount ?? 0);
  const usage: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: metadata.totalTokenCount ?? prompt + completion };
  if (metadata.cachedContentTokenCount !== undefined) usage.prompt_tokens_details = { cached_tokens: metadata.cachedContentTokenCount };
  if (metadata.thoughtsTokenCount !== undefined) usage.completion_tokens_details = { reasoning_tokens: metadata.thoughtsTokenCount };
  return usage;
}
