import { logsRoute } from '../lib/control/logs-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET /v1/logs, GET /v1/logs/{traceId}, and the groups routes GET /v1/logs/groups/{groupBy} and GET /v1/analytics/groups/{groupBy}; feedback on a trace: POST /v1/feedback, PUT /v1/feedback/{feedbackId} */
export const handler = bufferedHandler(logsRoute);
