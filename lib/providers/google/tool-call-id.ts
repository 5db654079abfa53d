import { randomBytes } from 'node:crypto';

/**
 * Gemini function calls carry no id, so the gateway makes one up. Thinking models (2.5+, 3) also sign
 * a function call with an opaque `thoughtSignature` that must come back on the same call in the next
 * turn (Gemini 3 answers 400 without it). OpenAI clients echo a tool call's `id` and nothing else that
 * the emitter can write, so the signature travels inside the id: `call_<16 hex>` followed by
 * `_ts_<signature as base64url>`. The id stays within `[A-Za-z0-9_-]`.
 * @see https://ai.google.dev/gemini-api/docs/thought-signatures
 */
const prefix = 'call_';
const signatureMarker = '_ts_';
const signedId = /^call_[0-9a-f]{16}_ts_([A-Za-z0-9_-]+)$/;

/**
 * Google's documented stand-in for a function call whose signature is unknown (history written by
 * another model or client): it makes Gemini 3 skip the check instead of failing the request.
 */
export const unknownThoughtSignature = 'skip_thought_signature_validator';

export function newToolCallId(thoughtSignature?: string): string {
  const id = prefix + randomBytes(8).toString('hex');
  if (!thoughtSignature) return id;
  const bytes = Buffer.from(thoughtSignature, 'base64');
  // Only a canonical base64 signature survives the round trip exactly; anything else is left out.
  return bytes.toString('base64') === thoughtSignature ? id + signatureMarker + bytes.toString('base64url') : id;
}

/** The thought signature an id made by `newToolCallId` carries, as Gemini's base64. */
export function thoughtSignatureOf(toolCallId: string): string | undefined {
  const match = signedId.exec(toolCallId);
  return match ? Buffer.from(match[1], 'base64url').toString('base64') : undefined;
}
