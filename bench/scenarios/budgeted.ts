/**
 * Chat under a token budget that is never used up: what a budget costs each request (a conditional
 * reservation on its bucket before the call, and a settle of the answer's tokens after it).
 */
import { ADMIN_KEY } from '../environment';
import { policyScenario } from './policy-scenario';

export const budgeted = policyScenario({
  kind: 'budgeted',
  label: 'budgeted',
  route: '/policies/usage-limits',
  policy: { type: 'tokens', credit_limit: 1_000_000_000_000 },
  // A budget's answers carry no headers: it applies once a request's tokens show in its usage.
  async applied(env, id) {
    const response = await fetch(`${env.gateway.url}/policies/usage-limits/${id}`, { headers: { 'x-gateway-api-key': ADMIN_KEY } });
    return response.status === 200 && ((await response.json()) as { current_usage: number }).current_usage > 0;
  },
}).scenario;
