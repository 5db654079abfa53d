import { openApiRoute } from '../lib/control/openapi-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET /v1/openapi.json */
export const handler = bufferedHandler(openApiRoute);
