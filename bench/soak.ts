/** `--soak`: a long c=50 run on the gateway that samples its RSS, to show memory that only grows. */
import { runLoad, type LoadResult } from './lib/load';
import { memory, Sampler, type Sample } from './lib/proc';
import type { Runner } from './runner';
import type { Scenario } from './scenarios/scenario';

export interface SoakResult {
  kind: string;
  seconds: number;
  requests: number;
  rps: number;
  samples: Sample[];
  startRssMb?: number;
  endRssMb?: number;
  maxRssMb: number;
  hwmMb?: number;
  /** Mean RSS of the last tenth minus the mean of the tenth after the first fifth (warm-up), MB. */
  growthMb?: number;
  exited?: string;
}

export async function soak(runner: Runner, seconds: number, scenario: Scenario): Promise<SoakResult> {
  const { env, log } = runner;
  log(`\nSoak: ${scenario.kind} c=50 on the gateway for ${seconds} s, RSS every 5 s`);
  const pid = env.gateway.service.pid;
  const sampler = new Sampler(pid, 5_000, (sample) => log(`  t=${sample.t.toFixed(0).padStart(4)} s  RSS ${sample.rssMb.toFixed(1)} MB`));
  let load: LoadResult;
  try {
    load = await runLoad(scenario.target(env, 'ours'), { connections: 50, durationSec: seconds, workDir: env.workDir });
  } finally {
    sampler.stop();
  }
  const hwm = memory(pid)?.hwmMb;
  const rss = sampler.samples.map((sample) => sample.rssMb);
  const slice = (from: number, to: number) =>
    rss.slice(Math.floor(rss.length * from), Math.max(Math.floor(rss.length * from) + 1, Math.floor(rss.length * to)));
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined);
  const early = mean(slice(0.2, 0.3));
  const late = mean(slice(0.9, 1));
  const exited = await runner.restartIfDown('ours', 'soak');
  return {
    kind: scenario.kind,
    seconds,
    requests: load.requests,
    rps: load.rps,
    samples: sampler.samples.map((sample) => ({ t: Math.round(sample.t * 10) / 10, rssMb: Math.round(sample.rssMb * 10) / 10 })),
    startRssMb: rss[0],
    endRssMb: rss.at(-1),
    maxRssMb: sampler.maxRssMb,
    hwmMb: hwm,
    growthMb: early !== undefined && late !== undefined && rss.length >= 6 ? late - early : undefined,
    exited,
  };
}
