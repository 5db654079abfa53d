/**
 * What a request may spend, reserved on token budgets, cost budgets and token rate limits before
 * its provider is called and settled with its real usage after. Prompt tokens are estimated from
 * the body's size; completion tokens are the request's own cap when it sets one, else a default.
 */

/** Bytes per prompt token, as tokenizers of the common models average over English text and JSON. */
export const bytesPerPromptToken = 4;
/** Completion tokens reserved for a request that sets no `max_tokens` / `max_completion_tokens`. */
export const defaultCompletionTokens = 4_096;

export interface TokenEstimate {
  prompt: number;
  completion: number;
}

export interface EstimatedRequest {
  /** Size of the request's body, in bytes. */
  bytes: number;
  /** The parsed body, when the gateway reads it (chat, completions, embeddings). */
  body?: Record<string, unknown>;
  /** Embeddings answer no completion. */
  embeddings?: boolean;
  /** The target's `override_params`, which win over the body's cap. */
  overrides?: Record<string, unknown>;
}

export function estimateTokens(request: EstimatedRequest): TokenEstimate {
  const prompt = Math.ceil(request.bytes / bytesPerPromptToken);
  if (request.embeddings) return { prompt, completion: 0 };
  const cap = completionCap(request.overrides) ?? completionCap(request.body);
  return { prompt, completion: cap ?? defaultCompletionTokens };
}

/** `max_completion_tokens` (OpenAI's newer name) before `max_tokens`; only a positive whole number counts. */
function completionCap(fields: Record<string, unknown> | undefined): number | undefined {
  if (!fields) return undefined;
  for (const name of ['max_completion_tokens', 'max_tokens']) {
    const value = fields[name];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  }
  return undefined;
}
