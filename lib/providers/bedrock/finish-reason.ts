import type { FinishReason } from '../openai-format/types';

/**
 * Converse `stopReason` → OpenAI `finish_reason`. Malformed model or tool output ends the turn without
 * a cut-off, so it reads as `stop`; an exhausted context window cut the answer short (`length`).
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_ResponseSyntax
 */
const finishReasons: Record<string, FinishReason> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
  malformed_model_output: 'stop',
  malformed_tool_use: 'stop',
};

export function mapStopReason(stopReason: string | undefined): FinishReason {
  return (stopReason && finishReasons[stopReason]) || 'stop';
}
