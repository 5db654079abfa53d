/**
 * Chat under a requests policy whose limit is never reached: what enforcement costs a busy bucket
 * (a policy lookup from memory, and a conditional write per reserved chunk, not per request).
 */
import { policyScenario } from './policy-scenario';

const limited = policyScenario({
  kind: 'rate-limited',
  label: 'rate-limited',
  route: '/policies/rate-limits',
  policy: { type: 'requests', unit: 'rpm', value: 100_000_000 },
  applied: async (_env, _id, answer) => answer.headers.get('x-ratelimit-limit-requests') !== null,
  check: ({ headers }) => (headers.get('x-ratelimit-limit-requests') === '100000000' ? undefined : "expected the policy's x-ratelimit headers"),
});

export const rateLimited = limited.scenario;

/** The id of the policy the scenario created, once it has (its counters are read after the runs). */
export const rateLimitedPolicyId = limited.policyId;
