import { cacheRoute } from '../lib/control/cache-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** DELETE /v1/cache */
export const handler = bufferedHandler(cacheRoute);
