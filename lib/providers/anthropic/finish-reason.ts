import type { FinishReason } from '../openai-format/types';

/**
 * Anthropic's `stop_reason` as OpenAI's `finish_reason`. `pause_turn` (a server tool paused a long
 * turn; the caller may continue it) ends the answer normally; `refusal` is the model declining on
 * safety grounds, which OpenAI reports as `content_filter`. Unknown reasons end normally.
 * @see https://docs.anthropic.com/en/api/handling-stop-reasons
 */
export function mapStopReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn
      return 'stop';
  }
}
