/** The end of a run: the notes on what skewed it, the JSON report, and the printed tables. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { STREAM_CHUNKS, type Env, type Processes } from './environment';
import { hasWrk, wrkVersion } from './lib/load';
import { repoRoot } from './lib/services';
import { count, fixed, ms } from './lib/table';
import type { Outcome } from './results';
import { SAMPLE_INTERVAL_MS, type Settings } from './runner';
import type { PlannedRun } from './scenarios';
import type { SemanticLookupResult } from './semantic-lookup';
import { bundleTable, cpuTable, mainTable, semanticLookupTable, targetTable, ttfcTable } from './tables';
import type { Measured, Target } from './targets';
import { webhookLatencyLine } from './guardrail-webhook';

export function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

export interface Machine {
  cpuModel?: string;
  cores: number;
  memoryGb: number;
  node: string;
  platform: string;
}

/** What every run reports about itself, whatever it measured. */
interface RunBasics {
  quick: boolean;
  startedAt: Date;
  /** Seconds since the start; read again for the last line, after the JSON is written. */
  elapsed: () => number;
  machine: Machine;
  busyBeforePct: number;
  git: { commit?: string; dirty?: boolean };
  settings: Settings;
}

export interface Run extends Measured, RunBasics {
  env: Env;
  processes: Processes;
  targets: Target[];
  notes: string[];
}

/** What the results themselves say about how far to trust them. */
export function resultNotes(plan: PlannedRun[], outcomes: Outcome[]): string[] {
  const notes: string[] = [];
  for (const run of plan) {
    for (const [system, note] of Object.entries(run.scenario.notes ?? {})) {
      if (!notes.includes(note) && outcomes.some((o) => o.scenario === run.id && o.system === system)) notes.push(note);
    }
  }
  notes.push(
    'Streams in the load runs come from a fake upstream that writes each whole stream in one go (FAKE_UPSTREAM_BURST_STREAMS=1), so the upstream costs little CPU on the shared cores; the time-to-first-chunk runs use a second fake that writes one event per event-loop turn.',
  );
  const disturbed = outcomes.filter((o) => o.runs.some((run) => (run.cpuPct.other ?? 0) > 20));
  if (disturbed.length > 0) {
    notes.push(
      `processes outside the benchmark used more than 20% of a core during some runs of: ${[...new Set(disturbed.map((o) => o.label))].join(', ')} ` +
        `(the "other %" column; up to ${fixed(Math.max(...disturbed.flatMap((o) => o.runs.map((run) => run.cpuPct.other ?? 0))), 0)}%): those numbers are skewed; run again on a quiet machine.`,
    );
  }
  const lagging = outcomes.filter((o) => (o.median.logDrainMs ?? 0) > 1_000);
  if (lagging.length > 0) {
    notes.push(
      `log ingestion fell behind in ${lagging.map((o) => `${o.label} (${fixed(o.median.logDrainMs, 0)} ms to drain)`).join(', ')}: ` +
        'the gateway served faster than the log worker and the emulators could store its records on these cores; their CPU is counted after draining.',
    );
  }
  const bottlenecks = outcomes.filter((o) => o.system === 'direct' && (o.median.cpuPct.upstream ?? 0) > 90);
  if (bottlenecks.length > 0) {
    notes.push(
      `direct ${bottlenecks.map((o) => `${o.label} (${fixed(o.median.cpuPct.upstream, 0)}%)`).join(', ')}: the fake upstream used a whole core, so the direct throughput is the fake's limit, not the network's; ` +
        'the gateway and the peer runs leave it mostly idle (see the upstream % column).',
    );
  }
  return notes;
}

/** Writes the JSON report (to `file`, or .bench/<start time>.json) and returns where it went. */
export function writeJsonReport(run: Run, file: string | undefined): string {
  const report = {
    version: 1,
    mode: run.quick ? 'quick' : 'full',
    startedAt: run.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    elapsedSec: Math.round(run.elapsed() * 10) / 10,
    machine: { ...run.machine, busyBeforeStartPct: Math.round(run.busyBeforePct) },
    git: run.git,
    loadGenerator: { name: hasWrk() ? 'wrk' : 'node', version: wrkVersion(), threads: hasWrk() ? 'ceil(connections / 25)' : undefined, timeout: '10s' },
    peer: { package: '@portkey-ai/gateway', version: run.env.peer.version, start: 'build/start-server.js --port=N --headless' },
    settings: { ...run.settings, streamChunks: STREAM_CHUNKS, sampleIntervalMs: SAMPLE_INTERVAL_MS },
    scenarios: run.outcomes,
    ttfc: run.ttfc,
    bundles: run.bundles,
    processes: run.processes,
    gatewayPeakRssMb: run.gatewayPeakMb,
    restarts: run.restarts,
    soak: run.soak,
    targets: run.targets,
    cacheHit: {
      scenarios: run.outcomes.filter((o) => o.scenario.startsWith('cache-hit')).map((o) => o.scenario),
      fromDynamoDb: run.coldHits,
      peer: run.peerCache,
    },
    semanticLookup: run.semanticLookup,
    guardrailWebhook: run.webhookLatency,
    rateLimitWrites: run.rateLimitWrites,
    notes: run.notes,
  };
  return writeJson(report, file, run.startedAt);
}

/** What `--only <stage>` ran: that stage alone, without the gateway, its peer or the upstreams. */
export interface StageRun extends RunBasics {
  stage: string;
  semanticLookup: SemanticLookupResult;
  targets: Target[];
  notes: string[];
}

