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
 *                    [--soak-kind chat|stream|fallback|anthropic]   what the soak sends (default chat)
 *   npm run bench -- --json out.json   where the JSON report goes (default .bench/<timestamp>.json)
 *   npm run bench -- --no-build        use the existing .build/ instead of building first
 *
 * Prints the tables and writes the JSON report. The targets are shown (✓/✗) but never change the
 * exit code: it is non-zero only when the benchmark itself fails.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { measureBundles, type BundleResult } from './lib/bundles';
import { hasWrk, runClient, runLoad, runNodeLoad, wrkVersion, type HttpTarget, type LoadResult } from './lib/load';
import { busyShare, cpuSeconds, descendants, machineCpu, memory, reapedChildrenCpuSeconds, Sampler, totalCpuSeconds, type Sample } from './lib/proc';
import { count, fixed, mark, ms, signedMs, table, type Cell } from './lib/table';
import {
  killAll,
  repoRoot,
  sleep,
  startEmulators,
  startFakeAnthropic,
  startFakeUpstream,
  startGateway,
  startPeer,
  type Service,
} from './lib/services';

// ---------------------------------------------------------------------------------------------
// Settings

const { values: flags } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    soak: { type: 'string' },
    'soak-kind': { type: 'string', default: 'chat' },
    json: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
});

if (flags.help) {
  process.stdout.write('Usage: npm run bench -- [--quick] [--soak <seconds> [--soak-kind chat|stream|fallback|anthropic]] [--json <file>] [--no-build]\n');
  process.exit(0);
}

const quick = flags.quick === true;
const soakSec = flags.soak === undefined ? 0 : Number(flags.soak);
if (!Number.isFinite(soakSec) || soakSec < 0) throw new Error(`--soak needs a number of seconds, got ${flags.soak}`);
const soakKind = flags['soak-kind'] as 'chat' | 'stream' | 'fallback' | 'anthropic';
if (!['chat', 'stream', 'fallback', 'anthropic'].includes(soakKind)) throw new Error(`--soak-kind must be chat, stream, fallback or anthropic, got ${soakKind}`);

const settings = quick
  ? { rounds: 1, durationSec: 2, prewarmSec: 0, warmupSec: 0.5, restartWarmupSec: 0.5, ttfcCount: 40, ttfcWarmup: 10, bundleRuns: 3 }
  : { rounds: 3, durationSec: 5, prewarmSec: 1, warmupSec: 3, restartWarmupSec: 1, ttfcCount: 300, ttfcWarmup: 30, bundleRuns: 7 };

/** Content chunks in every default stream of the fake upstream. */
const STREAM_CHUNKS = 15;
const SAMPLE_INTERVAL_MS = 100;
const CORES = os.cpus().length;
/** Sent by every client as the provider key; the fakes accept any. */
const PROVIDER_KEY = 'sk-bench-not-a-real-key';
const ADMIN_KEY = 'gwk_bench_admin_key_for_the_local_benchmark_0001';

type SystemName = 'direct' | 'ours' | 'peer';
type Kind = 'chat' | 'stream' | 'fallback' | 'anthropic' | 'anthropic-stream';

interface Scenario {
  id: string;
  label: string;
  kind: Kind;
  connections: number;
  systems: SystemName[];
  /** The scenario whose `direct` result is the baseline for `added` latency (default: this one). */
  baseline?: string;
}

function scenarios(): Scenario[] {
  const all: SystemName[] = ['direct', 'ours', 'peer'];
  const concurrencies = quick ? [1, 50] : [1, 10, 50];
  const list: Scenario[] = [];
  for (const c of concurrencies) list.push({ id: `chat-c${c}`, label: `chat c=${c}`, kind: 'chat', connections: c, systems: all });
  for (const c of concurrencies) list.push({ id: `stream-c${c}`, label: `stream c=${c}`, kind: 'stream', connections: c, systems: all });
  // A reference for the c=10 scenarios below when the quick run has no chat c=10.
  if (quick) list.push({ id: 'chat-c10', label: 'chat c=10', kind: 'chat', connections: 10, systems: ['direct'] });
  list.push({ id: 'fallback-c10', label: 'fallback c=10', kind: 'fallback', connections: 10, systems: ['ours'], baseline: 'chat-c10' });
  list.push({ id: 'anthropic-c10', label: 'anthropic c=10', kind: 'anthropic', connections: 10, systems: ['direct', 'ours'] });
  if (!quick) list.push({ id: 'anthropic-stream-c10', label: 'anthropic stream c=10', kind: 'anthropic-stream', connections: 10, systems: ['direct', 'ours'] });
  return list;
}

// ---------------------------------------------------------------------------------------------
// What is running

interface Env {
  workDir: string;
  upstream: { service: Service; url: string };
  paced: { service: Service; url: string };
  anthropic: { service: Service; url: string };
  emulators: { service: Service; endpoints: Record<string, string> };
  gateway: { service: Service; url: string };
  peer: { service: Service; url: string; version: string };
  memberKey: string;
}

