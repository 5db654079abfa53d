/**
 * The gateway benchmark (`npm run bench`): the local gateway as a user runs it, next to a direct
 * call to the upstream and the published @portkey-ai/gateway package, against one fast fake
 * OpenAI-compatible upstream. Everything measured runs in a process of its own: the fake upstreams,
 * the emulators, the gateway, the peer, and the load generator (`wrk`, or the Node client in
 * bench/client.ts when wrk is not installed).
 *
 *   npm run bench                      full run: every scenario, median of three runs each
 *   npm run bench -- --quick           one short run per scenario, fewer scenarios (< 1 minute)
 *   npm run bench -- --soak 300        also a 300 s c=50 run sampling the gateway's RSS
 *                    [--soak-kind chat|stream|fallback|anthropic|…]   what the soak sends (default chat)
 *   npm run bench -- --json out.json   where the JSON report goes (default .bench/<timestamp>.json)
 *   npm run bench -- --no-build        use the existing .build/ instead of building first
 *   npm run bench -- --only semantic-lookup   that stage alone (no gateway, no build); with --quick, its quick sizes
 *
 * Prints the tables and writes the JSON report. The targets are shown (✓/✗) but never change the
 * exit code: it is non-zero only when the benchmark itself fails.
 *
 * The scenarios are the modules in bench/scenarios/; bench/runner.ts measures them, bench/report.ts
 * prints and writes what came out. Stages that are no load run have modules of their own
 * (bench/cache-cold.ts, bench/ttfc.ts, bench/semantic-lookup.ts).
 */
import '../lib/local/sdk-node-notice';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { measureColdHits } from './cache-cold';
import { measureWebhookLatency } from './guardrail-webhook';
import { measureRateLimitWrites } from './rate-limit-writes';
import { STAND_IN_NICE, processesAtEnd, startEnvironment, stopEnvironment } from './environment';
import { measureBundles } from './lib/bundles';
import { hasWrk, wrkVersion } from './lib/load';
import { busyShare, machineCpu } from './lib/proc';
import { killAll, repoRoot, sleep } from './lib/services';
import { gitInfo, log, printReport, printStageReport, resultNotes, writeJsonReport, writeStageJsonReport, type Machine } from './report';
import { Runner, settingsFor } from './runner';
import { plan as planFor, soakable } from './scenarios';
import { peerCacheNote, probePeerCache } from './scenarios/cache-hit';
import { measureSemanticLookup } from './semantic-lookup';
import { soak } from './soak';
import { evaluateTargets, semanticLookupTarget } from './targets';
import { measureTtfcAll } from './ttfc';

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    soak: { type: 'string' },
    'soak-kind': { type: 'string', default: 'chat' },
    json: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    only: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});

/** Stages `--only` can run by themselves: those that need none of the processes the others share. */
const alone = ['semantic-lookup'];
const soakKinds = soakable.map((scenario) => scenario.kind);
if (flags.help) {
  process.stdout.write(
    `Usage: npm run bench -- [--quick] [--soak <seconds> [--soak-kind ${soakKinds.join('|')}]] [--json <file>] [--no-build] [--only ${alone.join('|')}]\n`,
  );
  process.exit(0);
}
if (flags.only !== undefined && !alone.includes(flags.only)) throw new Error(`--only must be ${alone.join(' or ')}, got ${flags.only}`);
if (flags.only !== undefined && flags.soak !== undefined) throw new Error('--soak needs the gateway, which --only leaves out');

const quick = flags.quick === true;
const soakSec = flags.soak === undefined ? 0 : Number(flags.soak);
if (!Number.isFinite(soakSec) || soakSec < 0) throw new Error(`--soak needs a number of seconds, got ${flags.soak}`);
const soakScenario = soakable.find((scenario) => scenario.kind === flags['soak-kind']);
if (!soakScenario) throw new Error(`--soak-kind must be ${soakKinds.slice(0, -1).join(', ')} or ${soakKinds.at(-1)}, got ${flags['soak-kind']}`);
const settings = settingsFor(quick);
const semanticSettings = { sizes: settings.semanticSizes, queriesPerKind: settings.semanticQueriesPerKind };

