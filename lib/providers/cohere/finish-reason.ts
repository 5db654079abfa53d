import { GatewayError } from '../../core/errors';
import type { FinishReason } from '../openai-format/types';

/**
 * Cohere's `finish_reason` as OpenAI's. `ERROR` and `TIMEOUT` mean the generation failed, which
 * OpenAI has no finish reason for: they are errors (see {@link finishError}). Unknown reasons end
 * normally.
 * @see https://docs.cohere.com/reference/chat#response.body.finish_reason
 */
export function mapFinishReason(reason: string | null | undefined): FinishReason {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'TOOL_CALL':
      return 'tool_calls';
    default:
      // COMPLETE, STOP_SEQUENCE
      return 'stop';
  }
}

/** The error a failed generation becomes: 504 for `TIMEOUT`, 502 for `ERROR`; undefined otherwise. */
export function finishError(reason: string | null | undefined, message: string | undefined): GatewayError | undefined {
  if (reason === 'TIMEOUT')
    return new GatewayError(504, message || 'cohere timed out while generating; the answer is incomplete.', { code: 'provider_timeout', provider: 'cohere' });
  if (reason === 'ERROR')
    return new GatewayError(502, message || 'cohere failed while generating; the answer is incomplete.', { code: 'provider_error', provider: 'cohere' });
  return undefined;
}