export function writeStageJsonReport(run: StageRun, file: string | undefined): string {
  const report = {
    version: 1,
    mode: run.quick ? 'quick' : 'full',
    only: run.stage,
    startedAt: run.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    elapsedSec: Math.round(run.elapsed() * 10) / 10,
    machine: { ...run.machine, busyBeforeStartPct: Math.round(run.busyBeforePct) },
    git: run.git,
    settings: run.settings,
    semanticLookup: run.semanticLookup,
    targets: run.targets,
    notes: run.notes,
  };
  return writeJson(report, file, run.startedAt);
}

function writeJson(report: object, file: string | undefined, startedAt: Date): string {
  const jsonFile = file ? path.resolve(file) : path.join(repoRoot, '.bench', `${timestamp(startedAt)}.json`);
  mkdirSync(path.dirname(jsonFile), { recursive: true });
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);
  return jsonFile;
}

export function printReport(run: Run, jsonFile: string): void {
  const { settings, processes, soak } = run;
  log('');
  log(
    `Results (${run.quick ? 'quick: one run each' : `median of ${settings.rounds} runs of ${settings.durationSec} s`}; latencies in ms; +p50/+p99 = added over direct; CPU = the system's own process ÷ responses)`,
  );
  log(mainTable(run.outcomes));
  log('');
  log(coldHitLine(run.coldHits));
  log(webhookLatencyLine(run.webhookLatency));
  log('');
  printSemanticLookup(run.semanticLookup);
  log('');
  log("CPU during the runs (% of one core; child = the gateway's log worker; other = processes outside the benchmark; machine busy = % of all cores)");
  log(cpuTable(run.outcomes));
  log('');
  log(
    `Time to first chunk (ms; c=1, ${settings.ttfcCount} sequential streams of ${STREAM_CHUNKS} chunks, one event per upstream write; separate Node client process)`,
  );
  log(ttfcTable(run.ttfc));
  log('');
  log(`Bundles (cold import: median of ${settings.bundleRuns} fresh node processes)`);
  log(bundleTable(run.bundles));
  log('');
  const gateway = processes.gateway;
  log(
    `Processes: gateway peak RSS ${fixed(run.gatewayPeakMb, 1)} MB (VmHWM ${fixed(gateway.hwmMb, 1)} MB, ${run.env.gateway.service.restarts} restarts` +
      `${gateway.children.length ? `; its log worker VmHWM ${gateway.children.map((child) => fixed(child.hwmMb, 1)).join(' + ')} MB` : ''}), ` +
      `peer VmHWM ${fixed(processes.peer.hwmMb, 1)} MB, emulators VmHWM ${fixed(processes.emulators.hwmMb, 1)} MB`,
  );
  if (soak) {
    log(
      `Soak (${soak.kind} c=50) ${soak.seconds} s: ${count(soak.rps)} req/s, RSS ${fixed(soak.startRssMb, 1)} → ${fixed(soak.endRssMb, 1)} MB (max ${fixed(soak.maxRssMb, 1)}, growth ${fixed(soak.growthMb, 1)} MB)`,
    );
  }
  log('');
  log('Targets (informational; they never fail the run)');
  log(targetTable(run.targets));
  if (run.notes.length) {
    log('');
    for (const note of run.notes) log(`Note: ${note}`);
  }
  log('');
  log(`JSON: ${path.relative(process.cwd(), jsonFile) || jsonFile}`);
  log(`Done in ${run.elapsed().toFixed(1)} s.`);
}

export function printStageReport(run: StageRun, jsonFile: string): void {
  log('');
  printSemanticLookup(run.semanticLookup);
  log('');
  log('Targets (informational; they never fail the run)');
  log(targetTable(run.targets));
  for (const note of run.notes) log(`Note: ${note}`);
  log('');
  log(`JSON: ${path.relative(process.cwd(), jsonFile) || jsonFile}`);
  log(`Done in ${run.elapsed().toFixed(1)} s.`);
}

function printSemanticLookup(result: SemanticLookupResult): void {
  const { nearDuplicateCosine: near } = result;
  log(
    `Semantic lookup cost against cache size (one scope of ${result.dimensions}-dimension embeddings of one topic; per size ${result.queriesPerKind * 3} sequential lookups: ` +
      `near-duplicates at cosine ${near.from}–${near.to} of any entry and of the newest ${count(result.newestWindow)}, and unrelated queries; ` +
      `items read = what the Queries returned, at most ${result.maxItemsPerLookup}; CPU = this process ÷ lookups; emu = the DynamoDB emulator's process; ` +
      `recall = near-duplicates answered with their own entry at threshold ${result.similarityThreshold}; fill = adding the entries since the previous size)`,
  );
  log(semanticLookupTable(result));
}

function coldHitLine(cold: Run['coldHits']): string {
  const { latencyMs: latency } = cold;
  return (
    `Cache hit from DynamoDB (first level cold; c=1, ${cold.count} distinct entries, one read each): p50 ${ms(latency.p50)} ms, p90 ${ms(latency.p90)} ms, p99 ${ms(latency.p99)} ms; ` +
    `gateway CPU ${fixed(cold.cpuUsPerHit, 0)} µs/hit (log worker ${fixed(cold.childrenUsPerHit, 0)}, emulators ${fixed(cold.emulatorsUsPerHit, 0)})` +
    (cold.failures || cold.notHits ? `; ${cold.failures} failed, ${cold.notHits} not hits` : '')
  );
}

export function gitInfo(): { commit?: string; dirty?: boolean } {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  if (head.status !== 0) return {};
  const status = spawnSync('git', ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' });
  return { commit: head.stdout.trim(), dirty: status.status === 0 ? status.stdout.trim().length > 0 : undefined };
}

function timestamp(date: Date): string {
  return date
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}
