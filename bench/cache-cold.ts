/**
 * A cache hit the in-process first level cannot answer, so the gateway reads the shared store
 * (DynamoDB, here the emulator): distinct requests are answered once each, then asked again after
 * the first level has let them go, one after another from the Node client in its own process.
 */
import { runClient } from './lib/load';
import { cpuSeconds, descendants, totalCpuSeconds } from './lib/proc';
import { sleep } from './lib/services';
import { delta, logPipelinePids, perRequestUs, waitUntilIdle, type Runner } from './runner';
import { cachedChatTarget, primeCache } from './scenarios/cache-hit';

/** The first level keeps an entry this long (lib/cache/response-cache.ts); waiting past it empties it. */
const FIRST_LEVEL_FRESHNESS_MS = 5_000;

export interface ColdHitResult {
  /** Hits timed; each read its entry from the shared store once. */
  count: number;
  failures: number;
  /** Answers that were not HIT (an entry the store lost, or one that was never written). */
  notHits: number;
  latencyMs: { p50: number; p90: number; p99: number; min: number; max: number };
  /** CPU of the gateway process per hit, µs; its log worker and the emulators apart. */
  cpuUsPerHit?: number;
  childrenUsPerHit?: number;
  emulatorsUsPerHit?: number;
}

export async function measureColdHits(runner: Runner, count: number): Promise<ColdHitResult> {
  const { env, log } = runner;
  const tag = `${process.pid}-${Date.now()}`;
  // The warm-up reads entries of its own, so the store-read path is warm too but none is read twice.
  const warmup = Math.max(20, Math.round(count / 4));
  log(
    `Cache hits from DynamoDB (first level cold): ${count} distinct entries (after ${warmup} more as a warm-up), read once each after ${FIRST_LEVEL_FRESHNESS_MS / 1000} s …`,
  );
  const texts = Array.from({ length: warmup + count }, (_, i) => `Cold cache entry ${i} of ${tag}, please benchmark me.`);
  const targets = texts.map((text) => cachedChatTarget(env, 'ours', false, text));
  for (const target of targets) {
    const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`answering a cold-hit entry the first time: ${response.status}`);
  }
  // The writes follow the answers in order; once the last is a hit, the others were stored before it.
  await primeCache(targets.at(-1)!);
  await sleep(FIRST_LEVEL_FRESHNESS_MS + 1_000);

  const pid = env.gateway.service.pid;
  const children = descendants(pid);
  const emulatorsPid = env.emulators.service.pid;
  let before: { gateway?: number; children?: number; emulators?: number } | undefined;
  const job = { mode: 'bodies', url: targets[0].url, headers: targets[0].headers, warmup, bodies: targets.map((target) => target.body) };
  const { code, stdout, stderr } = await runClient(job, 120_000, (output) => {
    if (before === undefined && output.includes('BENCH_WARM'))
      before = { gateway: cpuSeconds(pid), children: totalCpuSeconds(children), emulators: cpuSeconds(emulatorsPid) };
  });
  const gatewayCpu = cpuSeconds(pid);
  // What the hits logged is stored by the log worker and the emulators a little later; it is theirs.
  await waitUntilIdle(logPipelinePids(env));
  const after = { gateway: gatewayCpu, children: totalCpuSeconds(children), emulators: cpuSeconds(emulatorsPid) };
  const line = /BENCH_RESULT (\{.*\})/.exec(stdout)?.[1];
  if (code !== 0 || !line) throw new Error(`the cold-hit client failed (exit ${code}): ${stderr || stdout}`);
  const client = JSON.parse(line) as { count: number; failures: number; notHits: number; total: ColdHitResult['latencyMs'] };
  await runner.restartIfDown('ours', 'cache cold hits');
  const result: ColdHitResult = {
    count: client.count,
    failures: client.failures,
    notHits: client.notHits,
    latencyMs: client.total,
    cpuUsPerHit: perRequestUs(delta(after.gateway, before?.gateway), count),
    childrenUsPerHit: children.length ? perRequestUs(delta(after.children, before?.children), count) : undefined,
    emulatorsUsPerHit: perRequestUs(delta(after.emulators, before?.emulators), count),
  };
  if (result.failures || result.notHits) log(`  ! ${result.failures} failed, ${result.notHits} not answered from the cache`);
  return result;
}
