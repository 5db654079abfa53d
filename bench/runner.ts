/**
 * Measuring: the warm-ups, one load run with the CPU and memory of every process around it, and the
 * restart of a system whose process died. Nothing here knows one scenario from another.
 */
import os from 'node:os';
import { allServices, SYSTEMS, systemProcess, type Env, type SystemName } from './environment';
import { runLoad, runNodeLoad, type HttpTarget, type LoadResult } from './lib/load';
import { busyShare, cpuSeconds, descendants, machineCpu, memory, reapedChildrenCpuSeconds, Sampler, totalCpuSeconds } from './lib/proc';
import { sleep } from './lib/services';
import { count, fixed, ms } from './lib/table';
import { addLatencyOverDirect, summarise, type Outcome, type RunResult } from './results';
import { scenarios, type PlannedRun } from './scenarios';
import type { Scenario } from './scenarios/scenario';

export interface Settings {
  rounds: number;
  durationSec: number;
  /** A warm-up of each scenario on each of its systems just before it is measured. */
  prewarmSec: number;
  warmupSec: number;
  restartWarmupSec: number;
  ttfcCount: number;
  ttfcWarmup: number;
  /** Distinct cached answers read from the shared store, one each, for the first-level-cold hits. */
  coldHits: number;
  bundleRuns: number;
  /** Scope sizes the semantic lookups are measured at, and queries of each kind per size. */
  semanticSizes: number[];
  semanticQueriesPerKind: number;
}

export function settingsFor(quick: boolean): Settings {
  return quick
    ? {
        rounds: 1,
        durationSec: 2,
        prewarmSec: 0,
        warmupSec: 0.5,
        restartWarmupSec: 0.5,
        ttfcCount: 200,
        ttfcWarmup: 10,
        coldHits: 200,
        bundleRuns: 3,
        semanticSizes: [1_000, 10_000],
        semanticQueriesPerKind: 100,
      }
    : {
        rounds: 3,
        durationSec: 5,
        prewarmSec: 1,
        warmupSec: 3,
        restartWarmupSec: 1,
        ttfcCount: 300,
        ttfcWarmup: 30,
        coldHits: 500,
        bundleRuns: 7,
        semanticSizes: [1_000, 10_000, 100_000],
        semanticQueriesPerKind: 300,
      };
}

export const SAMPLE_INTERVAL_MS = 100;
const CORES = os.cpus().length;
const sharedWarmUp = scenarios.filter((scenario) => scenario.warmUp === 'every system');

export interface Restart {
  system: SystemName;
  scenario: string;
  status: string;
  stderrTail: string;
}

export const perRequestUs = (seconds: number | undefined, requests: number) =>
  seconds === undefined || requests === 0 ? undefined : (seconds * 1e6) / requests;
export const delta = (after: number | undefined, before: number | undefined) => (after === undefined || before === undefined ? undefined : after - before);
const pct = (seconds: number | undefined, wall: number) => (seconds === undefined ? undefined : (seconds / wall) * 100);

/** One request through the system, checked, so a misrouted system is never measured. */
export async function verify(scenario: Scenario, target: HttpTarget, what: string): Promise<void> {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
  const text = await response.text();
  const fail = (why: string) => new Error(`${what}: ${why}\n${response.status} ${text.slice(0, 600)}`);
  if (response.status !== 200) throw fail('expected 200');
  const problem = scenario.check({ headers: response.headers, text });
  if (problem) throw fail(problem);
}

export class Runner {
  readonly restarts: Restart[] = [];

  constructor(
    readonly env: Env,
    readonly settings: Settings,
    readonly log: (line: string) => void,
  ) {}

  async verifyPlan(plan: PlannedRun[]): Promise<void> {
    for (const run of plan) {
      for (const system of run.systems) {
        await run.scenario.prime?.(this.env, system);
        await verify(run.scenario, run.scenario.target(this.env, system), `${system} ${run.label}`);
      }
    }
  }

  /** Every run of the plan, rounds interleaved across systems; one outcome per scenario and system. */
  async measurePlan(plan: PlannedRun[]): Promise<Outcome[]> {
    const { settings } = this;
    const outcomes: Outcome[] = [];
    for (const run of plan) {
      const results = new Map<SystemName, RunResult[]>(run.systems.map((system) => [system, []]));
      if (settings.prewarmSec > 0) {
        for (const system of run.systems) await this.warmUp(system, settings.prewarmSec, [run.scenario], run.connections);
      }
      for (let round = 0; round < settings.rounds; round++) {
        // Rotate the order each round so no system always runs first.
        const order = run.systems.map((_, i) => run.systems[(i + round) % run.systems.length]);
        for (const system of order) {
          const result = await this.measure(run, system, round + 1, settings.durationSec);
          results.get(system)!.push(result);
          this.log(
            `  ${run.label.padEnd(22)} ${system.padEnd(6)} run ${round + 1}/${settings.rounds}: ${count(result.rps)!.padStart(6)} req/s  p50 ${ms(result.p50)} ms  p99 ${ms(result.p99)} ms` +
              (system === 'direct' ? '' : `  CPU ${fixed(result.cpuUsPerReq, 0)} µs/req`) +
              (result.socketErrors || result.badStatus ? `  errors ${result.socketErrors}/${result.badStatus}` : ''),
          );
        }
      }
      for (const system of run.systems) outcomes.push(summarise(run, system, results.get(system)!));
    }
    addLatencyOverDirect(outcomes, plan);
    return outcomes;
  }

