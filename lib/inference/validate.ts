import { badRequest } from '../http/errors';
import type { Operation } from '../providers/types';

/**
 * The fields a unified route cannot do without; everything else is the provider's to judge, so new
 * provider parameters pass through untouched.
 */
export function validateInferenceBody(operation: Operation, body: Record<string, unknown>): void {
  if (body.model !== undefined && body.model !== null && typeof body.model !== 'string') {
    throw badRequest(`model must be a string naming the model, for example "gpt-4o-mini"; got ${typeName(body.model)}.`, 'model', 'invalid_type');
  }
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw badRequest('model is required: the name of the model to call, for example "gpt-4o-mini".', 'model', 'missing_required_parameter');
  }
  if (operation === 'chat') {
    if (body.messages !== undefined && body.messages !== null && !Array.isArray(body.messages)) {
      throw badRequest(`messages must be an array of messages such as [{"role":"user","content":"Hello"}]; got ${typeName(body.messages)}.`, 'messages', 'invalid_type');
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      throw badRequest('messages is required: a non-empty array such as [{"role":"user","content":"Hello"}].', 'messages', 'missing_required_parameter');
    }
    body.messages.forEach((message, index) => {
      if (message === null || typeof message !== 'object' || typeof (message as { role?: unknown }).role !== 'string') {
        throw badRequest(`messages[${index}] must be an object with a role.`, `messages[${index}]`, 'invalid_message');
      }
    });
  } else if (operation === 'completions') {
    if (body.prompt === undefined || body.prompt === null) throw badRequest('prompt is required.', 'prompt', 'missing_required_parameter');
  } else if (body.input === undefined || body.input === null) {
    throw badRequest('input is required: a string or an array of strings to embed.', 'input', 'missing_required_parameter');
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw badRequest('stream must be a boolean.', 'stream', 'invalid_type');
  }
  if (operation === 'embeddings' && body.stream === true) throw badRequest('Embeddings cannot be streamed.', 'stream', 'invalid_type');
}

function typeName(value: unknown): string {
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}
