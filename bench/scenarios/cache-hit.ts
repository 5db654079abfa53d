/**
 * A chat request answered from the gateway's response cache: what a hit costs next to a provider
 * call. The peer is left out: its open-source build never serves a cached answer (`probePeerCache`).
 */
import type { Env, SystemName } from '../environment';
import type { HttpTarget } from '../lib/load';
import { sleep } from '../lib/services';
import { chat } from './chat';
import { CHAT_BODY, echoProblem, gatewayHeaders, JSON_HEADERS, PROVIDER_KEY } from './requests';
import type { CheckedResponse, Scenario } from './scenario';

const CACHE_CONFIG = JSON.stringify({ provider: 'openai', cache: { mode: 'simple', max_age: 3600 } });

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

export interface PeerCacheProbe {
  /** `x-portkey-cache-status` of the repeated request. */
  status: string | null;
  /** Whether the repeated request got the first answer back (same `id`) rather than a new one. */
  servedFromCache: boolean;
}

/**
 * The same request with a cache config sent to the peer twice. It decides nothing in the run; it
 * keeps the note on the peer true when the pinned version changes.
 */
export async function probePeerCache(env: Env): Promise<PeerCacheProbe> {
  const config = JSON.stringify({ provider: 'openai', custom_host: `${env.upstream.url}/v1`, cache: { mode: 'simple', max_age: 3600 } });
  const send = async () => {
    const response = await fetch(`${env.peer.url}/chat/completions`, {
      method: 'POST',
      headers: { ...JSON_HEADERS, authorization: `Bearer ${PROVIDER_KEY}`, 'x-portkey-config': config },
      body: JSON.stringify(CHAT_BODY),
    });
    const json = (await response.json()) as { id?: string };
    return { id: json.id, status: response.headers.get('x-portkey-cache-status') };
  };
  const first = await send();
  await sleep(200);
  const second = await send();
  return { status: second.status, servedFromCache: second.status === 'HIT' || (first.id !== undefined && first.id === second.id) };
}

export function peerCacheNote(probe: PeerCacheProbe): string {
  if (probe.servedFromCache)
    return `cache hit: the peer (@portkey-ai/gateway) answered a repeated request with a cache config from its cache (x-portkey-cache-status: ${probe.status}), but it is not measured here.`;
  return (
    `cache hit: the peer (@portkey-ai/gateway) is not measured: its open-source build takes a config's \`cache\` but has no cache behind it (a repeated request got x-portkey-cache-status: ${probe.status} and a new answer from the upstream). ` +
    "Its request handler asks the request context for a `getFromCache` function that only Portkey's hosted middleware sets; the in-memory cache it ships holds its own tokens and keys, never answers."
  );
}

/** What the cache scenarios share; the counts are chat's, so a hit is compared at each of them. */
export function cachedScenario(stream: boolean) {
  return {
    systems: ['ours'],
    connections: (quick: boolean) => (quick ? [1, 50] : [1, 10, 50]),
    warmUp: 'gateway',
    upstream: (env: Env) => env.upstream.service,
    prime: (env: Env, system: SystemName) => primeCache(cachedChatTarget(env, system, stream)),
    target: (env: Env, system: SystemName) => cachedChatTarget(env, system, stream),
  } satisfies Partial<Scenario>;
}

export const cacheHit: Scenario = {
  kind: 'cache-hit',
  label: 'cache hit',
  ...cachedScenario(false),
  // A hit answers the chat request; direct chat is what it would cost without the gateway.
  baseline: chat,
  check: (response) => hitProblem(response) ?? echoProblem(response.text),
};
