/** Token counts of one model call, in OpenAI's `usage` shape: what logs, budgets and token limits count. */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: Record<string, number>;
  completion_tokens_details?: Record<string, number>;
}
