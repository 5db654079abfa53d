/**
 * Every route defined with defineRoute, whichever function serves it. The inference routes are not
 * here: they read OpenAI's bodies as they come and are described by hand (inference-operations.ts).
 */
import { managedBatches } from '../batches/batches-route';
import { apiKeysRoute } from '../control/api-keys-route';
import { cacheRoute } from '../control/cache-route';
import { configsRoute } from '../control/configs-route';
import { guardrailsRoute } from '../control/guardrails-route';
import { jwtProvidersRoute } from '../control/jwt-providers-route';
import { logsRoute } from '../control/logs-route';
import { mcpServersRoute } from '../control/mcp-servers-route';
import { openApiRoute } from '../control/openapi-route';
import { promptsRoute } from '../control/prompts-route';
import { providersRoute } from '../control/providers-route';
import { rateLimitsRoute } from '../control/rate-limits-route';
import { usageLimitsRoute } from '../control/usage-limits-route';
import { workspacesRoute } from '../control/workspaces-route';
import { gatewayFiles } from '../files/files-route';
import { gatewayJobs } from '../fine-tuning/jobs-route';
import type { ControlRoute } from '../http/define-route';
import { storedResponses } from '../responses/responses-route';

export const definedRoutes: readonly ControlRoute[] = [
  apiKeysRoute,
  workspacesRoute,
  logsRoute,
  providersRoute,
  configsRoute,
  guardrailsRoute,
  promptsRoute,
  rateLimitsRoute,
  usageLimitsRoute,
  cacheRoute,
  mcpServersRoute,
  jwtProvidersRoute,
  openApiRoute,
  gatewayFiles,
  managedBatches,
  gatewayJobs,
  storedResponses,
].flatMap((handler) => handler.routes);
