/**
 * `GET /v1/openapi.json`: the OpenAPI document, to anyone. It is the committed copy that
 * `npm run openapi` writes (lib/openapi), bundled as a file: generating it here would bundle every
 * route module for one static answer. A unit test keeps the copy in step with the generator.
 */
import document from '../../docs/openapi.json';
import { controlRoutes, type ControlRoute } from '../http/define-route';

// Once per process: the document changes only with a deployment.
const body = JSON.stringify(document);

const documentRoute: ControlRoute = {
  method: 'GET',
  path: '/v1/openapi.json',
  role: 'public',
  async run() {
    return { status: 200, headers: { 'content-type': 'application/json', 'cache-control': 'public, max-age=300' }, body };
  },
};

export const openApiRoute = controlRoutes(documentRoute);
