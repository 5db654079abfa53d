import { createHash } from 'node:crypto';
import type { JsonObject } from '../types';

/**
 * Mistral's chat API is OpenAI's with a few differences the gateway smooths over.
 * @see https://docs.mistral.ai/api/#tag/chat/operation/chat_completion_v1_chat_completions_post
 */

/** `max_completion_tokens` is OpenAI's newer name; some providers (Mistral, DeepSeek) only know `max_tokens`. */
export function maxTokensOnly(body: JsonObject): JsonObject {
  if (body.max_completion_tokens === undefined) return body;
  const { max_completion_tokens, ...rest } = body;
  return { max_tokens: max_completion_tokens, ...rest };
}

/** Mistral accepts a tool call id back only when it is exactly nine letters and digits. */
const mistralToolCallId = /^[a-zA-Z0-9]{9}$/;
const base62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * A nine-character id for a tool call id Mistral would reject (OpenAI's `call_…`, another
 * provider's `toolu_…`). A hash, so an assistant's tool call and the tool message answering it map
 * to the same id without any state, on this turn and every later one. Valid ids are kept.
 */
export function mistralToolId(id: string): string {
  if (mistralToolCallId.test(id)) return id;
  const digest = createHash('sha256').update(id).digest();
  let out = '';
  for (let i = 0; i < 9; i++) out += base62[digest[i] % 62];
  return out;
}

interface LooseMessage {
  role?: unknown;
  tool_call_id?: unknown;
  tool_calls?: Array<{ id?: unknown }>;
}

/** Messages with tool call ids Mistral accepts; the same array when none needed changing. */
function withMistralToolIds(messages: unknown): unknown {
  if (!Array.isArray(messages)) return messages;
  let changed = false;
  const mapped = (messages as LooseMessage[]).map((message) => {
    if (message?.role === 'tool' && typeof message.tool_call_id === 'string' && !mistralToolCallId.test(message.tool_call_id)) {
      changed = true;
      return { ...message, tool_call_id: mistralToolId(message.tool_call_id) };
    }
    if (
      message?.role === 'assistant' &&
      Array.isArray(message.tool_calls) &&
      message.tool_calls.some((call) => typeof call?.id === 'string' && !mistralToolCallId.test(call.id))
    ) {
      changed = true;
      return { ...message, tool_calls: message.tool_calls.map((call) => (typeof call?.id === 'string' ? { ...call, id: mistralToolId(call.id) } : call)) };
    }
    return message;
  });
  return changed ? mapped : messages;
}

/**
 * An OpenAI chat body as Mistral wants it: `random_seed` for `seed`, `max_tokens` for
 * `max_completion_tokens`, `any` for `tool_choice: "required"` (the name Mistral has always
 * accepted), and tool call ids it accepts.
 */
export function mistralRequest(body: JsonObject): JsonObject {
  // Each step copies only when it changes something, so an unchanged body stays the client's bytes.
  let mapped = maxTokensOnly(body);
  if (mapped.seed !== undefined) {
    const { seed, ...rest } = mapped;
    mapped = { ...rest, random_seed: seed };
  }
  if (mapped.tool_choice === 'required') mapped = { ...mapped, tool_choice: 'any' };
  const messages = withMistralToolIds(mapped.messages);
  return messages === mapped.messages ? mapped : { ...mapped, messages };
}
