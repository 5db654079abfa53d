import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import { GatewayError } from '../../../lib/core/errors';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import { pickWeighted, runStrategy } from '../../../lib/routing/engine';
import { buildPlan, type PlanNode } from '../../../lib/routing/plan';
import { CircuitBreakers } from '../../../lib/routing/circuit-breaker';
import { memoryBreakerStore } from '../../../lib/store/memory/breaker-state';

process.env.GATEWAY_RETRY_BASE_MS = '1';

const breakers = new CircuitBreakers(memoryBreakerStore());

const ok = (name: string): AttemptOutcome => ({ ok: true, status: 200, headers: { 'x-gateway-provider': name }, body: name });
const fail = (status: number, headers: Record<string, string> = {}): AttemptOutcome => ({
  ok: false,
  status,
  headers,
  error: new GatewayError(status, `failed with ${status}`),
  network: status === 502,
});

/** Runs a config where each target's `name` decides its answers: a queue of statuses, then 200. */
async function route(
  config: GatewayConfig,
  script: Record<string, number[]> = {},
  query = { metadata: {}, params: {}, url: { pathname: '/v1/chat/completions' } },
) {
  const calls: string[] = [];
  const result = await runStrategy(buildPlan(config), {
    identity: 'test',
    breakers,
    query,
    waitUntil: () => undefined,
    async attempt(leaf: PlanNode) {
      const name = leaf.config.name ?? leaf.path;
      calls.push(name);
      const status = script[name]?.shift();
      return status === undefined || status === 200 ? ok(name) : fail(status, status === 429 ? { 'retry-after-ms': '1' } : {});
    },
  });
  return { result, calls };
}

const target = (name: string, extra: GatewayConfig = {}): GatewayConfig => ({ name, provider: 'openai', api_key: 'k', ...extra });

describe('strategy engine', () => {
  it('falls back in order on any failure, and reports the path that answered', async () => {
    const { result, calls } = await route({ strategy: { mode: 'fallback' }, targets: [target('a'), target('b'), target('c')] }, { a: [500], b: [429] });
    expect(calls).toEqual(['a', 'b', 'c']);
    expect(result.path).toBe('config.targets[2]');
    expect(result.outcome.ok).toBe(true);
  });

  it('falls back only on the listed statuses', async () => {
    const { result, calls } = await route({ strategy: { mode: 'fallback', on_status_codes: [429] }, targets: [target('a'), target('b')] }, { a: [400] });
    expect(calls).toEqual(['a']);
    expect(result.outcome.status).toBe(400);
  });

  it('returns the last failure as it came when every target fails', async () => {
    const { result } = await route({ strategy: { mode: 'fallback' }, targets: [target('a'), target('b')] }, { a: [500], b: [503] });
    expect(result.outcome.status).toBe(503);
    expect(result.path).toBe('config.targets[1]');
  });

  it('retries a target with its retry settings before falling back', async () => {
    const { result, calls } = await route(
      { strategy: { mode: 'fallback' }, retry: { attempts: 2 }, targets: [target('a'), target('b')] },
      { a: [500, 500, 500], b: [500, 200] },
    );
    expect(calls).toEqual(['a', 'a', 'a', 'b', 'b']);
    expect(result.retries).toBe(1);
    expect(result.path).toBe('config.targets[1]');
  });

  it('does not retry statuses outside retry.on_status_codes', async () => {
    const { calls } = await route({ ...target('a'), retry: { attempts: 3, on_status_codes: [429] } }, { a: [500] });
    expect(calls).toEqual(['a']);
  });

  it('routes nested strategies: fallback of loadbalance of targets', async () => {
    const { result, calls } = await route(
      {
        strategy: { mode: 'fallback' },
        targets: [{ strategy: { mode: 'loadbalance' }, targets: [target('x', { weight: 1 }), target('y', { weight: 0 })] }, target('z')],
      },
      { x: [502] },
    );
    expect(calls).toEqual(['x', 'z']);
    expect(result.path).toBe('config.targets[1]');
  });

  it('routes conditionally on metadata and params, with a default', async () => {
    const config: GatewayConfig = {
      strategy: {
        mode: 'conditional',
        conditions: [
          { query: { 'metadata.tier': 'pro' }, then: 'big' },
          { query: { 'params.max_tokens': { $gt: 1000 } }, then: 'long' },
        ],
        default: 'small',
      },
      targets: [target('big'), target('long'), target('small')],
    };
    const query = (metadata: Record<string, unknown>, params: Record<string, unknown>) => ({ metadata, params, url: { pathname: '/v1/chat/completions' } });
    expect((await route(config, {}, query({ tier: 'pro' }, {}))).calls).toEqual(['big']);
    expect((await route(config, {}, query({ tier: 'free' }, { max_tokens: 4000 }))).calls).toEqual(['long']);
    expect((await route(config, {}, query({}, { max_tokens: 10 }))).calls).toEqual(['small']);
  });

  it('refuses a conditional strategy with no match and no default', async () => {
    const config: GatewayConfig = { strategy: { mode: 'conditional', conditions: [{ query: { 'metadata.x': 1 }, then: 'a' }] }, targets: [target('a')] };
    await expect(route(config)).rejects.toMatchObject({ status: 400 });
  });
});

describe('pickWeighted', () => {
  const nodes = (weights: Array<number | undefined>) => weights.map((weight, index) => buildPlan({ name: String(index), weight }, {}, `t${index}`));

  it('never picks a zero weight, and counts a missing weight as 1', () => {
    const picks = new Map<string, number>();
    const candidates = nodes([0, undefined, 3]);
    for (let i = 0; i < 4000; i++) {
      const name = pickWeighted(candidates).config.name!;
      picks.set(name, (picks.get(name) ?? 0) + 1);
    }
    expect(picks.get('0')).toBeUndefined();
    expect((picks.get('2') ?? 0) / 4000).toBeGreaterThan(0.7);
    expect((picks.get('2') ?? 0) / 4000).toBeLessThan(0.8);
  });

  it('maps the random point onto the weights', () => {
    const candidates = nodes([1, 1, 2]);
    expect(pickWeighted(candidates, 0).config.name).toBe('0');
    expect(pickWeighted(candidates, 0.3).config.name).toBe('1');
    expect(pickWeighted(candidates, 0.99).config.name).toBe('2');
  });
});
