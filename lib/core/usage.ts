/** Token counts of one model call, in OpenAI's `usage` shape: what logs, budgets and token limits count. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, number>;
  completion_tokens_details?: Record<string, number>;
}

/** A provider's counts as a TokenUsage: the total is their sum where the provider gives none. */
export function tokenUsage(counts: {
  prompt: unknown;
  completion: unknown;
  total?: unknown;
  promptDetails?: Record<string, number>;
  completionDetails?: Record<string, number>;
}): TokenUsage {
  const prompt = Number(counts.prompt ?? 0);
  const completion = Number(counts.completion ?? 0);
  const usage: TokenUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: Number(counts.total ?? prompt + completion) };
  if (counts.promptDetails) usage.prompt_tokens_details = counts.promptDetails;
  if (counts.completionDetails) usage.completion_tokens_details = counts.completionDetails;
  return usage;
}
