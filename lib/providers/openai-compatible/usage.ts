import { tokenUsage, type TokenUsage } from '../../core/usage';

/** Token usage from an OpenAI-format response or chunk (Groq reports streamed usage under `x_groq`). */
export function readUsage(body: { usage?: unknown; x_groq?: { usage?: unknown } }): TokenUsage | undefined {
  const usage = (body.usage ?? body.x_groq?.usage) as Partial<TokenUsage> | null | undefined;
  if (!usage || typeof usage !== 'object') return undefined;
  return tokenUsage({
    prompt: usage.prompt_tokens,
    completion: usage.completion_tokens,
    total: usage.total_tokens,
    promptDetails: usage.prompt_tokens_details,
    completionDetails: usage.completion_tokens_details,
  });
}
