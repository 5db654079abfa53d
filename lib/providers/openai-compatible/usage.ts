import type { TokenUsage } from '../../core/usage';

/** Token usage from an OpenAI-format response or chunk (Groq reports streamed usage under `x_groq`). */
export function readUsage(body: { usage?: unknown; x_groq?: { usage?: unknown } }): TokenUsage | undefined {
  const usage = (body.usage ?? body.x_groq?.usage) as Partial<TokenUsage> | null | undefined;
  if (!usage || typeof usage !== 'object') return undefined;
  const prompt = Number(usage.prompt_tokens ?? 0);
  const completion = Number(usage.completion_tokens ?? 0);
  const result: TokenUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: Number(usage.total_tokens ?? prompt + completion),
  };
  if (usage.prompt_tokens_details) result.prompt_tokens_details = usage.prompt_tokens_details;
  if (usage.completion_tokens_details) result.completion_tokens_details = usage.completion_tokens_details;
  return result;
}
