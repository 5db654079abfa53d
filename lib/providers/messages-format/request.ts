/**
 * The checks of a `POST /v1/messages` body, made before any provider is chosen so that a malformed
 * request is one 400 naming its field whether it would have gone to Anthropic or been translated.
 * What a field may hold beyond its shape (a model's limits, a beta's fields) is the provider's to judge.
 * @see https://docs.anthropic.com/en/api/messages
 */
import { badRequest } from '../../core/errors';
import { isPlainObject } from '../../core/plain-object';
import type { MessagesRequest } from './types';

const roles = new Set(['user', 'assistant']);

export function checkMessagesRequest(body: Record<string, unknown>): MessagesRequest {
  if (typeof body.model !== 'string' || body.model.length === 0) {
    throw badRequest('model: Field required; name the model to call, for example "claude-sonnet-4-5".', 'model', 'missing_required_parameter');
  }
  if (!(Number.isInteger(body.max_tokens) && (body.max_tokens as number) > 0)) {
    throw badRequest('max_tokens: a positive integer is required (the most tokens the answer may have).', 'max_tokens', 'invalid_value');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw badRequest('messages: a non-empty list of messages such as [{"role":"user","content":"Hello"}] is required.', 'messages', 'invalid_value');
  }
  body.messages.forEach(checkMessage);
  checkSystem(body.system);
  optional(body, 'stream', 'a boolean', (value) => typeof value === 'boolean');
  for (const field of ['temperature', 'top_p', 'top_k'] as const) optional(body, field, 'a number', (value) => typeof value === 'number');
  optional(body, 'stop_sequences', 'a list of strings', (value) => Array.isArray(value) && value.every((item) => typeof item === 'string'));
  optional(body, 'metadata', 'an object', isPlainObject);
  optional(body, 'thinking', 'an object such as {"type":"enabled","budget_tokens":2048}', (value) => isPlainObject(value) && typeof value.type === 'string');
  optional(body, 'tool_choice', 'an object such as {"type":"auto"}', (value) => isPlainObject(value) && typeof value.type === 'string');
  optional(body, 'tools', 'a list of tools', Array.isArray);
  (body.tools as unknown[] | undefined)?.forEach((tool, index) => {
    if (!isPlainObject(tool) || typeof tool.name !== 'string' || !tool.name) {
      throw badRequest(`tools.${index}: a tool needs a name (and an input_schema for a client tool).`, `tools.${index}`, 'invalid_value');
    }
    if (tool.input_schema !== undefined && !isPlainObject(tool.input_schema)) {
      throw badRequest(`tools.${index}.input_schema must be a JSON Schema object.`, `tools.${index}.input_schema`, 'invalid_value');
    }
  });
  return body as MessagesRequest;
}

function optional(body: Record<string, unknown>, field: string, expected: string, valid: (value: unknown) => boolean): void {
  const value = body[field];
  if (value !== undefined && value !== null && !valid(value)) throw badRequest(`${field} must be ${expected}.`, field, 'invalid_type');
}

function checkMessage(message: unknown, index: number): void {
  const at = `messages.${index}`;
  if (!isPlainObject(message) || typeof message.role !== 'string' || !roles.has(message.role)) {
    throw badRequest(`${at}: a message is an object whose role is "user" or "assistant".`, `${at}.role`, 'invalid_value');
  }
  checkContent(message.content, `${at}.content`);
}

function checkContent(content: unknown, at: string): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) throw badRequest(`${at} must be a string or a list of content blocks.`, at, 'invalid_type');
  content.forEach((block, index) => {
    if (!isPlainObject(block) || typeof block.type !== 'string') {
      throw badRequest(`${at}.${index}: a content block is an object with a type, such as {"type":"text","text":"Hello"}.`, `${at}.${index}`, 'invalid_value');
    }
    if (block.type === 'text' && typeof block.text !== 'string')
      throw badRequest(`${at}.${index}.text must be a string.`, `${at}.${index}.text`, 'invalid_type');
  });
}

function checkSystem(system: unknown): void {
  if (system === undefined || system === null || typeof system === 'string') return;
  if (!Array.isArray(system) || !system.every((block) => isPlainObject(block) && block.type === 'text' && typeof block.text === 'string')) {
    throw badRequest('system must be a string or a list of text blocks such as [{"type":"text","text":"Be brief."}].', 'system', 'invalid_type');
  }
}