const CHAT_BODY = {
  model: 'gpt-4o-mini',
  messages: [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'Hello there, please benchmark me.' },
  ],
};
const CLAUDE_MODEL = 'claude-sonnet-4-20250514';

function chatBody(stream: boolean, model = CHAT_BODY.model): string {
  return JSON.stringify(stream ? { ...CHAT_BODY, model, stream: true } : { ...CHAT_BODY, model });
}

/** The HTTP request a system gets for a scenario. `upstreamBase` overrides where OpenAI traffic goes (the paced fake). */
function httpTarget(env: Env, system: SystemName, kind: Kind, upstreamBase?: string): HttpTarget {
  const json = { 'content-type': 'application/json' };
  const stream = kind === 'stream' || kind === 'anthropic-stream';
  if (kind === 'anthropic' || kind === 'anthropic-stream') {
    if (system === 'direct') {
      const body = { model: CLAUDE_MODEL, max_tokens: 256, system: CHAT_BODY.messages[0].content, messages: [CHAT_BODY.messages[1]], ...(stream ? { stream: true } : {}) };
      return { url: `${env.anthropic.url}/messages`, headers: { ...json, 'x-api-key': PROVIDER_KEY, 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) };
    }
    if (system === 'ours') {
      return {
        url: `${env.gateway.url}/chat/completions`,
        headers: { ...json, authorization: `Bearer ${PROVIDER_KEY}`, 'x-gateway-api-key': env.memberKey, 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': env.anthropic.url },
        body: chatBody(stream, CLAUDE_MODEL),
      };
    }
    throw new Error('the Anthropic scenarios are not run on the peer');
  }
  const base = upstreamBase ?? env.upstream.url;
  const body = chatBody(stream);
  const auth = { authorization: `Bearer ${PROVIDER_KEY}` };
  if (system === 'direct') return { url: `${base}/v1/chat/completions`, headers: { ...json, ...auth }, body };
  if (system === 'peer') return { url: `${env.peer.url}/chat/completions`, headers: { ...json, ...auth, 'x-portkey-provider': 'openai', 'x-portkey-custom-host': `${base}/v1` }, body };
  const headers: Record<string, string> = { ...json, ...auth, 'x-gateway-api-key': env.memberKey };
  if (kind === 'fallback') {
    // Two targets; the first answers. Its base URL comes from GATEWAY_PROVIDER_BASE_URLS.
    headers['x-gateway-config'] = JSON.stringify({
      strategy: { mode: 'fallback' },
      targets: [{ provider: 'openai' }, { provider: 'openai', custom_host: `${base}/backup/v1` }],
    });
  } else {
    headers['x-gateway-provider'] = 'openai';
    if (upstreamBase) headers['x-gateway-custom-host'] = `${upstreamBase}/v1`;
  }
  return { url: `${env.gateway.url}/chat/completions`, headers, body };
}

/** One request through the system, checked, so a misrouted system is never measured. */
async function verify(target: HttpTarget, kind: Kind, what: string): Promise<void> {
  const response = await fetch(target.url, { method: 'POST', headers: target.headers, body: target.body });
  const text = await response.text();
  const fail = (why: string) => new Error(`${what}: ${why}\n${response.status} ${text.slice(0, 600)}`);
  if (response.status !== 200) throw fail('expected 200');
  if (kind === 'stream') {
    const contentEvents = text.split('\n').filter((line) => line.startsWith('data:') && line.includes('"content":"') && !line.includes('"content":""'));
    if (contentEvents.length < STREAM_CHUNKS || !text.includes('data: [DONE]')) throw fail(`expected ${STREAM_CHUNKS} content chunks and [DONE], got ${contentEvents.length}`);
  } else if (kind === 'anthropic-stream') {
    if (!text.includes('echo:') && !text.includes('"text":"echo')) {
      // The text arrives in pieces; check the stream finished instead.
      if (!text.includes('[DONE]') && !text.includes('message_stop')) throw fail('the stream did not finish');
    }
  } else {
    const json = JSON.parse(text) as { choices?: { message?: { content?: string } }[]; content?: { text?: string }[] };
    const content = json.choices?.[0]?.message?.content ?? json.content?.[0]?.text ?? '';
    if (!content.startsWith('echo: ')) throw fail("expected the fake upstream's echo answer");
    if (kind === 'fallback' && response.headers.get('x-gateway-last-used-option-index') !== 'config.targets[0]') {
      throw fail(`expected the first target to answer, got ${response.headers.get('x-gateway-last-used-option-index')}`);
    }
  }
}

async function createMemberKey(gatewayUrl: string): Promise<string> {
  const response = await fetch(`${gatewayUrl}/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-gateway-api-key': ADMIN_KEY },
    body: JSON.stringify({ name: 'benchmark', role: 'member' }),
  });
  const json = (await response.json()) as { key?: string };
  if (response.status !== 200 || !json.key) throw new Error(`creating the benchmark's gateway key failed: ${response.status} ${JSON.stringify(json)}`);
  return json.key;
}

// ---------------------------------------------------------------------------------------------
// Measuring

interface RunResult extends LoadResult {
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

interface Outcome {
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

function median(values: (number | undefined)[]): number | undefined {
  const sorted = values.filter((value): value is number => value !== undefined && Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function systemService(env: Env, system: SystemName, kind: Kind): Service {
  if (system === 'ours') return env.gateway.service;
  if (system === 'peer') return env.peer.service;
  return upstreamService(env, kind);
}

/** Every process the benchmark started that is still meant to run (the load generator aside). */
function allServices(env: Env): Service[] {
  return [env.upstream.service, env.paced.service, env.anthropic.service, env.emulators.service, env.gateway.service, env.peer.service];
}

function upstreamService(env: Env, kind: Kind): Service {
  return kind === 'anthropic' || kind === 'anthropic-stream' ? env.anthropic.service : env.upstream.service;
}

const perRequestUs = (seconds: number | undefined, requests: number) => (seconds === undefined || requests === 0 ? undefined : (seconds * 1e6) / requests);
const delta = (after: number | undefined, before: number | undefined) => (after === undefined || before === undefined ? undefined : after - before);
const pct = (seconds: number | undefined, wall: number) => (seconds === undefined ? undefined : (seconds / wall) * 100);

const notes: string[] = [];
const restarts: { system: SystemName; scenario: string; status: string; stderrTail: string }[] = [];

/** Starts the system's process again if it died (and warms the new one up); returns how it ended. */
async function restartIfDown(env: Env, system: SystemName, context: string): Promise<string | undefined> {
  if (system === 'direct') return undefined;
  const service = systemService(env, system, 'chat');
  // The exit may not have been seen yet when the load generator has only just closed its connections.
  await sleep(100);
  if (service.alive()) return undefined;
  const status = service.exitStatus() ?? 'exited';
  const stderrTail = service.stderrTail(1_500);
  restarts.push({ system, scenario: context, status, stderrTail });
  const lines = stderrTail.trim().split('\n');
  const reason = lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.find((line) => /error/i.test(line)) ?? '';
  log(`  ! ${system} process ended (${status}) after ${context}${reason ? `: ${reason.trim()}` : ''}; starting it again`);
  await service.ensureRunning();
  await warmUp(env, system, settings.restartWarmupSec);
  return status;
}

async function measure(env: Env, scenario: Scenario, system: SystemName, round: number, durationSec: number): Promise<RunResult> {
  const target = httpTarget(env, system, scenario.kind);
  const service = systemService(env, system, scenario.kind);
  const upstream = upstreamService(env, scenario.kind);
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
    load = await runLoad(target, { connections: scenario.connections, durationSec, workDir: env.workDir });
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
  const known = (systemCpu ?? 0) + (delta(atEnd.children, before.children) ?? 0) + (delta(atEnd.others, before.others) ?? 0) + (loadgenCpu ?? 0) + (atEnd.self.user + atEnd.self.system) / 1e6;
  const machineBusy = busyShare(before.machine, atEnd.machine);
  const otherPct = machineBusy === undefined ? undefined : Math.max(0, machineBusy * CORES * 100 - (known / wall) * 100);
  // The log worker and the emulators ingest what the run logged; if they lag, their CPU per request
  // is read once they are done, so lagging work is counted rather than left out.
  const logDrainMs = system === 'ours' ? await waitUntilIdle([...children, ...(env.emulators.service.pid === undefined ? [] : [env.emulators.service.pid])]) : undefined;
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
  result.exited = await restartIfDown(env, system, scenario.label);
  return result;
}

/**
 * Waits until the processes stop using CPU (no tick for longer than the local log sink's flush
 * interval), up to 30 s; returns how long that took, ms. The sampling window is not counted.
 */
async function waitUntilIdle(pids: number[]): Promise<number> {
  const started = performance.now();
  const quietMs = 300;
  let last = totalCpuSeconds(pids);
  let quietSince = performance.now();
  while (performance.now() - started < 30_000) {
    await sleep(50);
    const now = totalCpuSeconds(pids);
    if (now !== last) {
      last = now;
      quietSince = performance.now();
    } else if (performance.now() - quietSince >= quietMs) {
      return Math.max(0, quietSince - started);
    }
  }
  return performance.now() - started;
}

/**
 * A short unmeasured load, so JIT and connection pools are warm. It uses the Node client, which
 * lets the requests in flight finish when the time is up (wrk drops them).
 */
async function warmUp(env: Env, system: SystemName, seconds: number, kinds: Kind[] = ['chat', 'stream'], connections = 10): Promise<void> {
  // The kinds run side by side (one client process each), which halves the time warm-ups take.
  const each = Math.max(1, Math.round(connections / kinds.length));
  await Promise.all(
    kinds.map(async (kind) => {
      const result = await runNodeLoad(httpTarget(env, system, kind), { connections: each, durationSec: seconds });
      if (result.socketErrors || result.badStatus) log(`  ! warm-up of ${system} (${kind}): ${result.socketErrors} socket errors, ${result.badStatus} bad statuses`);
    }),
  );
}

function summarise(scenario: Scenario, system: SystemName, runs: RunResult[]): Outcome {
  const pick = <K extends keyof RunResult['cpuPct']>(key: K) => median(runs.map((run) => run.cpuPct[key]));
  return {
    scenario: scenario.id,
    label: scenario.label,
    system,
    connections: scenario.connections,
    runs,
    median: {
      rps: median(runs.map((run) => run.rps))!,
      p50: median(runs.map((run) => run.p50))!,
      p90: median(runs.map((run) => run.p90))!,
      p99: median(runs.map((run) => run.p99))!,
      cpuUsPerReq: median(runs.map((run) => run.cpuUsPerReq)),
      childrenUsPerReq: median(runs.map((run) => run.childrenUsPerReq)),
      emulatorsUsPerReq: median(runs.map((run) => run.emulatorsUsPerReq)),
      logDrainMs: median(runs.map((run) => run.logDrainMs)),
      upstreamUsPerReq: median(runs.map((run) => run.upstreamUsPerReq)),
      cpuPct: { system: pick('system'), children: pick('children'), upstream: pick('upstream'), emulators: pick('emulators'), loadgen: pick('loadgen'), other: pick('other'), machineBusyOfAllCores: pick('machineBusyOfAllCores') },
    },
    rssMaxMb: Math.max(0, ...runs.map((run) => run.rssMaxMb ?? 0)) || undefined,
    childrenRssMaxMb: Math.max(0, ...runs.map((run) => run.childrenRssMaxMb ?? 0)) || undefined,
    exits: runs.filter((run) => run.exited).length,
    socketErrors: runs.reduce((sum, run) => sum + run.socketErrors, 0),
    badStatus: runs.reduce((sum, run) => sum + run.badStatus, 0),
  };
}

interface TtfcResult {
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

async function measureTtfc(env: Env, system: SystemName): Promise<TtfcResult> {
  const target = httpTarget(env, system, 'stream', env.paced.url);
  await verify(target, 'stream', `${system} (paced upstream)`);
  const pid = system === 'direct' ? env.paced.service.pid : systemService(env, system, 'stream').pid;
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
  await restartIfDown(env, system, 'ttfc');
  const requests = settings.ttfcCount;
  return { system, ...result, cpuUsPerReq: perRequestUs(cpu, requests), childrenUsPerReq: children.length ? perRequestUs(childrenCpu, requests) : undefined };
}

interface SoakResult {
  kind: Kind;
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

async function soak(env: Env, seconds: number, kind: Kind): Promise<SoakResult> {
  log(`\nSoak: ${kind} c=50 on the gateway for ${seconds} s, RSS every 5 s`);
  const pid = env.gateway.service.pid;
  const sampler = new Sampler(pid, 5_000, (sample) => log(`  t=${sample.t.toFixed(0).padStart(4)} s  RSS ${sample.rssMb.toFixed(1)} MB`));
  let load: LoadResult;
  try {
    load = await runLoad(httpTarget(env, 'ours', kind), { connections: 50, durationSec: seconds, workDir: env.workDir });
  } finally {
    sampler.stop();
  }
  const hwm = memory(pid)?.hwmMb;
  const rss = sampler.samples.map((sample) => sample.rssMb);
  const slice = (from: number, to: number) => rss.slice(Math.floor(rss.length * from), Math.max(Math.floor(rss.length * from) + 1, Math.floor(rss.length * to)));
  const mean = (values: number[]) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : undefined);
  const early = mean(slice(0.2, 0.3));
  const late = mean(slice(0.9, 1));
  const exited = await restartIfDown(env, 'ours', 'soak');
  return {
    kind,
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

// ---------------------------------------------------------------------------------------------
// Output

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

interface Target {
  name: string;
  goal: string;
  value: string;
  pass: boolean | undefined;
}

function evaluateTargets(outcomes: Outcome[], ttfc: TtfcResult[], bundles: BundleResult[], gatewayPeakMb: number | undefined, soakResult: SoakResult | undefined): Target[] {
  const find = (scenario: string, system: SystemName) => outcomes.find((o) => o.scenario === scenario && o.system === system);
  const targets: Target[] = [];
  const check = (name: string, goal: string, value: number | undefined, limit: number, higherIsBetter: boolean, format: (v: number) => string) => {
    targets.push({ name, goal, value: value === undefined ? 'n/a' : format(value), pass: value === undefined ? undefined : higherIsBetter ? value >= limit : value <= limit });
  };
  const chat1 = find('chat-c1', 'ours');
  check('latency added, chat c=1, p50', '≤ 0.5 ms', chat1?.addedP50, 0.5, false, (v) => `${ms(v)} ms`);
  check('latency added, chat c=1, p99', '≤ 3 ms', chat1?.addedP99, 3, false, (v) => `${ms(v)} ms`);
  const withChildren = (children: number | undefined) => (v: number) => `${v.toFixed(0)} µs${children !== undefined ? ` (+${children.toFixed(0)} log worker)` : ''}`;
  const chat50 = find('chat-c50', 'ours');
  const stream50 = find('stream-c50', 'ours');
  check('gateway CPU per chat request (c=50)', '≤ 300 µs', chat50?.median.cpuUsPerReq, 300, false, withChildren(chat50?.median.childrenUsPerReq));
  check(`gateway CPU per streamed request, ${STREAM_CHUNKS} chunks (c=50)`, '≤ 450 µs', stream50?.median.cpuUsPerReq, 450, false, withChildren(stream50?.median.childrenUsPerReq));
  const ttfcOurs = ttfc.find((t) => t.system === 'ours');
  check(`gateway CPU per streamed request, ${STREAM_CHUNKS} chunks paced (c=1)`, '≤ 450 µs', ttfcOurs?.cpuUsPerReq, 450, false, withChildren(ttfcOurs?.childrenUsPerReq));
  for (const [scenario, floor, what] of [
    ['chat-c50', 2500, 'chat'],
    ['stream-c50', 1000, 'streamed'],
  ] as const) {
    const ours = find(scenario, 'ours');
    const peer = find(scenario, 'peer');
    check(`throughput, ${what} c=50`, `≥ ${floor.toLocaleString('en-US')} req/s`, ours?.median.rps, floor, true, (v) => `${count(v)} req/s`);
    check(`throughput vs peer, ${what} c=50`, '≥ 2.5×', ours && peer ? ours.median.rps / peer.median.rps : undefined, 2.5, true, (v) => `${v.toFixed(2)}×`);
  }
  check('streaming adds to the first chunk (c=1, p50)', '≤ 1 ms', ttfcOurs?.addedFirstChunkP50, 1, false, (v) => `${ms(v)} ms`);
  for (const bundle of bundles.filter((b) => b.inference)) {
    check(`bundle ${bundle.name}: size`, '≤ 600 KB', bundle.bytes / 1000, 600, false, (v) => `${v.toFixed(0)} KB`);
    check(`bundle ${bundle.name}: cold import`, '≤ 90 ms', bundle.importMs, 90, false, (v) => `${v.toFixed(1)} ms`);
  }
  check('gateway peak RSS under load', '≤ 150 MB', gatewayPeakMb, 150, false, (v) => `${v.toFixed(1)} MB`);
  if (soakResult) {
    check(`gateway RSS growth over the ${soakResult.seconds} s ${soakResult.kind} soak`, '≤ 10 MB (flat)', soakResult.growthMb, 10, false, (v) => `${v >= 0 ? '+' : ''}${v.toFixed(1)} MB`);
    check('gateway peak RSS during the soak', '≤ 150 MB', soakResult.maxRssMb, 150, false, (v) => `${v.toFixed(1)} MB`);
  }
  const exits = outcomes.reduce((sum, o) => sum + (o.system === 'ours' ? o.exits : 0), 0) + restarts.filter((r) => r.system === 'ours' && (r.scenario === 'ttfc' || r.scenario === 'soak')).length;
  targets.push({ name: 'gateway stayed up (clients disconnecting at the end of each run)', goal: '0 exits', value: `${exits} exits`, pass: exits === 0 });
  return targets;
}

function mainTable(outcomes: Outcome[]): string {
  const rows: Cell[][] = outcomes.map((o) => {
    const problems = [o.exits ? `exited ×${o.exits}` : '', o.socketErrors ? `${o.socketErrors} socket errors` : '', o.badStatus ? `${o.badStatus} bad status` : ''].filter(Boolean).join(', ');
    return [
      o.label,
      o.system,
      count(o.median.rps),
      ms(o.median.p50),
      ms(o.median.p90),
      ms(o.median.p99),
      o.system === 'direct' ? undefined : signedMs(o.addedP50),
      o.system === 'direct' ? undefined : signedMs(o.addedP99),
      ms(o.ttfcP50),
      o.system === 'direct' ? undefined : fixed(o.median.cpuUsPerReq, 0),
      o.system === 'direct' ? undefined : fixed(o.median.childrenUsPerReq, 0),
      o.system === 'ours' ? fixed(o.median.emulatorsUsPerReq, 0) : undefined,
      o.system === 'direct' ? undefined : fixed(o.rssMaxMb, 1),
      problems || undefined,
    ];
  });
  return table(
    [
      { title: 'scenario' },
      { title: 'system', right: false },
      { title: 'req/s' },
      { title: 'p50 ms' },
      { title: 'p90 ms' },
      { title: 'p99 ms' },
      { title: '+p50 ms' },
      { title: '+p99 ms' },
      { title: 'TTFC ms' },
      { title: 'CPU µs/req' },
      { title: 'child µs/req' },
      { title: 'emu µs/req' },
      { title: 'RSS MB' },
      { title: 'problems', right: false },
    ],
    rows,
  );
}

function cpuTable(outcomes: Outcome[]): string {
  return table(
    [{ title: 'scenario' }, { title: 'system', right: false }, { title: 'system %' }, { title: 'child %' }, { title: 'upstream %' }, { title: 'emulators %' }, { title: 'load gen %' }, { title: 'other %' }, { title: 'machine busy %' }, { title: 'upstream µs/req' }, { title: 'log drain ms' }],
    outcomes.map((o) => [
      o.label,
      o.system,
      o.system === 'direct' ? undefined : fixed(o.median.cpuPct.system, 0),
      fixed(o.median.cpuPct.children, 0),
      fixed(o.median.cpuPct.upstream, 0),
      fixed(o.median.cpuPct.emulators, 0),
      fixed(o.median.cpuPct.loadgen, 0),
      fixed(o.median.cpuPct.other, 0),
      fixed(o.median.cpuPct.machineBusyOfAllCores, 0),
      fixed(o.median.upstreamUsPerReq, 0),
      fixed(o.median.logDrainMs, 0),
    ]),
  );
}

function ttfcTable(results: TtfcResult[]): string {
  return table(
    [{ title: 'system' }, { title: 'headers p50' }, { title: 'first chunk p50' }, { title: 'p90' }, { title: 'p99' }, { title: 'last byte p50' }, { title: '+first chunk p50' }, { title: 'CPU µs/req' }, { title: 'child µs/req' }, { title: 'failures' }],
    results.map((r) => [
      r.system,
      ms(r.headers.p50),
      ms(r.firstChunk.p50),
      ms(r.firstChunk.p90),
      ms(r.firstChunk.p99),
      ms(r.total.p50),
      r.system === 'direct' ? undefined : signedMs(r.addedFirstChunkP50),
      r.system === 'direct' ? undefined : fixed(r.cpuUsPerReq, 0),
      r.system === 'direct' ? undefined : fixed(r.childrenUsPerReq, 0),
      r.failures,
    ]),
  );
}

function bundleTable(bundles: BundleResult[]): string {
  return table(
    [{ title: 'bundle' }, { title: 'inference', right: false }, { title: 'size KB' }, { title: 'zip KB' }, { title: 'cold import ms' }, { title: 'process ms' }, { title: 'targets', right: false }],
    bundles.map((b) => [
      b.name,
      b.inference ? 'yes' : 'no',
      fixed(b.bytes / 1000, 1),
      b.zipBytes === undefined ? undefined : fixed(b.zipBytes / 1000, 1),
      fixed(b.importMs, 1),
      fixed(b.processMs, 1),
      b.error ? `import failed` : b.inference ? `${mark(b.bytes <= 600_000)} size ${mark(b.importMs <= 90)} import` : undefined,
    ]),
  );
}

function targetTable(targets: Target[]): string {
  return table(
    [{ title: 'target' }, { title: 'goal', right: false }, { title: 'measured' }, { title: '', right: false }],
    targets.map((t) => [t.name, t.goal, t.value, mark(t.pass)]),
  );
}

function gitInfo(): { commit?: string; dirty?: boolean } {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' });
  if (head.status !== 0) return {};
  const status = spawnSync('git', ['--no-optional-locks', 'status', '--porcelain', '--untracked-files=no'], { cwd: repoRoot, encoding: 'utf8' });
  return { commit: head.stdout.trim(), dirty: status.status === 0 ? status.stdout.trim().length > 0 : undefined };
}

function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z').replace(/:/g, '-');
}

// ---------------------------------------------------------------------------------------------
// Main

async function main(): Promise<void> {
  const startedAt = new Date();
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const cpus = os.cpus();
  const machine = { cpuModel: cpus[0]?.model?.trim(), cores: cpus.length, memoryGb: Math.round(os.totalmem() / 1e8) / 10, node: process.version, platform: `${os.platform()} ${os.release()}` };
  const git = gitInfo();
  log(`Gateway benchmark (${quick ? 'quick' : 'full'}) — ${machine.cpuModel}, ${machine.cores} cores, Node ${machine.node}, commit ${git.commit?.slice(0, 12) ?? 'unknown'}${git.dirty ? ' (uncommitted changes)' : ''}`);

  const generator = hasWrk() ? `${wrkVersion() ?? 'wrk'} (one thread per 25 connections)` : 'Node fallback client (bench/client.ts)';
  if (!hasWrk()) {
    const note = 'wrk is not installed (apt-get install -y wrk): using the Node fallback load generator, which needs more CPU on the cores the gateway uses, so throughput and latency are pessimistic.';
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

  // Other work on the machine skews every number; say so when it is there.
  const idleBefore = machineCpu();
  await sleep(500);
  const busyBefore = (busyShare(idleBefore, machineCpu()) ?? 0) * 100;
  if (busyBefore > 15) {
    const note = `the machine was ${busyBefore.toFixed(0)}% busy (all cores) before the benchmark started its processes: something else is running, and the numbers are skewed by it.`;
    notes.push(note);
    log(`WARNING: ${note}`);
  }

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

  log('Starting the fake upstreams, the emulators and the peer …');
  const [upstream, paced, anthropic, emulators, peer] = await Promise.all([
    startFakeUpstream('fake-upstream', workDir, { chunks: STREAM_CHUNKS, burst: true }),
    startFakeUpstream('fake-upstream-paced', workDir, { chunks: STREAM_CHUNKS, burst: false }),
    startFakeAnthropic(workDir),
    startEmulators(workDir, path.join(workDir, 'emulators')),
    startPeer(workDir),
  ]);
  log('Starting the gateway …');
  const gateway = await startGateway(workDir, {
    GATEWAY_DATA_DIR: path.join(workDir, 'gateway'),
    GATEWAY_ADMIN_KEY: ADMIN_KEY,
    GATEWAY_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb,
    GATEWAY_SQS_ENDPOINT: emulators.endpoints.sqs,
    GATEWAY_S3_ENDPOINT: emulators.endpoints.s3,
    GATEWAY_PROVIDER_BASE_URLS: JSON.stringify({ openai: `${upstream.url}/v1` }),
  });
  const memberKey = await createMemberKey(gateway.url);
  const env: Env = { workDir, upstream, paced, anthropic, emulators, gateway, peer, memberKey };
  log(`Ready after ${elapsed().toFixed(1)} s: gateway ${gateway.url}, peer @portkey-ai/gateway ${peer.version} ${peer.url}, upstream ${upstream.url}`);

  const plan = scenarios();
  for (const scenario of plan) {
    for (const system of scenario.systems) await verify(httpTarget(env, system, scenario.kind), scenario.kind, `${system} ${scenario.label}`);
  }

  log(`Warming up (${settings.warmupSec} s chat + ${settings.warmupSec} s stream per system) …`);
  for (const system of ['direct', 'ours', 'peer'] as const) await warmUp(env, system, settings.warmupSec);
  await warmUp(env, 'ours', settings.warmupSec / 2, ['fallback', 'anthropic']);

  const outcomes: Outcome[] = [];
  for (const scenario of plan) {
    const runs = new Map<SystemName, RunResult[]>(scenario.systems.map((system) => [system, []]));
    if (settings.prewarmSec > 0) {
      for (const system of scenario.systems) await warmUp(env, system, settings.prewarmSec, [scenario.kind], scenario.connections);
    }
    for (let round = 0; round < settings.rounds; round++) {
      // Rotate the order each round so no system always runs first.
      const order = scenario.systems.map((_, i) => scenario.systems[(i + round) % scenario.systems.length]);
      for (const system of order) {
        const run = await measure(env, scenario, system, round + 1, settings.durationSec);
        runs.get(system)!.push(run);
        log(
          `  ${scenario.label.padEnd(22)} ${system.padEnd(6)} run ${round + 1}/${settings.rounds}: ${count(run.rps)!.padStart(6)} req/s  p50 ${ms(run.p50)} ms  p99 ${ms(run.p99)} ms` +
            (system === 'direct' ? '' : `  CPU ${fixed(run.cpuUsPerReq, 0)} µs/req`) +
            (run.socketErrors || run.badStatus ? `  errors ${run.socketErrors}/${run.badStatus}` : ''),
        );
      }
    }
    for (const system of scenario.systems) outcomes.push(summarise(scenario, system, runs.get(system)!));
  }
  for (const outcome of outcomes) {
    if (outcome.system === 'direct') continue;
    const scenario = plan.find((s) => s.id === outcome.scenario)!;
    const baseline = outcomes.find((o) => o.scenario === (scenario.baseline ?? scenario.id) && o.system === 'direct');
    if (!baseline) continue;
    outcome.addedP50 = outcome.median.p50 - baseline.median.p50;
    outcome.addedP99 = outcome.median.p99 - baseline.median.p99;
  }

  log(`Time to first chunk: ${settings.ttfcCount} sequential streamed requests per system (paced upstream) …`);
  const ttfc: TtfcResult[] = [];
  for (const system of ['direct', 'ours', 'peer'] as const) ttfc.push(await measureTtfc(env, system));
  const ttfcDirect = ttfc.find((t) => t.system === 'direct')!;
  for (const result of ttfc) {
    if (result.system !== 'direct') result.addedFirstChunkP50 = result.firstChunk.p50 - ttfcDirect.firstChunk.p50;
    const row = outcomes.find((o) => o.scenario === 'stream-c1' && o.system === result.system);
    if (row) row.ttfcP50 = result.firstChunk.p50;
  }

  // Peak RSS under load: the largest sample of any run, or VmHWM if higher (a restarted gateway's
  // earlier peak is only known from the samples).
  const memoryAt = (service: Service) => ({
    pid: service.pid,
    hwmMb: memory(service.pid)?.hwmMb,
    cpuSeconds: cpuSeconds(service.pid),
    restarts: service.restarts,
    children: descendants(service.pid).map((child) => ({ pid: child, hwmMb: memory(child)?.hwmMb, cpuSeconds: cpuSeconds(child) })),
  });
  const gatewayMemory = memoryAt(gateway.service);
  const gatewayPeakMb = Math.max(gatewayMemory.hwmMb ?? 0, ...outcomes.filter((o) => o.system === 'ours').map((o) => o.rssMaxMb ?? 0)) || undefined;
  const processes = {
    gateway: gatewayMemory,
    peer: memoryAt(peer.service),
    emulators: memoryAt(emulators.service),
    fakeUpstream: memoryAt(upstream.service),
    fakeUpstreamPaced: memoryAt(paced.service),
    fakeAnthropic: memoryAt(anthropic.service),
  };

  const soakResult = soakSec > 0 ? await soak(env, soakSec, soakKind) : undefined;

  const targets = evaluateTargets(outcomes, ttfc, bundles, gatewayPeakMb, soakResult);
  const peerUnder = outcomes.filter((o) => o.system === 'peer' && o.label.startsWith('stream'));
  if (peerUnder.length > 0) {
    notes.push('The peer holds back the first chunk of every OpenAI stream it relays by about 25 ms (a fixed pause in its stream handler), so its streamed latency and streamed throughput at low concurrency are bounded by that pause, not by CPU.');
  }
  notes.push('Streams in the load runs come from a fake upstream that writes each whole stream in one go (FAKE_UPSTREAM_BURST_STREAMS=1), so the upstream costs little CPU on the shared cores; the time-to-first-chunk runs use a second fake that writes one event per event-loop turn.');
  notes.push('cache hit: n/a (caching is not implemented yet).');
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

  const finishedAt = new Date();
  const report = {
    version: 1,
    mode: quick ? 'quick' : 'full',
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    elapsedSec: Math.round(elapsed() * 10) / 10,
    machine: { ...machine, busyBeforeStartPct: Math.round(busyBefore) },
    git,
    loadGenerator: { name: hasWrk() ? 'wrk' : 'node', version: wrkVersion(), threads: hasWrk() ? 'ceil(connections / 25)' : undefined, timeout: '10s' },
    peer: { package: '@portkey-ai/gateway', version: peer.version, start: 'build/start-server.js --port=N --headless' },
    settings: { ...settings, streamChunks: STREAM_CHUNKS, sampleIntervalMs: SAMPLE_INTERVAL_MS },
    scenarios: outcomes,
    ttfc,
    bundles,
    processes,
    gatewayPeakRssMb: gatewayPeakMb,
    restarts,
    soak: soakResult,
    targets,
    cacheHit: 'n/a (caching not implemented yet)',
    notes,
  };
  const jsonFile = flags.json ? path.resolve(flags.json) : path.join(repoRoot, '.bench', `${timestamp(startedAt)}.json`);
  mkdirSync(path.dirname(jsonFile), { recursive: true });
  writeFileSync(jsonFile, `${JSON.stringify(report, null, 2)}\n`);

  log('');
  log(`Results (${quick ? 'quick: one run each' : `median of ${settings.rounds} runs of ${settings.durationSec} s`}; latencies in ms; +p50/+p99 = added over direct; CPU = the system's own process ÷ responses)`);
  log(mainTable(outcomes));
  log('cache hit: n/a (caching not implemented yet)');
  log('');
  log('CPU during the runs (% of one core; child = the gateway\'s log worker; other = processes outside the benchmark; machine busy = % of all cores)');
  log(cpuTable(outcomes));
  log('');
  log(`Time to first chunk (ms; c=1, ${settings.ttfcCount} sequential streams of ${STREAM_CHUNKS} chunks, one event per upstream write; separate Node client process)`);
  log(ttfcTable(ttfc));
  log('');
  log(`Bundles (cold import: median of ${settings.bundleRuns} fresh node processes)`);
  log(bundleTable(bundles));
  log('');
  log(
    `Processes: gateway peak RSS ${fixed(gatewayPeakMb, 1)} MB (VmHWM ${fixed(gatewayMemory.hwmMb, 1)} MB, ${gateway.service.restarts} restarts` +
      `${gatewayMemory.children.length ? `; its log worker VmHWM ${gatewayMemory.children.map((child) => fixed(child.hwmMb, 1)).join(' + ')} MB` : ''}), ` +
      `peer VmHWM ${fixed(processes.peer.hwmMb, 1)} MB, emulators VmHWM ${fixed(processes.emulators.hwmMb, 1)} MB`,
  );
  if (soakResult) {
    log(`Soak (${soakResult.kind} c=50) ${soakResult.seconds} s: ${count(soakResult.rps)} req/s, RSS ${fixed(soakResult.startRssMb, 1)} → ${fixed(soakResult.endRssMb, 1)} MB (max ${fixed(soakResult.maxRssMb, 1)}, growth ${fixed(soakResult.growthMb, 1)} MB)`);
  }
  log('');
  log('Targets (informational; they never fail the run)');
  log(targetTable(targets));
  if (notes.length) {
    log('');
    for (const note of notes) log(`Note: ${note}`);
  }
  log('');
  log(`JSON: ${path.relative(process.cwd(), jsonFile) || jsonFile}`);
  log(`Done in ${elapsed().toFixed(1)} s.`);

  await Promise.all([gateway.service, peer.service, upstream.service, paced.service, anthropic.service, emulators.service].map((service) => service.stop()));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`\nbenchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
