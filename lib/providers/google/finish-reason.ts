import type { FinishReason } from '../openai-format/types';

/** Gemini stops for safety-like reasons that OpenAI reports as `content_filter`. */
const filtered = new Set([
  'SAFETY',
  'RECITATION',
  'LANGUAGE',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

/**
 * A Gemini `finishReason` as OpenAI's. Gemini ends a function call with `STOP`, so any function
 * call in the answer makes it `tool_calls`. MAX_TOKENS → length; the safety family → content_filter;
 * everything else (OTHER, MALFORMED_FUNCTION_CALL, …) → stop.
 * @see https://ai.google.dev/api/generate-content#FinishReason
 */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): FinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason && filtered.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}
