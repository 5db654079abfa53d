/**
 * The gateway's OpenAPI 3.1 document: the defined routes from their schemas, the inference routes
 * by hand. It is built from code alone (no environment, no store), so it is the same for every
 * deployment and holds nothing secret; `npm run openapi` writes it to docs/openapi.json, and that
 * copy is what GET /v1/openapi.json serves.
 */
import { controlOperation, tagOf } from './control-operations';
import { definedRoutes } from './defined-routes';
import { inferenceHeaders, inferenceOperations } from './inference-operations';
import { errorSchema, type Operation } from './shared';

const description = [
  'An OpenAI-compatible LLM gateway. Inference routes take OpenAI’s bodies and answer in OpenAI’s format whatever the provider; the provider key',
  'travels in `Authorization` as OpenAI’s clients send it, the gateway key in `x-gateway-api-key`.',
  'Any other path under /v1 is passed through to the selected provider and is not described here.',
].join(' ');

export function openApiDocument(version: string) {
  const paths: Record<string, Record<string, Operation>> = {};
  const add = (method: string, path: string, operation: Operation) => {
    paths[path] ??= {};
    if (paths[path][method.toLowerCase()]) throw new Error(`${method} ${path} is described twice.`);
    paths[path][method.toLowerCase()] = operation;
  };
  for (const route of definedRoutes) add(route.method, route.path, controlOperation(route));
  for (const [route, operation] of Object.entries(inferenceOperations)) {
    const [method, path] = route.split(' ') as [string, string];
    add(method, path, operation);
  }
  // By code unit, not locale: the committed copy must come out the same on every machine.
  const sortedPaths = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const tags = [...new Set(Object.keys(sortedPaths).map(tagOf))].sort().map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: { title: 'LLM gateway', version, description, license: { name: 'Apache-2.0', identifier: 'Apache-2.0' } },
    // Relative to where the document is served (`<stage URL>/v1/openapi.json`): `/` would drop an AWS stage from the URL.
    servers: [{ url: '..', description: 'The gateway that served this document, stage included.' }],
    security: [{ gatewayApiKey: [] }, { gatewayJwt: [] }],
    tags,
    paths: sortedPaths,
    components: {
      securitySchemes: {
        gatewayApiKey: { type: 'apiKey', in: 'header', name: 'x-gateway-api-key', description: 'A gateway API key (`gwk_…`).' },
        gatewayJwt: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'A JWT from a registered identity provider (docs/jwt.md).' },
      },
      parameters: inferenceHeaders,
      schemas: { Error: errorSchema },
      responses: { Error: { description: 'The gateway’s error body.', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } } },
    },
  };
}
