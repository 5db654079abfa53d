import { guardrailsRoute } from '../lib/control/guardrails-route';
import { bufferedHandler } from '../lib/http/lambda/handlers';

/** /v1/guardrails and /v1/guardrails/{guardrailId} */
export const handler = bufferedHandler(guardrailsRoute);
