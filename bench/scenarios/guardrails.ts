/**
 * A chat request through guardrails a platform team would leave on: an input hook of three cheap
 * checks and an output hook of two, on a conversation of about 4 KB. It costs what the checks cost
 * on top of the chat scenario, and no provider call.
 */
import type { Env, SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import { chat } from './chat';
import { echoProblem, gatewayHeaders } from './requests';
import type { Scenario } from './scenario';

const GUARDRAILS_CONFIG = JSON.stringify({
  provider: 'openai',
  before_request_hooks: [
    {
      id: 'input-policy',
      deny: true,
      checks: [
        { id: 'default.regexMatch', parameters: { rule: '\\bquarterly\\b', flags: 'i' } },
        { id: 'default.wordCount', parameters: { minWords: 1, maxWords: 2000 } },
        { id: 'default.requiredMetadataKeys', parameters: { metadataKeys: ['team'] } },
      ],
    },
  ],
  after_request_hooks: [
    {
      id: 'output-policy',
      deny: true,
      checks: [
        { id: 'default.contains', parameters: { words: ['echo'], operator: 'any' } },
        { id: 'default.jsonKeys', parameters: { keys: ['summary'], operator: 'all' } },
      ],
    },
  ],
});

const turn = (index: number) =>
  `Turn ${index}: the quarterly figures for the northern region came in above plan, with churn down and expansion revenue up; ` +
  'list the three drivers the team should double down on, and one risk to watch next quarter. ';

/** About 4 KB of conversation; the last message asks for JSON, which the fake echoes back for the output check. */
const CONVERSATION = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a concise analyst. Answer in JSON with a "summary" field.' },
    ...Array.from({ length: 6 }, (_, index) => [
      { role: 'user', content: turn(index).repeat(2) },
      { role: 'assistant', content: `{"summary": "Drivers for turn ${index}: retention, upsell, pricing."}` },
    ]).flat(),
    { role: 'user', content: `Summarise the quarterly review as {"summary": "..."}. ${turn(6)}` },
  ],
};

export function guardrailsTarget(env: Env, system: SystemName, hooks = true): HttpTarget {
  if (system !== 'ours') throw new Error('the guardrails scenarios run on the gateway only');
  return {
    url: `${env.gateway.url}/chat/completions`,
    headers: { ...gatewayHeaders(env), 'x-gateway-config': hooks ? GUARDRAILS_CONFIG : '{"provider": "openai"}', 'x-gateway-metadata': '{"team": "finance"}' },
    body: JSON.stringify(CONVERSATION),
  };
}

/** The same 4 KB conversation without hooks: what the checks cost apart from the larger request. */
export const chat4k: Scenario = {
  kind: 'chat-4k',
  label: 'chat 4 KB',
  systems: ['ours'],
  connections: (quick) => (quick ? [50] : [1, 50]),
  warmUp: 'gateway',
  upstream: (env) => env.upstream.service,
  target: (env, system) => guardrailsTarget(env, system, false),
  baseline: chat,
  check: ({ text }) => echoProblem(text),
};

export const guardrails: Scenario = {
  kind: 'guardrails',
  label: 'guardrails',
  systems: ['ours'],
  connections: (quick) => (quick ? [1, 50] : [1, 10, 50]),
  warmUp: 'gateway',
  upstream: (env) => env.upstream.service,
  target: guardrailsTarget,
  // The checks run next to a plain chat call; direct chat is what the call costs without the gateway.
  baseline: chat,
  check({ text }) {
    const problem = echoProblem(text);
    if (problem) return problem;
    const results = (JSON.parse(text) as { hook_results?: { before_request_hooks?: { verdict: boolean }[]; after_request_hooks?: { verdict: boolean }[] } })
      .hook_results;
    const verdicts = [...(results?.before_request_hooks ?? []), ...(results?.after_request_hooks ?? [])].map((result) => result.verdict);
    return verdicts.length === 2 && verdicts.every(Boolean)
      ? undefined
      : `expected both hooks to pass, got hook_results ${JSON.stringify(results)?.slice(0, 200)}`;
  },
};
