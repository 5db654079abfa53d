/** The parts of the document more than one operation uses, and the types they are written in. */
import type { JsonSchema } from './json-schema';

export type Operation = Record<string, unknown>;

export interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

/** The one error shape every route answers with (ErrorBody in lib/core/errors.ts). */
export const errorSchema: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['message', 'type', 'param', 'code'],
      properties: {
        message: { type: 'string', description: 'What went wrong, and what to send instead.' },
        type: { type: 'string', examples: ['invalid_request_error', 'authentication_error', 'api_error'] },
        param: { type: ['string', 'null'], description: 'The field or header at fault, e.g. `deployments[0].alias`.' },
        code: { type: ['string', 'null'], examples: ['invalid_request', 'route_not_found'] },
        provider: { type: 'string', description: 'The provider whose answer this error passes on.' },
        issues: {
          type: 'array',
          description: 'Every problem, when there are several (a config, say).',
          items: { type: 'object', required: ['param', 'message'], properties: { param: { type: 'string' }, message: { type: 'string' } } },
        },
      },
    },
  },
};

export const errorRef = { $ref: '#/components/responses/Error' };

export function jsonAnswer(description: string, schema: JsonSchema = { type: 'object' }) {
  return { description, content: { 'application/json': { schema } } };
}

/** A public route has no key to refuse; every other one may answer 401 and 403. */
export function errorResponses(access: string): Record<string, unknown> {
  return access === 'public' ? { default: errorRef } : { '400': errorRef, '401': errorRef, '403': errorRef, default: errorRef };
}
