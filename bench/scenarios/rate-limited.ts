/**
 * Chat under a requests policy whose limit is never reached: what enforcement costs a busy bucket
 * (a policy lookup from memory, and a conditional write per reserved chunk, not per request).
 */
import { ADMIN_KEY, type Env, type SystemName } from '../environment';
import { chat } from './chat';
import { echoProblem, JSON_HEADERS, openAiTarget } from './requests';
import type { Scenario } from './scenario';

const TEAM = 'bench-rate-limited';

let policyId: string | undefined;

/** The id of the policy the scenario created, once it has (its counters are read after the runs). */
export const rateLimitedPolicyId = () => policyId;

async function createPolicy(env: Env): Promise<void> {
  const response = await fetch(`${env.gateway.url}/policies/rate-limits`, {
    method: 'POST',
    headers: { ...JSON_HEADERS, 'x-gateway-api-key': ADMIN_KEY },
    body: JSON.stringify({ name: 'bench', type: 'requests', unit: 'rpm', value: 100_000_000, conditions: [{ key: 'metadata.team', value: TEAM }], group_by: [{ key: 'metadata.team' }] }),
  });
  if (response.status !== 200) throw new Error(`creating the bench rate-limit policy answered ${response.status}: ${await response.text()}`);
  policyId = ((await response.json()) as { id: string }).id;
}

function rateLimitedTarget(env: Env, system: SystemName) {
  const target = openAiTarget(env, system, false);
  return { ...target, headers: { ...target.headers, 'x-gateway-metadata': JSON.stringify({ team: TEAM }) } };
}

let created: Promise<void> | undefined;

export const rateLimited: Scenario = {
  kind: 'rate-limited',
  label: 'rate-limited',
  systems: ['ours'],
  connections: (quick) => (quick ? [50] : [1, 50]),
  warmUp: 'gateway',
  upstream: (env) => env.upstream.service,
  target: rateLimitedTarget,
  baseline: chat,
  async prime(env) {
    await (created ??= createPolicy(env));
    // Policies reach the hot path within its cache TTL; the answer's headers say when this one has.
    const deadline = Date.now() + 15_000;
    for (;;) {
      const target = rateLimitedTarget(env, 'ours');
      const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
      await response.text();
      if (response.headers.get('x-ratelimit-limit-requests')) return;
      if (Date.now() > deadline) throw new Error('the bench rate-limit policy did not apply within 15 s');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  },
  check: ({ text, headers }) => echoProblem(text) ?? (headers.get('x-ratelimit-limit-requests') === '100000000' ? undefined : 'expected the policy\'s x-ratelimit headers'),
};
