/**
 * An OpenAI-shaped request the gateway translates for the Anthropic API, against the Anthropic API
 * called in its own shape. The peer is left out: it is not pointed at the fake Anthropic API.
 */
import type { Env, SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import { CHAT_BODY, chatBody, echoProblem, gatewayHeaders, JSON_HEADERS, PROVIDER_KEY } from './requests';
import type { Scenario } from './scenario';

const CLAUDE_MODEL = 'claude-sonnet-4-20250514';

export function anthropicTarget(env: Env, system: SystemName, stream: boolean): HttpTarget {
  if (system === 'direct') {
    const body = {
      model: CLAUDE_MODEL,
      max_tokens: 256,
      system: CHAT_BODY.messages[0].content,
      messages: [CHAT_BODY.messages[1]],
      ...(stream ? { stream: true } : {}),
    };
    return {
      url: `${env.anthropic.url}/messages`,
      headers: { ...JSON_HEADERS, 'x-api-key': PROVIDER_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(body),
    };
  }
  if (system === 'ours') {
    return {
      url: `${env.gateway.url}/chat/completions`,
      headers: { ...gatewayHeaders(env), 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': env.anthropic.url },
      body: chatBody(stream, CLAUDE_MODEL),
    };
  }
  throw new Error('the Anthropic scenarios are not run on the peer');
}

export const anthropic: Scenario = {
  kind: 'anthropic',
  label: 'anthropic',
  systems: ['direct', 'ours'],
  connections: () => [10],
  warmUp: 'gateway',
  upstream: (env) => env.anthropic.service,
  target: (env, system) => anthropicTarget(env, system, false),
  check: ({ text }) => echoProblem(text),
};