async function main(): Promise<void> {
  const startedAt = new Date();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const cpus = os.cpus();
  const machine: Machine = {
    cpuModel: cpus[0]?.model?.trim(),
    cores: cpus.length,
    memoryGb: Math.round(os.totalmem() / 1e8) / 10,
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
  const git = gitInfo();
  const mode = `${quick ? 'quick' : 'full'}${flags.only ? `, ${flags.only} only` : ''}`;
  log(
    `Gateway benchmark (${mode}) — ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}, commit ${git.commit?.slice(0, 12) ?? 'unknown'}${git.dirty ? ' (uncommitted changes)' : ''}`,
  );

  const notes: string[] = [];
  if (flags.only) {
    const busyBeforePct = await machineBusyPct(notes);
    const workDir = makeWorkDir();
    const semanticLookup = await measureSemanticLookup(semanticSettings, workDir, log);
    const run = {
      stage: flags.only,
      quick,
      startedAt,
      elapsed,
      machine,
      busyBeforePct,
      git,
      settings,
      semanticLookup,
      targets: [semanticLookupTarget(semanticLookup)],
      notes,
    };
    printStageReport(run, writeStageJsonReport(run, flags.json));
    return;
  }

  const generator = hasWrk() ? `${wrkVersion() ?? 'wrk'} (one thread per 25 connections)` : 'Node fallback client (bench/client.ts)';
  if (!hasWrk()) {
    const note =
      'wrk is not installed (apt-get install -y wrk): using the Node fallback load generator, which needs more CPU on the cores the gateway uses, so throughput and latency are pessimistic.';
    notes.push(note);
    log(`NOTE: ${note}`);
  }
  log(`Load generator: ${generator}`);

  if (!flags['no-build']) {
    log('Building (node scripts/build.mjs --local) …');
    const build = spawnSync(process.execPath, ['scripts/build.mjs', '--local'], { cwd: repoRoot, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`the build failed:\n${build.stdout}\n${build.stderr}`);
  }

  log(`Bundles: cold import, median of ${settings.bundleRuns} fresh processes …`);
  const bundles = measureBundles(settings.bundleRuns);

  const busyBeforePct = await machineBusyPct(notes);
  const workDir = makeWorkDir();
  const env = await startEnvironment(workDir, log);
  notes.push(
    STAND_IN_NICE > 0
      ? `The emulators and the log worker (the local stand-ins for DynamoDB, SQS, S3 and the log pipeline, which run on other machines on AWS) ran at nice ${STAND_IN_NICE}: they took the CPU the measured systems left, and their CPU per request is counted after they drained (the emu and child columns). BENCH_STAND_IN_NICE=0 runs them at the gateway's priority.`
      : "The emulators and the log worker ran at the gateway's priority (BENCH_STAND_IN_NICE=0), competing with it for the two cores.",
  );
  log(
    `Ready after ${elapsed().toFixed(1)} s: gateway ${env.gateway.url}, peer @portkey-ai/gateway ${env.peer.version} ${env.peer.url}, upstream ${env.upstream.url}`,
  );

  const runner = new Runner(env, settings, log);
  const plan = planFor(quick);
  await runner.verifyPlan(plan);
  await runner.warmUpAll();
  const outcomes = await runner.measurePlan(plan);
  const rateLimitWrites = await measureRateLimitWrites(env);
  const ttfc = await measureTtfcAll(runner, outcomes);
  const coldHits = await measureColdHits(runner, settings.coldHits);
  const webhookLatency = await measureWebhookLatency(runner, quick ? 100 : 300);
  const peerCache = await probePeerCache(env);

  // Peak RSS under load: the largest sample of any run, or VmHWM if higher (a restarted gateway's
  // earlier peak is only known from the samples).
  const processes = processesAtEnd(env);
  const gatewayPeakMb = Math.max(processes.gateway.hwmMb ?? 0, ...outcomes.filter((o) => o.system === 'ours').map((o) => o.rssMaxMb ?? 0)) || undefined;

  const soakResult = soakSec > 0 ? await soak(runner, soakSec, soakScenario!) : undefined;
  const semanticLookup = await measureSemanticLookup(semanticSettings, workDir, log);

  const measured = {
    outcomes,
    ttfc,
    coldHits,
    webhookLatency,
    rateLimitWrites,
    peerCache,
    bundles,
    gatewayPeakMb,
    soak: soakResult,
    restarts: runner.restarts,
    semanticLookup,
  };
  const targets = evaluateTargets(measured);
  notes.push(...resultNotes(plan, outcomes), peerCacheNote(peerCache));
  const run = { ...measured, quick, startedAt, elapsed, machine, busyBeforePct, git, env, settings, processes, targets, notes };
  const jsonFile = writeJsonReport(run, flags.json);
  printReport(run, jsonFile);

  await stopEnvironment(env);
}

/** Other work on the machine skews every number: the share of all cores busy before the benchmark, noted when high. */
async function machineBusyPct(notes: string[]): Promise<number> {
  const idleBefore = machineCpu();
  await sleep(500);
  const busyBeforePct = (busyShare(idleBefore, machineCpu()) ?? 0) * 100;
  if (busyBeforePct > 15) {
    const note = `the machine was ${busyBeforePct.toFixed(0)}% busy (all cores) before the benchmark started its processes: something else is running, and the numbers are skewed by it.`;
    notes.push(note);
    log(`WARNING: ${note}`);
  }
  return busyBeforePct;
}

/** A directory for the processes' logs and data, removed (and every process ended) however the run ends. */
function makeWorkDir(): string {
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'llm-gateway-bench-'));
  const cleanup = () => {
    killAll();
    rmSync(workDir, { recursive: true, force: true });
  };
  process.once('exit', cleanup);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      cleanup();
      process.exit(130);
    });
  }
  return workDir;
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`\nbenchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
