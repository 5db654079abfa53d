import { mcpServersRoute } from '../lib/control/mcp-servers-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** /v1/mcp-servers, /v1/mcp-servers/{mcpServerId} and its /metadata */
export const handler = bufferedHandler(mcpServersRoute);
