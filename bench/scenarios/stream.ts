/** Streamed chat completions, relayed chunk by chunk by the gateway and the peer. */
import { STREAM_CHUNKS, type Env, type SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import { openAiTarget } from './requests';
import { onEverySystem, type Scenario } from './scenario';

export const stream: Scenario = {
  kind: 'stream',
  label: 'stream',
  ...onEverySystem,
  target: (env, system) => openAiTarget(env, system, true),
  check: ({ text }) => {
    // A relay that buffers or drops events still ends with [DONE]; count the chunks that carry text.
    const contentEvents = text.split('\n').filter((line) => line.startsWith('data:') && line.includes('"content":"') && !line.includes('"content":""'));
    if (contentEvents.length < STREAM_CHUNKS || !text.includes('data: [DONE]'))
      return `expected ${STREAM_CHUNKS} content chunks and [DONE], got ${contentEvents.length}`;
    return undefined;
  },
  notes: {
    peer: 'The peer holds back the first chunk of every OpenAI stream it relays by about 25 ms (a fixed pause in its stream handler), so its streamed latency and streamed throughput at low concurrency are bounded by that pause, not by CPU.',
  },
};

/**
 * The same request through the paced fake, for time to first chunk: the default fake writes a whole
 * stream at once, so there the first chunk and the last arrive together.
 */
export function pacedStreamTarget(env: Env, system: SystemName): HttpTarget {
  return openAiTarget(env, system, true, env.paced.url);
}
