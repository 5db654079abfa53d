import { configsRoute } from '../lib/control/configs-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET, POST /v1/configs and GET, PUT, DELETE /v1/configs/{configId} */
export const handler = bufferedHandler(configsRoute);
