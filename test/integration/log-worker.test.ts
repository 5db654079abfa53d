import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { env, spawnSharedGateway, waitForLogs } from '../support/gateway-client';
import type { SpawnedGateway } from '../support/spawn-gateway';

let gateway: SpawnedGateway;

beforeAll(async () => {
  gateway = await spawnSharedGateway({
    GATEWAY_PROVIDER_BASE_URLS: JSON.stringify({ openai: `${env().upstreamUrl}/openai/v1` }),
    GATEWAY_LOG_FLUSH_MS: '20',
    GATEWAY_LOG_WORKER_NICE: '5',
  });
});
afterAll(() => gateway?.stop());

/** The gateway's log worker: its child process running log-worker.mjs (Linux /proc). */
function logWorkerPid(): number | undefined {
  const parent = gateway.process.pid;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parentPid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parentPid === parent && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('log-worker.mjs')) return Number(entry);
    } catch {
      // The process ended while it was being read.
    }
  }
  return undefined;
}

async function newLogWorker(than: number): Promise<number> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const pid = logWorkerPid();
    if (pid !== undefined && pid !== than) return pid;
    if (Date.now() > deadline) throw new Error(`No new log worker after 5 s. stderr: ${gateway.errors()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function tracedRequest(traceId: string): Promise<void> {
  const response = await fetch(`${gateway.url}/models`, {
    headers: { 'x-gateway-api-key': env().adminKey, 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-trace-id': traceId },
  });
  expect(response.status).toBe(200);
  await response.text();
}

describe.skipIf(process.platform !== 'linux')('the local log worker', () => {
  it('runs below the gateway at the niceness GATEWAY_LOG_WORKER_NICE gives it, and a worker started again does too', async () => {
    // A worker lowers its own priority as it starts: read it once it has had the time to.
    const settledNiceness = async (pid: number) => {
      const deadline = Date.now() + 5_000;
      while (getPriority(pid) === getPriority(gateway.process.pid!) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      return getPriority(pid);
    };
    const first = logWorkerPid();
    expect(first).toBeDefined();
    // Lowering a niceness the gateway inherited would need privileges: only check when 5 is lower.
    const checkable = getPriority(gateway.process.pid!) < 5;
    if (checkable) expect(await settledNiceness(first!)).toBe(5);
    process.kill(first!, 'SIGKILL');
    const second = await newLogWorker(first!);
    if (checkable) expect(await settledNiceness(second)).toBe(5);
  });

  it('is started again when it dies, says so on stderr, and logs keep being stored', async () => {
    const first = logWorkerPid();
    expect(first).toBeDefined();
    process.kill(first!, 'SIGKILL');
    await newLogWorker(first!);
    expect(gateway.errors()).toMatch(/log worker .*SIGKILL.*starting another/i);

    const traceId = `worker-restarted-${Date.now()}`;
    await tracedRequest(traceId);
    expect(await waitForLogs(traceId)).toHaveLength(1);
  });

  it('loses no accepted record when it is killed under load, and stores each one once', async () => {
    const traceId = `worker-killed-${Date.now()}`;
    const total = 400;
    let answered = 0;
    let killed: number | undefined;
    const client = async (count: number) => {
      for (let sent = 0; sent < count; sent++) {
        await tracedRequest(traceId);
        if (++answered === total / 2) {
          killed = logWorkerPid();
          process.kill(killed!, 'SIGKILL');
        }
      }
    };
    await Promise.all(Array.from({ length: 20 }, () => client(total / 20)));
    expect(killed).toBeDefined();
    await newLogWorker(killed!);

    const logs = await waitForLogs(traceId, { count: total, timeoutMs: 45_000 });
    expect(logs).toHaveLength(total);
    expect(new Set(logs.map((log) => log.id)).size).toBe(total);

    const after = `worker-after-kill-${Date.now()}`;
    await tracedRequest(after);
    expect(await waitForLogs(after)).toHaveLength(1);
    // 400 records, each stored with its rollups in a transaction the local stand-in runs one at a time.
  }, 90_000);
});
