/** What one measured run yields, and how the runs of a scenario on a system are summed up. */
import type { SystemName } from './environment';
import type { LoadResult } from './lib/load';
import type { PlannedRun } from './scenarios';

export interface RunResult extends LoadResult {
  round: number;
  /** CPU of the system's own process (gateway, peer; the fake upstream for direct) per response, µs. */
  cpuUsPerReq?: number;
  /** CPU of the system process's own child processes (the gateway's log worker) per response, µs. */
  childrenUsPerReq?: number;
  emulatorsUsPerReq?: number;
  upstreamUsPerReq?: number;
  /**
   * How long after the load ended the log worker and the emulators kept working (ingesting what the
   * run logged), ms. Their CPU is read after it, so work that lagged behind the run is still counted.
   */
  logDrainMs?: number;
  /** CPU as a share of one core over the run, %. */
  cpuPct: { system?: number; children?: number; upstream?: number; emulators?: number; loadgen?: number; other?: number; machineBusyOfAllCores?: number };
  /** Largest sampled VmRSS of the system process's children, MB. */
  childrenRssMaxMb?: number;
  rssMaxMb?: number;
  hwmMb?: number;
  /** The system's process exited during or right after the run (it was started again). */
  exited?: string;
  /** The process was gone before its CPU could be read at the end: the last sample, scaled to the run. */
  cpuExtrapolated?: boolean;
}

/** One row of the tables and of the JSON report's `scenarios`. */
export interface Outcome {
  scenario: string;
  label: string;
  system: SystemName;
  connections: number;
  runs: RunResult[];
  median: {
    rps: number;
    p50: number;
    p90: number;
    p99: number;
    cpuUsPerReq?: number;
    childrenUsPerReq?: number;
    emulatorsUsPerReq?: number;
    upstreamUsPerReq?: number;
    logDrainMs?: number;
    cpuPct: RunResult['cpuPct'];
  };
  rssMaxMb?: number;
  childrenRssMaxMb?: number;
  addedP50?: number;
  addedP99?: number;
  /** Time to first chunk (stream c=1 rows), from the TTFC stage. */
  ttfcP50?: number;
  exits: number;
  socketErrors: number;
  badStatus: number;
}

export function median(values: (number | undefined)[]): number | undefined {
  const sorted = values.filter((value): value is number => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

export function summarise(run: PlannedRun, system: SystemName, runs: RunResult[]): Outcome {
  const pick = <K extends keyof RunResult['cpuPct']>(key: K) => median(runs.map((result) => result.cpuPct[key]));
  return {
    scenario: run.id,
    label: run.label,
    system,
    connections: run.connections,
    runs,
    median: {
      rps: median(runs.map((result) => result.rps))!,
      p50: median(runs.map((result) => result.p50))!,
      p90: median(runs.map((result) => result.p90))!,
      p99: median(runs.map((result) => result.p99))!,
      cpuUsPerReq: median(runs.map((result) => result.cpuUsPerReq)),
      childrenUsPerReq: median(runs.map((result) => result.childrenUsPerReq)),
      emulatorsUsPerReq: median(runs.map((result) => result.emulatorsUsPerReq)),
      logDrainMs: median(runs.map((result) => result.logDrainMs)),
      upstreamUsPerReq: median(runs.map((result) => result.upstreamUsPerReq)),
      cpuPct: {
        system: pick('system'),
        children: pick('children'),
        upstream: pick('upstream'),
        emulators: pick('emulators'),
        loadgen: pick('loadgen'),
        other: pick('other'),
        machineBusyOfAllCores: pick('machineBusyOfAllCores'),
      },
    },
    rssMaxMb: Math.max(0, ...runs.map((result) => result.rssMaxMb ?? 0)) || undefined,
    childrenRssMaxMb: Math.max(0, ...runs.map((result) => result.childrenRssMaxMb ?? 0)) || undefined,
    exits: runs.filter((result) => result.exited).length,
    socketErrors: runs.reduce((sum, result) => sum + result.socketErrors, 0),
    badStatus: runs.reduce((sum, result) => sum + result.badStatus, 0),
  };
}

/** Latency added over direct, once every run (and so every baseline) is in. */
export function addLatencyOverDirect(outcomes: Outcome[], plan: PlannedRun[]): void {
  for (const outcome of outcomes) {
    if (outcome.system === 'direct') continue;
    const run = plan.find((planned) => planned.id === outcome.scenario)!;
    const baseline = outcomes.find((o) => o.scenario === run.baselineId && o.system === 'direct');
    if (!baseline) continue;
    outcome.addedP50 = outcome.median.p50 - baseline.median.p50;
    outcome.addedP99 = outcome.median.p99 - baseline.median.p99;
  }
}
