import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configHash } from '../../lib/inference/request-config';
import { breakerIdentity } from '../../lib/routing/circuit-breaker';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { env, spawnSharedGateway } from '../support/gateway-client';
import type { SpawnedGateway } from '../support/spawn-gateway';
import { pollUntil } from '../support/poll';
import { ageBreaker, readBreaker } from '../support/state-table';
import { connectToGatewayStore } from '../support/gateway-store';

const store = connectToGatewayStore();

let upstream: FakeUpstream;
let second: SpawnedGateway;
beforeAll(async () => {
  upstream = await startFakeUpstream();
  second = await spawnSharedGateway();
});
afterAll(async () => {
  await second?.stop();
  await upstream?.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Breaker state is cached in each process for up to a second. */
const pastReadCache = () => sleep(1_100);

describe('circuit breaker shared by two gateway processes', () => {
  it('opens after the threshold, skips the open target, lets one probe through after the cooldown, and closes', async () => {
    const a = '/cb/a';
    const b = '/cb/b';
    const config = {
      strategy: { mode: 'fallback' },
      cb_config: { failure_threshold: 2, cooldown_interval: 30_000 },
      targets: [
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}${a}/v1` },
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}${b}/v1` },
      ],
    };
    const identity = breakerIdentity(store.workspaceId, `inline:${configHash(config as never)}`);
    const hits = (prefix: string) => upstream.requests.filter((request) => request.path.startsWith(prefix)).length;
    const call = async (gatewayUrl: string) => {
      const response = await fetch(`${gatewayUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': env().adminKey, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'breaker' }] }),
      });
      await response.text();
      return response;
    };

    upstream.script(a, [{ status: 503 }, { status: 503 }, { status: 503 }]);
    expect((await call(env().gatewayUrl)).status).toBe(200); // a fails once, b answers
    expect((await call(second.url)).status).toBe(200); // a fails twice: open
    const opened = await pollUntil(
      () => readBreaker(identity, 'config.targets[0]'),
      (item) => item?.openedAt !== undefined,
    );
    expect(opened).toMatchObject({ failures: 2 });
    expect(hits(a)).toBe(2);

    await pastReadCache();
    const skipped = await call(env().gatewayUrl);
    expect(skipped.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    await call(second.url);
    expect(hits(a)).toBe(2); // both processes skip the open target

    // Age the cooldown instead of waiting 30 s; the script's third answer is still a failure.
    await ageBreaker(identity, 'config.targets[0]', 31_000);
    await pastReadCache();
    await call(env().gatewayUrl); // the half-open probe fails: open again
    expect(hits(a)).toBe(3);
    const reopened = await pollUntil(
      () => readBreaker(identity, 'config.targets[0]'),
      (item) => item?.probeAt === undefined && item?.openedAt > opened!.openedAt,
    );
    expect(reopened!.openedAt).toBeGreaterThan(opened!.openedAt);

    await ageBreaker(identity, 'config.targets[0]', 31_000);
    await pastReadCache();
    const probe = await call(second.url); // the probe succeeds: closed
    expect(probe.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[0]');
    expect(
      await pollUntil(
        () => readBreaker(identity, 'config.targets[0]'),
        (item) => item === undefined,
      ),
    ).toBeUndefined();

    await pastReadCache();
    const closed = await call(env().gatewayUrl);
    expect(closed.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[0]');
  });

  it('tries every target when all of them are open', async () => {
    const config = {
      strategy: { mode: 'fallback' },
      cb_config: { failure_threshold: 1, cooldown_interval: 60_000 },
      targets: [
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/cb-all/a/v1` },
        { provider: 'openai', api_key: 'k', custom_host: `${upstream.url}/cb-all/b/v1` },
      ],
    };
    const identity = breakerIdentity(store.workspaceId, `inline:${configHash(config as never)}`);
    upstream.script('/cb-all/a', [{ status: 502 }, { status: 502 }]);
    upstream.script('/cb-all/b', [{ status: 502 }]);
    const call = () =>
      fetch(`${env().gatewayUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'x-gateway-api-key': env().adminKey, 'content-type': 'application/json', 'x-gateway-config': JSON.stringify(config) },
        body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'x' }] }),
      });
    expect((await call()).status).toBe(502);
    await pollUntil(
      () => readBreaker(identity, 'config.targets[1]'),
      (item) => item?.openedAt !== undefined,
    );
    await pastReadCache();
    const response = await call();
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
  });
});
