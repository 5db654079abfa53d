import { logsRoute } from '../lib/control/logs-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET /v1/logs and GET /v1/logs/{traceId} */
export const handler = bufferedHandler(logsRoute);
