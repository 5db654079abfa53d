import type { TokenUsage } from '../../core/usage';
import type { BedrockUsage } from './api';

/**
 * Converse usage in OpenAI's shape. Bedrock counts cache reads and writes apart from `inputTokens`,
 * while OpenAI's `prompt_tokens` covers the whole prompt with `cached_tokens` as a part of it, so the
 * three are added up; cache writes are reported as `cache_write_tokens` beside `cached_tokens`.
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html
 */
export function mapUsage(usage: BedrockUsage | undefined): TokenUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const cacheRead = count(usage.cacheReadInputTokens);
  const cacheWrite = count(usage.cacheWriteInputTokens);
  const prompt = count(usage.inputTokens) + cacheRead + cacheWrite;
  const completion = count(usage.outputTokens);
  const result: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (usage.cacheReadInputTokens !== undefined || usage.cacheWriteInputTokens !== undefined) {
    result.prompt_tokens_details = { cached_tokens: cacheRead };
    if (usage.cacheWriteInputTokens !== undefined) result.prompt_tokens_details.cache_write_tokens = cacheWrite;
  }
  return result;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