  /** The warm-up before anything is measured: the shared paths on every system, then the gateway's own. */
  async warmUpAll(): Promise<void> {
    const seconds = this.settings.warmupSec;
    this.log(`Warming up (${sharedWarmUp.map((scenario) => `${seconds} s ${scenario.kind}`).join(' + ')} per system) …`);
    for (const system of SYSTEMS) await this.warmUp(system, seconds, sharedWarmUp);
    await this.warmUp(
      'ours',
      seconds / 2,
      scenarios.filter((scenario) => scenario.warmUp === 'gateway'),
    );
  }

  /**
   * A short unmeasured load, so JIT and connection pools are warm. It uses the Node client, which
   * lets the requests in flight finish when the time is up (wrk drops them).
   */
  async warmUp(system: SystemName, seconds: number, warmed: readonly Scenario[] = sharedWarmUp, connections = 10): Promise<void> {
    // The scenarios run side by side (one client process each), which halves the time warm-ups take.
    const each = Math.max(1, Math.round(connections / warmed.length));
    await Promise.all(
      warmed.map(async (scenario) => {
        const result = await runNodeLoad(scenario.target(this.env, system), { connections: each, durationSec: seconds });
        if (result.socketErrors || result.badStatus)
          this.log(`  ! warm-up of ${system} (${scenario.kind}): ${result.socketErrors} socket errors, ${result.badStatus} bad statuses`);
      }),
    );
    // What the warm-up logged is stored before anything is measured, so no run pays for it.
    if (system === 'ours') await waitUntilIdle(logPipelinePids(this.env));
  }

  /** Starts the system's process again if it died (and warms the new one up); returns how it ended. */
  async restartIfDown(system: SystemName, context: string): Promise<string | undefined> {
    if (system === 'direct') return undefined;
    const service = systemProcess(this.env, system);
    // The exit may not have been seen yet when the load generator has only just closed its connections.
    await sleep(100);
    if (service.alive()) return undefined;
    const status = service.exitStatus() ?? 'exited';
    const stderrTail = service.stderrTail(1_500);
    this.restarts.push({ system, scenario: context, status, stderrTail });
    const lines = stderrTail.trim().split('\n');
    const reason = lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.find((line) => /error/i.test(line)) ?? '';
    this.log(`  ! ${system} process ended (${status}) after ${context}${reason ? `: ${reason.trim()}` : ''}; starting it again`);
    await service.ensureRunning();
    await this.warmUp(system, this.settings.restartWarmupSec);
    return status;
  }

