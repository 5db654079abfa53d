import { usageLimitsRoute } from '../lib/control/usage-limits-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** /v1/policies/usage-limits and /v1/policies/usage-limits/{policyId} */
export const handler = bufferedHandler(usageLimitsRoute);
