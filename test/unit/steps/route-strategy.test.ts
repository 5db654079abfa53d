/*
 * The `strategy` step over in-memory stores, after the `config` step, with the real target steps
 * calling a fake provider on loopback: a fallback away from a failing target, retries, and circuit
 * breakers kept in the context's own breaker store (opened by one request, honoured by the next, and
 * unseen by another store).
 */
import { describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import type { InferenceResult } from '../../../lib/inference/context';
import { memoryStores, type MemoryStores } from '../../../lib/inference/memory-stores';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { routeStrategy } from '../../../lib/inference/steps/route-strategy';
import { runSteps } from '../../../lib/inference/steps';
import { breakerIdentity } from '../../../lib/routing/circuit-breaker';
import { ownPath } from '../../support/fake-upstream';
import { useLoopbackUpstream } from '../../support/loopback-upstream';
import { chatRequest, nextAnswering, okResult, stepContext, testCaller } from '../../support/step-context';

// Retries wait a jittered backoff; a millisecond keeps the retry test fast without changing what it checks.
const loopback = useLoopbackUpstream({ GATEWAY_RETRY_BASE_MS: '1' });

const breakerSettings = { failure_threshold: 1, cooldown_interval: 60_000 };
const overloaded = { status: 503, json: { error: { message: 'overloaded', type: 'server_error', param: null, code: null } } };

/** A target on a base path of its own, so each test counts the provider calls it caused. */
function fakeTarget(label: string, extra: GatewayConfig = {}) {
  const host = ownPath(loopback.upstream, 'strategy', label);
  return { ...host, config: { provider: 'openai', api_key: 'sk-fake', custom_host: host.custom_host, ...extra } satisfies GatewayConfig };
}

/** One request through `config` then `strategy`, and its context once its deferred writes settled. */
async function route(config: GatewayConfig, stores: MemoryStores, workspaceId = testCaller.workspaceId) {
  const step = stepContext(chatRequest(config, { caller: { ...testCaller, workspaceId } }), stores);
  const result: InferenceResult = await runSteps([resolveConfig, routeStrategy], step.context);
  await step.settled();
  return { ...step, result };
}

/** Where a request's breakers are kept: its workspace, and its config's identity. */
const breakersOf = (context: { request: { caller: { workspaceId: string } }; plan?: { identity: string } }) =>
  breakerIdentity(context.request.caller.workspaceId, context.plan!.identity);

const bodyOf = (result: InferenceResult) => {
  if (!result.outcome.ok || !Buffer.isBuffer(result.outcome.body)) throw new Error(`expected a whole 200 answer, got ${result.outcome.status}`);
  return JSON.parse(result.outcome.body.toString('utf8'));
};

describe('routeStrategy', () => {
  it('falls back from a target that answers 503 to one that works, and says which answered', async () => {
    const failing = fakeTarget('fallback-503');
    const working = fakeTarget('fallback-ok');
    loopback.upstream.script(failing.prefix, [overloaded]);
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [failing.config, working.config] };

    const { result, context, records } = await route(config, memoryStores());
    expect(result).toMatchObject({ path: 'config.targets[1]', retries: 0, cacheStatus: 'DISABLED' });
    expect(result.outcome).toMatchObject({ ok: true, status: 200 });
    expect(bodyOf(result).choices[0].message.content).toBe('echo: hello');
    expect([failing.calls(), working.calls()]).toEqual([1, 1]);

    await context.finish({ status: result.outcome.status });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: 'openai', cache_status: 'DISABLED', status: 200 });
  });

  it('answers the last failure when every target of a fallback fails', async () => {
    const first = fakeTarget('all-fail-1');
    const second = fakeTarget('all-fail-2');
    loopback.upstream.script(first.prefix, [overloaded]);
    loopback.upstream.script(second.prefix, [{ status: 502, json: { error: { message: 'bad gateway', type: 'server_error', param: null, code: null } } }]);

    const { result } = await route({ strategy: { mode: 'fallback' }, targets: [first.config, second.config] }, memoryStores());
    expect(result).toMatchObject({ path: 'config.targets[1]', retries: 0 });
    expect(result.outcome).toMatchObject({ ok: false, status: 502 });
    expect([first.calls(), second.calls()]).toEqual([1, 1]);
  });

  it('retries a target before falling back, and counts the retries of the target that answered', async () => {
    const flaky = fakeTarget('retry-flaky', { retry: { attempts: 2, on_status_codes: [503] } });
    const spare = fakeTarget('retry-spare');
    loopback.upstream.script(flaky.prefix, [overloaded]);

    const { result } = await route({ strategy: { mode: 'fallback' }, targets: [flaky.config, spare.config] }, memoryStores());
    expect(result).toMatchObject({ path: 'config.targets[0]', retries: 1 });
    expect(result.outcome).toMatchObject({ ok: true, status: 200 });
    expect([flaky.calls(), spare.calls()]).toEqual([2, 0]);
  });

  it("opens the breaker of a failing target in the context's breaker store, and the next request skips it", async () => {
    // Always 503, whatever the script: a request that did reach it would fail again.
    const broken = fakeTarget('breaker-broken', { cb_config: breakerSettings, override_params: { model: 'error-503' } });
    const working = fakeTarget('breaker-ok');
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [broken.config, working.config] };
    const stores = memoryStores();

    const startedAt = Date.now();
    const first = await route(config, stores);
    expect(first.context.plan!.identity).toMatch(/^inline:[0-9a-f]{64}$/);
    const identity = breakersOf(first.context);
    expect(first.result).toMatchObject({ path: 'config.targets[1]', retries: 0 });
    expect(broken.calls()).toBe(1);

    const breakers = await stores.breakerStore.read(identity);
    expect([...breakers.keys()]).toEqual(['config.targets[0]']);
    const opened = breakers.get('config.targets[0]')!;
    expect(opened.failures).toBe(1);
    expect(opened.openedAt).toBeGreaterThanOrEqual(startedAt);
    expect(opened.openedAt).toBeLessThanOrEqual(Date.now());

    const second = await route(config, stores);
    expect(second.result).toMatchObject({ path: 'config.targets[1]', retries: 0 });
    expect(second.result.outcome).toMatchObject({ ok: true, status: 200 });
    expect([broken.calls(), working.calls()]).toEqual([1, 2]);
    // Skipping an open target is not a failure: the breaker is as the first request left it.
    expect((await stores.breakerStore.read(identity)).get('config.targets[0]')).toEqual(opened);
  });

  it("leaves another store's breakers alone: a request over it still tries the failing target", async () => {
    const broken = fakeTarget('isolated-broken', { cb_config: breakerSettings, override_params: { model: 'error-503' } });
    const working = fakeTarget('isolated-ok');
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [broken.config, working.config] };
    const opener = memoryStores();
    const elsewhere = memoryStores();

    const { context } = await route(config, opener);
    const identity = breakersOf(context);
    expect((await opener.breakerStore.read(identity)).get('config.targets[0]')?.openedAt).toBeTypeOf('number');
    expect((await elsewhere.breakerStore.read(identity)).size).toBe(0);

    const other = await route(config, elsewhere);
    expect(breakersOf(other.context)).toBe(identity);
    expect(other.result.path).toBe('config.targets[1]');
    expect(broken.calls()).toBe(2);
    // That store opens its own breaker from its own failure.
    expect((await elsewhere.breakerStore.read(identity)).get('config.targets[0]')).toMatchObject({ failures: 1 });
    expect((await opener.breakerStore.read(identity)).get('config.targets[0]')).toMatchObject({ failures: 1 });
  });

  it("keeps one workspace's breakers from another's that sends the same inline config", async () => {
    const broken = fakeTarget('tenant-broken', { cb_config: breakerSettings, override_params: { model: 'error-503' } });
    const working = fakeTarget('tenant-ok');
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [broken.config, working.config] };
    const stores = memoryStores();

    const opener = await route(config, stores);
    expect((await stores.breakerStore.read(breakersOf(opener.context))).get('config.targets[0]')?.openedAt).toBeTypeOf('number');
    const tenant = await route(config, stores, 'ws_tenant');
    // The same config, the same store: the other workspace still tries its own first target.
    expect(broken.calls()).toBe(2);
    expect(breakersOf(tenant.context)).not.toBe(breakersOf(opener.context));
  });

  it('closes an open breaker in the store once its target answers again', async () => {
    const recovering = fakeTarget('breaker-recovers', { cb_config: { failure_threshold: 1, cooldown_interval: 1 } });
    const spare = fakeTarget('breaker-recovers-spare');
    loopback.upstream.script(recovering.prefix, [overloaded]);
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [recovering.config, spare.config] };
    const stores = memoryStores();

    const { context } = await route(config, stores);
    const identity = breakersOf(context);
    expect((await stores.breakerStore.read(identity)).get('config.targets[0]')?.openedAt).toBeTypeOf('number');

    // The cooldown of 1 ms has passed, and the breakers' one-second read cache was dropped by the write.
    await new Promise((resolve) => setTimeout(resolve, 5));
    const probe = await route(config, stores);
    expect(probe.result.path).toBe('config.targets[0]');
    expect(recovering.calls()).toBe(2);
    expect((await stores.breakerStore.read(identity)).size).toBe(0);
  });

  it('refuses to run before the config step, naming it', async () => {
    const { context } = stepContext(chatRequest({ provider: 'openai', api_key: 'sk-fake' }));
    await expect(routeStrategy.run(context, nextAnswering(okResult))).rejects.toThrow('The "config" step must run before this one.');
  });
});
