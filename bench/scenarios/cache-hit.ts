/**
 * A chat request answered from the gateway's response cache: what a hit costs next to a provider
 * call. The peer is left out: its open-source build never serves a cached answer (see `notes`).
 */
import type { Env, SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import { sleep } from '../lib/services';
import { chat } from './chat';
import { CHAT_BODY, echoProblem, gatewayHeaders } from './requests';
import type { CheckedResponse, Scenario } from './scenario';

export const CACHE_CONFIG = JSON.stringify({ provider: 'openai', cache: { mode: 'simple', max_age: 3600 } });

/** The chat request with a cache config; `userText` gives it an entry of its own. */
export function cachedChatTarget(env: Env, system: SystemName, stream: boolean, userText = CHAT_BODY.messages[1].content): HttpTarget {
  if (system !== 'ours') throw new Error('the cache scenarios run on the gateway only');
  const body = { ...CHAT_BODY, messages: [CHAT_BODY.messages[0], { role: 'user', content: userText }], ...(stream ? { stream: true } : {}) };
  return { url: `${env.gateway.url}/chat/completions`, headers: { ...gatewayHeaders(env), 'x-gateway-config': CACHE_CONFIG }, body: JSON.stringify(body) };
}

/**
 * Sends the request until the gateway answers it from the cache. The answer is stored after the
 * client has it, so the second request can still be a miss.
 */
export async function primeCache(target: HttpTarget, timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let status: string | null = null;
  while (performance.now() < deadline) {
    const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
    await response.arrayBuffer();
    status = response.headers.get('x-gateway-cache-status');
    if (response.status === 200 && status === 'HIT') return;
    if (response.status !== 200) throw new Error(`priming the cache: ${response.status} from ${target.url}`);
    await sleep(20);
  }
  throw new Error(`priming the cache: no HIT within ${timeoutMs} ms (last status ${status})`);
}

export function hitProblem({ headers }: CheckedResponse): string | undefined {
  const status = headers.get('x-gateway-cache-status');
  return status === 'HIT' ? undefined : `expected x-gateway-cache-status: HIT, got ${status}`;
}

export const PEER_CACHE_NOTE =
  "cache hit: the peer (@portkey-ai/gateway) is not measured. Its open-source build reads a config's `cache` but has no cache behind it: the request handler asks the request context for a `getFromCache` function that only Portkey's hosted middleware provides, so every request is a provider call with `x-portkey-cache-status: DISABLED`.";

export const cacheHit: Scenario = {
  kind: 'cache-hit',
  label: 'cache hit',
  systems: ['ours'],
  connections: (quick) => (quick ? [1, 50] : [1, 10, 50]),
  // A hit answers the chat request; direct chat is what it would cost without the gateway.
  baseline: chat,
  warmUp: 'gateway',
  upstream: (env) => env.upstream.service,
  prime: (env, system) => primeCache(cachedChatTarget(env, system, false)),
  target: (env, system) => cachedChatTarget(env, system, false),
  check: (response) => hitProblem(response) ?? echoProblem(response.text),
  notes: { ours: PEER_CACHE_NOTE },
};
