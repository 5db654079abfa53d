/** The Anthropic scenario streamed: the gateway turns Anthropic's events into OpenAI chunks. */
import { anthropicTarget } from './anthropic';
import type { Scenario } from './scenario';

export const anthropicStream: Scenario = {
  kind: 'anthropic-stream',
  label: 'anthropic stream',
  systems: ['direct', 'ours'],
  connections: (quick) => (quick ? [] : [10]),
  upstream: (env) => env.anthropic.service,
  target: (env, system) => anthropicTarget(env, system, true),
  check: ({ text }) => {
    if (text.includes('echo:') || text.includes('"text":"echo')) return undefined;
    // The text arrives in pieces too small to hold the marker; a finished stream is enough then.
    return text.includes('[DONE]') || text.includes('message_stop') ? undefined : 'the stream did not finish';
  },
};
