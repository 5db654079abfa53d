/** A two-target fallback config whose first target answers: the cost of the config on the happy path. */
import { chat } from './chat';
import { chatBody, echoProblem, gatewayHeaders } from './requests';
import type { Scenario } from './scenario';

export const fallback: Scenario = {
  kind: 'fallback',
  label: 'fallback',
  systems: ['ours'],
  connections: () => [10],
  // Only the gateway takes this config; a direct chat request is the same answer without it.
  baseline: chat,
  warmUp: 'gateway',
  upstream: (env) => env.upstream.service,
  target: (env, system) => {
    if (system !== 'ours') throw new Error('the fallback scenario runs on the gateway only');
    // The first target names no host, so the one the gateway was started with is used.
    const config = { strategy: { mode: 'fallback' }, targets: [{ provider: 'openai' }, { provider: 'openai', custom_host: `${env.upstream.url}/backup/v1` }] };
    return {
      url: `${env.gateway.url}/chat/completions`,
      headers: { ...gatewayHeaders(env), 'x-gateway-config': JSON.stringify(config) },
      body: chatBody(false),
    };
  },
  check: ({ headers, text }) => {
    const problem = echoProblem(text);
    if (problem) return problem;
    const used = headers.get('x-gateway-last-used-option-index');
    return used === 'config.targets[0]' ? undefined : `expected the first target to answer, got ${used}`;
  },
};
