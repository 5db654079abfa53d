import type { ControlRoute } from '../http/define-route';
import { handlerBodies } from './handler-bodies';
import { inputSchema, type JsonSchema } from './json-schema';
import { errorResponses, jsonAnswer, type Operation, type Parameter } from './shared';

/**
 * A defined route as an OpenAPI operation: its parameters and body are its schemas, as they are
 * checked. What it answers is not typed (handlers return plain objects); the error shape is.
 */
export function controlOperation(route: ControlRoute): Operation {
  const parameters = [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')];
  return {
    operationId: operationId(route.method, route.path),
    tags: [tagOf(route.path)],
    ...(route.role === 'public' ? { security: [] } : { description: `Needs a gateway key of role \`${route.role}\` or above.` }),
    'x-gateway-role': route.role,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...requestBodyOf(route),
    responses: { '200': otherAnswers[`${route.method} ${route.path}`] ?? jsonAnswer('The answer.'), ...errorResponses(route.role) },
  };
}

/** The defined routes whose answer is not a JSON object. */
const otherAnswers: Record<string, unknown> = {
  'GET /v1/files/{fileId}/content': {
    description: "The file's bytes, as uploaded.",
    content: { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } },
  },
  'GET /v1/openapi.json': jsonAnswer('This document.'),
};

function requestBodyOf(route: ControlRoute) {
  const byHand = handlerBodies[`${route.method} ${route.path}`];
  if (byHand) return { requestBody: byHand };
  if (!route.body) return {};
  return { requestBody: { required: !route.emptyBodyAllowed, content: { 'application/json': { schema: inputSchema(route.body) } } } };
}

/** Path and query schemas are objects of strings: each field is one parameter. */
function parametersOf(schema: ControlRoute['params'], where: 'path' | 'query'): Parameter[] {
  if (!schema) return [];
  const object = inputSchema(schema) as { properties?: Record<string, JsonSchema>; required?: string[] };
  const required = new Set(object.required ?? []);
  return Object.entries(object.properties ?? {}).map(([name, field]) => ({
    name,
    in: where,
    // OpenAPI requires every path parameter to be marked so; a query field is as its schema says.
    required: where === 'path' || required.has(name),
    schema: field,
  }));
}

/** `DELETE /v1/api-keys/{keyId}` → `deleteApiKeysByKeyId`: unique as long as METHOD + path is. */
export function operationId(method: string, path: string): string {
  const words = path
    .replace(/^\/v1\//, '')
    .split(/[/_.-]/)
    .filter(Boolean)
    .map((word) => (word.startsWith('{') ? `By${capital(word.slice(1, -1))}` : capital(word)));
  return method.toLowerCase() + words.join('');
}

/** The first segment after /v1, so a group's routes sit together (`/v1/policies/…` by its kind). */
export function tagOf(path: string): string {
  const [first, second] = path.replace(/^\/v1\//, '').split('/');
  return first === 'policies' || first === 'auth' ? `${first}/${second}` : first!;
}

const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);
