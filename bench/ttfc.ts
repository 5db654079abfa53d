/**
 * Time to first chunk: sequential streamed requests at c=1 from the Node client, which (unlike wrk)
 * sees when each chunk arrives. They go through the paced fake, so a chunk relayed late shows.
 */
import { SYSTEMS, systemProcess, type SystemName } from './environment';
import { runClient } from './lib/load';
import { cpuSeconds, descendants, totalCpuSeconds } from './lib/proc';
import type { Outcome } from './results';
import { delta, perRequestUs, verify, type Runner } from './runner';
import { runId } from './scenarios/scenario';
import { pacedStreamTarget, stream } from './scenarios/stream';

export interface TtfcResult {
  system: SystemName;
  count: number;
  failures: number;
  headers: { p50: number; p90: number; p99: number };
  firstChunk: { p50: number; p90: number; p99: number };
  total: { p50: number; p90: number; p99: number };
  cpuUsPerReq?: number;
  childrenUsPerReq?: number;
  addedFirstChunkP50?: number;
}

/** Every system in turn; fills in the TTFC column of the stream c=1 rows. */
export async function measureTtfcAll(runner: Runner, outcomes: Outcome[]): Promise<TtfcResult[]> {
  runner.log(`Time to first chunk: ${runner.settings.ttfcCount} sequential streamed requests per system (paced upstream) …`);
  const results: TtfcResult[] = [];
  for (const system of SYSTEMS) results.push(await measureTtfc(runner, system));
  const direct = results.find((result) => result.system === 'direct')!;
  for (const result of results) {
    if (result.system !== 'direct') result.addedFirstChunkP50 = result.firstChunk.p50 - direct.firstChunk.p50;
    const row = outcomes.find((o) => o.scenario === runId(stream, 1) && o.system === result.system);
    if (row) row.ttfcP50 = result.firstChunk.p50;
  }
  return results;
}

async function measureTtfc(runner: Runner, system: SystemName): Promise<TtfcResult> {
  const { env, settings } = runner;
  const target = pacedStreamTarget(env, system);
  await verify(stream, target, `${system} (paced upstream)`);
  const pid = (system === 'direct' ? env.paced.service : systemProcess(env, system)).pid;
  const children = system === 'direct' ? [] : descendants(pid);
  // CPU is read when the client says its warm-up is over, and again when it is done.
  let before: number | undefined;
  let beforeChildren: number | undefined;
  const job = { mode: 'ttfc', ...target, count: settings.ttfcCount, warmup: settings.ttfcWarmup };
  const { code, stdout, stderr } = await runClient(job, 120_000, (output) => {
    if (before === undefined && output.includes('BENCH_WARM')) {
      before = cpuSeconds(pid);
      beforeChildren = totalCpuSeconds(children);
    }
  });
  const cpu = delta(cpuSeconds(pid), before);
  const childrenCpu = delta(totalCpuSeconds(children), beforeChildren);
  const line = /BENCH_RESULT (\{.*\})/.exec(stdout)?.[1];
  if (code !== 0 || !line) throw new Error(`the TTFC client failed for ${system} (exit ${code}): ${stderr || stdout}`);
  const result = JSON.parse(line) as Omit<TtfcResult, 'system'>;
  await runner.restartIfDown(system, 'ttfc');
  const requests = settings.ttfcCount;
  return { system, ...result, cpuUsPerReq: perRequestUs(cpu, requests), childrenUsPerReq: children.length ? perRequestUs(childrenCpu, requests) : undefined };
}
