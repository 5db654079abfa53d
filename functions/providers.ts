import { providersRoute } from '../lib/control/providers-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET, POST /v1/providers and GET, PUT, DELETE /v1/providers/{slug} */
export const handler = bufferedHandler(providersRoute);
