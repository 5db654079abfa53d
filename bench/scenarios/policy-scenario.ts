/**
 * Chat under one workspace policy that selects every request of the scenario by `metadata.team`
 * and is never reached: what enforcing it costs on top of plain chat.
 */
import { ADMIN_KEY, type Env, type SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import { chat } from './chat';
import { echoProblem, JSON_HEADERS, openAiTarget } from './requests';
import type { Scenario } from './scenario';

export interface PolicyScenarioOptions {
  kind: string;
  label: string;
  /** The control route that creates the policy, under the gateway's `/v1`. */
  route: string;
  /** The policy, without its condition and group (the scenario's team). */
  policy: Record<string, unknown>;
  /** True once an answer shows the policy applies (policies reach the hot path within its cache TTL). */
  applied(env: Env, policyId: string, answer: Response): Promise<boolean>;
  /** A problem with an answer of a measured run, or undefined. */
  check?(answer: { headers: Headers }): string | undefined;
}

/** A scenario of one never-reached policy, and the id of that policy once the scenario created it. */
export function policyScenario(options: PolicyScenarioOptions): { scenario: Scenario; policyId: () => string | undefined } {
  const team = `bench-${options.kind}`;
  let policyId: string | undefined;
  let created: Promise<void> | undefined;

  const create = async (env: Env) => {
    const response = await fetch(`${env.gateway.url}${options.route}`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, 'x-gateway-api-key': ADMIN_KEY },
      body: JSON.stringify({ name: 'bench', ...options.policy, conditions: [{ key: 'metadata.team', value: team }], group_by: [{ key: 'metadata.team' }] }),
    });
    if (response.status !== 200) throw new Error(`creating the bench policy for ${options.kind} answered ${response.status}: ${await response.text()}`);
    policyId = ((await response.json()) as { id: string }).id;
  };

  const target = (env: Env, system: SystemName): HttpTarget => {
    const plain = openAiTarget(env, system, false);
    return { ...plain, headers: { ...plain.headers, 'x-gateway-metadata': JSON.stringify({ team }) } };
  };

  const scenario: Scenario = {
    kind: options.kind,
    label: options.label,
    systems: ['ours'],
    connections: (quick) => (quick ? [50] : [1, 50]),
    warmUp: 'gateway',
    upstream: (env) => env.upstream.service,
    target,
    baseline: chat,
    async prime(env) {
      await (created ??= create(env));
      const deadline = Date.now() + 15_000;
      for (;;) {
        const { url, headers, body } = target(env, 'ours');
        const answer = await fetch(url, { method: 'POST', headers, body });
        await answer.arrayBuffer();
        if (await options.applied(env, policyId!, answer)) return;
        if (Date.now() > deadline) throw new Error(`the bench policy of ${options.kind} did not apply within 15 s`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    check: ({ text, headers }) => echoProblem(text) ?? options.check?.({ headers }),
  };
  return { scenario, policyId: () => policyId };
}