  async measure(run: PlannedRun, system: SystemName, round: number, durationSec: number): Promise<RunResult> {
    const { env } = this;
    const target = run.scenario.target(env, system);
    const upstream = run.scenario.upstream(env);
    const service = system === 'direct' ? upstream : systemProcess(env, system);
    const pid = service.pid;
    const children = system === 'direct' ? [] : descendants(pid);
    const sampler = new Sampler(pid, SAMPLE_INTERVAL_MS);
    const childSamplers = children.map((child) => new Sampler(child, SAMPLE_INTERVAL_MS));
    const others = allServices(env)
      .filter((other) => other !== service)
      .flatMap((other) => (other.pid === undefined ? [] : [other.pid, ...(other === env.gateway.service ? descendants(other.pid) : [])]));
    const before = {
      system: cpuSeconds(pid),
      children: totalCpuSeconds(children),
      others: totalCpuSeconds(others),
      self: process.cpuUsage(),
      upstream: cpuSeconds(upstream.pid),
      emulators: cpuSeconds(env.emulators.service.pid),
      loadgen: reapedChildrenCpuSeconds(),
      machine: machineCpu(),
      at: performance.now(),
    };
    let load: LoadResult;
    try {
      load = await runLoad(target, { connections: run.connections, durationSec, workDir: env.workDir });
    } finally {
      sampler.stop();
      for (const childSampler of childSamplers) childSampler.stop();
    }
    const end = performance.now();
    // Everything is read as the load ends, except the log pipeline's own CPU (below).
    const atEnd = {
      system: cpuSeconds(pid),
      children: totalCpuSeconds(children),
      others: totalCpuSeconds(others),
      upstream: cpuSeconds(upstream.pid),
      loadgen: reapedChildrenCpuSeconds(),
      self: process.cpuUsage(before.self),
      machine: machineCpu(),
    };
    const wall = (end - before.at) / 1000;
    // A process that died as the load generator hung up still has its CPU times in /proc until it is
    // reaped; after that, the last sample is scaled up to the whole run.
    let systemCpu = delta(atEnd.system, before.system);
    let cpuExtrapolated = false;
    if (systemCpu === undefined && sampler.lastCpu !== undefined && before.system !== undefined && sampler.lastCpuAt > before.at) {
      systemCpu = (sampler.lastCpu - before.system) * ((end - before.at) / (sampler.lastCpuAt - before.at));
      cpuExtrapolated = true;
    }
    const upstreamCpu = system === 'direct' ? systemCpu : delta(atEnd.upstream, before.upstream);
    const loadgenCpu = delta(atEnd.loadgen, before.loadgen);
    // What the machine spent beyond every process of the benchmark (this one included): other work.
    const known =
      (systemCpu ?? 0) +
      (delta(atEnd.children, before.children) ?? 0) +
      (delta(atEnd.others, before.others) ?? 0) +
      (loadgenCpu ?? 0) +
      (atEnd.self.user + atEnd.self.system) / 1e6;
    const machineBusy = busyShare(before.machine, atEnd.machine);
    const otherPct = machineBusy === undefined ? undefined : Math.max(0, machineBusy * CORES * 100 - (known / wall) * 100);
    // The log worker and the emulators ingest what the run logged; if they lag, their CPU per request
    // is read once they are done, so lagging work is counted rather than left out.
    const logDrainMs = system === 'ours' ? await waitUntilIdle(logPipelinePids(env)) : undefined;
    const childrenCpu = delta(totalCpuSeconds(children), before.children);
    const emulatorsCpu = delta(cpuSeconds(env.emulators.service.pid), before.emulators);
    const mem = service.alive() ? memory(service.pid) : undefined;
    const result: RunResult = {
      ...load,
      round,
      cpuUsPerReq: perRequestUs(systemCpu, load.requests),
      childrenUsPerReq: children.length ? perRequestUs(childrenCpu, load.requests) : undefined,
      upstreamUsPerReq: perRequestUs(upstreamCpu, load.requests),
      emulatorsUsPerReq: perRequestUs(emulatorsCpu, load.requests),
      logDrainMs,
      cpuPct: {
        system: pct(systemCpu, wall),
        children: children.length ? pct(childrenCpu, wall) : undefined,
        upstream: pct(upstreamCpu, wall),
        emulators: pct(emulatorsCpu, wall),
        loadgen: pct(loadgenCpu, wall),
        other: otherPct,
        machineBusyOfAllCores: (machineBusy ?? NaN) * 100,
      },
      rssMaxMb: sampler.maxRssMb || undefined,
      childrenRssMaxMb: childSamplers.reduce((sum, childSampler) => sum + childSampler.maxRssMb, 0) || undefined,
      hwmMb: mem?.hwmMb,
      cpuExtrapolated: cpuExtrapolated || undefined,
    };
    // wrk drops its open connections when its time is up; a server that dies of that shows up here.
    result.exited = await this.restartIfDown(system, run.label);
    return result;
  }
}

/** The processes that store what the gateway logs: its log worker and the emulators. */
export function logPipelinePids(env: Env): number[] {
  return [...descendants(env.gateway.service.pid), ...(env.emulators.service.pid === undefined ? [] : [env.emulators.service.pid])];
}

/**
 * Waits until the processes stop using CPU (less than 2% of a core for longer than the local log
 * sink's flush interval), up to 60 s; returns how long that took, ms. The sampling window is not counted.
 */
export async function waitUntilIdle(pids: number[]): Promise<number> {
  const started = performance.now();
  const quietMs = 300;
  // Idle still wakes now and then (the queue pollers' receives, timers): a few ms of CPU in the
  // window is quiet; CPU times are read to the nanosecond, so "unchanged" would never come.
  const quietCpuSeconds = (quietMs / 1000) * 0.02;
  let quietSince = performance.now();
  let cpuAtQuietStart = totalCpuSeconds(pids) ?? 0;
  while (performance.now() - started < 60_000) {
    await sleep(50);
    const now = totalCpuSeconds(pids) ?? 0;
    if (now - cpuAtQuietStart > quietCpuSeconds) {
      cpuAtQuietStart = now;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      return Math.max(0, quietSince - started);
    }
  }
  return performance.now() - started;
}
