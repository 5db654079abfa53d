import { streamingHandler } from '../lib/http/lambda/handlers';
import { passthroughRoute } from '../lib/http/inference/passthrough-route';

/** GET, POST, PUT, DELETE /v1/{proxy+}: any provider endpoint without a route of its own. */
export const handler = streamingHandler(passthroughRoute);
