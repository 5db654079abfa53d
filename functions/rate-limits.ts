import { rateLimitsRoute } from '../lib/control/rate-limits-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** /v1/policies/rate-limits and /v1/policies/rate-limits/{policyId} */
export const handler = bufferedHandler(rateLimitsRoute);
