import { badRequest, GatewayError } from '../core/errors';
import { JsonTooDeepError, parseClientJson } from '../wire/client-json';
import type { GatewayRequest } from './types';

/**
 * Parses a JSON object body. 415 when the content type is not JSON, 400 when the bytes are not a
 * JSON object (or nest too deeply); both say what to send instead.
 */
export function readJsonObject(request: GatewayRequest, options: { optional?: boolean } = {}): Record<string, unknown> {
  if (options.optional && request.body.length === 0) return {};
  const contentType = request.headers['content-type'];
  if (!contentType || !/^application\/([\w.+-]*\+)?json\b/i.test(contentType.trim())) {
    throw new GatewayError(415, `Content-Type must be application/json; got ${contentType ? `"${contentType}"` : 'none'}.`, {
      code: 'unsupported_media_type',
    });
  }
  let parsed: unknown;
  try {
    parsed = parseClientJson(request.body.toString('utf8'));
  } catch (error) {
    if (error instanceof JsonTooDeepError) throw badRequest(`The request body is refused: ${error.message}.`, null, 'json_too_deep');
    throw badRequest(`The request body is not valid JSON: ${(error as Error).message}.`, null, 'invalid_json');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw badRequest('The request body must be a JSON object.', null, 'invalid_json');
  }
  return parsed as Record<string, unknown>;
}
