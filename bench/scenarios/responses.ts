/**
 * The chat scenario's conversation asked through the Responses API of a provider that has none, so
 * that it is translated to a chat completion and back (groq: an OpenAI-compatible row, answered by
 * the same fake upstream as the chat scenario), with the stored response's write after the answer,
 * on top of the chat call. (The gateway only; direct chat is the call without the gateway.) The
 * translation alone is measured in-process by `npm run bench:responses`.
 */
import { chat } from './chat';
import { CHAT_BODY, gatewayHeaders } from './requests';
import type { Scenario } from './scenario';

const [system, user] = CHAT_BODY.messages;
const RESPONSES_BODY = JSON.stringify({ model: CHAT_BODY.model, instructions: system!.content, input: user!.content });

export const responses: Scenario = {
  kind: 'responses',
  label: 'responses',
  systems: ['ours'],
  connections: (quick) => (quick ? [1, 50] : [1, 10, 50]),
  warmUp: 'gateway',
  upstream: (env) => env.upstream.service,
  target(env, system) {
    if (system !== 'ours') throw new Error('the responses scenario runs on the gateway only');
    return { url: `${env.gateway.url}/responses`, headers: { ...gatewayHeaders(env), 'x-gateway-provider': 'groq' }, body: RESPONSES_BODY };
  },
  baseline: chat,
  check({ text }) {
    const response = JSON.parse(text) as { object?: string; status?: string; output_text?: string };
    if (response.object !== 'response' || response.status !== 'completed') return 'expected a completed response object';
    return response.output_text?.startsWith('echo: ') ? undefined : "expected the fake upstream's echo answer as output_text";
  },
};
