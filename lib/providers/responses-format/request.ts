/**
 * The checks of a `POST /v1/responses` body that the translation does not make: what each field
 * must be, each refusal a 400 naming it. Fields the gateway does not map pass untouched, as OpenAI's
 * API passes fields it does not know to its models.
 */
import { badRequest } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import type { ResponsesRequest } from './types';

const maxMetadataPairs = 16;
const maxMetadataKey = 64;
const maxMetadataValue = 512;

export function checkResponsesRequest(body: Record<string, unknown>): ResponsesRequest {
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw badRequest('model is required: the name of the model to call, for example "gpt-4o-mini".', 'model', 'missing_required_parameter');
  }
  if (body.input !== undefined && body.input !== null && typeof body.input !== 'string' && !Array.isArray(body.input)) {
    throw badRequest('input must be a string or a list of input items.', 'input', 'invalid_type');
  }
  for (const field of ['stream', 'store', 'background', 'parallel_tool_calls'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'boolean')
      throw badRequest(`${field} must be a boolean.`, field, 'invalid_type');
  }
  for (const field of ['instructions', 'previous_response_id', 'user'] as const) {
    if (body[field] !== undefined && body[field] !== null && typeof body[field] !== 'string')
      throw badRequest(`${field} must be a string.`, field, 'invalid_type');
  }
  const maxTokens = body.max_output_tokens;
  if (maxTokens !== undefined && maxTokens !== null && !(Number.isInteger(maxTokens) && (maxTokens as number) > 0)) {
    throw badRequest('max_output_tokens must be a positive integer.', 'max_output_tokens', 'invalid_value');
  }
  if (body.truncation !== undefined && body.truncation !== null && body.truncation !== 'disabled' && body.truncation !== 'auto') {
    throw badRequest('truncation must be "disabled" or "auto".', 'truncation', 'invalid_value');
  }
  if (body.include !== undefined && body.include !== null && !(Array.isArray(body.include) && body.include.every((value) => typeof value === 'string'))) {
    throw badRequest('include must be a list of strings.', 'include', 'invalid_type');
  }
  checkMetadata(body.metadata);
  return body as ResponsesRequest;
}

/** OpenAI's metadata limits: 16 pairs, keys of at most 64 characters, string values of at most 512. */
function checkMetadata(metadata: unknown): void {
  if (metadata === undefined || metadata === null) return;
  if (!isPlainObject(metadata)) throw badRequest('metadata must be an object of string keys and string values.', 'metadata', 'invalid_type');
  const entries = Object.entries(metadata);
  if (entries.length > maxMetadataPairs) {
    throw badRequest(`metadata may have at most ${maxMetadataPairs} pairs; it has ${entries.length}.`, 'metadata', 'invalid_metadata');
  }
  for (const [key, value] of entries) {
    const shownKey = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
    if (key.length > maxMetadataKey) {
      throw badRequest(`metadata key ${shownKey} is ${key.length} characters; keys may have at most ${maxMetadataKey}.`, 'metadata', 'invalid_metadata');
    }
    if (typeof value !== 'string') throw badRequest(`metadata[${shownKey}] must be a string.`, `metadata.${key}`, 'invalid_metadata');
    if (value.length > maxMetadataValue) {
      throw badRequest(
        `metadata[${shownKey}] is ${value.length} characters; values may have at most ${maxMetadataValue}.`,
        `metadata.${key}`,
        'invalid_metadata',
      );
    }
  }
}
