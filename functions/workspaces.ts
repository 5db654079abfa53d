import { workspacesRoute } from '../lib/control/workspaces-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** GET, POST /v1/workspaces and GET, PUT, DELETE /v1/workspaces/{workspaceId} */
export const handler = bufferedHandler(workspacesRoute);
