/**
 * Load generation in a process apart from everything measured: `wrk` (Debian's package) when it is
 * installed, else the Node client in bench/client.ts (slower and heavier on the CPU it shares with
 * the gateway, so its numbers are a floor; the report says which one ran).
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from './services';

export interface HttpTarget {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface LoadResult {
  generator: 'wrk' | 'node';
  /** Completed responses (any status). */
  requests: number;
  durationSec: number;
  rps: number;
  /** Latency percentiles in milliseconds (request sent → whole response read). */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** Connect/read/write errors and timeouts. */
  socketErrors: number;
  /** Responses with a status above 399. */
  badStatus: number;
}

export interface LoadOptions {
  connections: number;
  durationSec: number;
  /** For the Lua script file. */
  workDir: string;
}

let wrkAvailable: boolean | undefined;

/** Whether `wrk` can be run (`wrk --version` exits 1 but prints its banner); BENCH_NO_WRK=1 says no. */
export function hasWrk(): boolean {
  if (process.env.BENCH_NO_WRK === '1') return false;
  if (wrkAvailable === undefined) {
    const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
    wrkAvailable = !probe.error && /wrk/i.test(`${probe.stdout}${probe.stderr}`);
  }
  return wrkAvailable;
}

export function wrkVersion(): string | undefined {
  if (!hasWrk()) return undefined;
  const probe = spawnSync('wrk', ['--version'], { encoding: 'utf8' });
  return /wrk \S+/.exec(`${probe.stdout}${probe.stderr}`)?.[0];
}

/** One wrk thread per ~25 connections. */
export function wrkThreads(connections: number): number {
  return Math.max(1, Math.ceil(connections / 25));
}

/** A Lua long string that cannot be closed early by the text it holds. */
function luaString(text: string): string {
  let level = 1;
  while (text.includes(`]${'='.repeat(level)}]`)) level += 1;
  const eq = '='.repeat(level);
  // A long string drops a first newline; keep it by starting with one of our own.
  return `[${eq}[\n${text}]${eq}]`;
}

let scriptCounter = 0;

function wrkScript(target: HttpTarget, workDir: string): string {
  const lines = ['wrk.method = "POST"', `wrk.body = ${luaString(target.body)}`];
  for (const [name, value] of Object.entries(target.headers)) lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  lines.push(
    'done = function(summary, latency, requests)',
    '  local e = summary.errors',
    '  io.write(string.format(\'BENCH_RESULT {"requests":%d,"duration_us":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"socket_errors":%d,"bad_status":%d}\\n\',',
    '    summary.requests, summary.duration, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,',
    '    e.connect + e.read + e.write + e.timeout, e.status))',
    'end',
  );
  const file = path.join(workDir, `load-${process.pid}-${++scriptCounter}.lua`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function run(
  command: string,
  args: string[],
  timeoutMs: number,
  onOutput?: (stdout: string) => void,
  input?: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: repoRoot, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'] });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      onOutput?.(stdout);
    });
    child.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

async function runWrk(target: HttpTarget, options: LoadOptions): Promise<LoadResult> {
  const script = wrkScript(target, options.workDir);
  const args = [
    '-t',
    String(wrkThreads(options.connections)),
    '-c',
    String(options.connections),
    '-d',
    `${options.durationSec}s`,
    '--timeout',
    '10s',
    '-s',
    script,
    target.url,
  ];
  const { code, stdout, stderr } = await run('wrk', args, (options.durationSec + 30) * 1000);
  const line = /BENCH_RESULT (\{.*\})/.exec(stdout)?.[1];
  if (code !== 0 || !line) throw new Error(`wrk failed (exit ${code}): ${stderr || stdout}`);
  const r = JSON.parse(line) as Record<string, number>;
  const durationSec = r.duration_us / 1e6;
  return {
    generator: 'wrk',
    requests: r.requests,
    durationSec,
    rps: r.requests / durationSec,
    p50: r.p50 / 1000,
    p90: r.p90 / 1000,
    p99: r.p99 / 1000,
    max: r.max / 1000,
    socketErrors: r.socket_errors,
    badStatus: r.bad_status,
  };
}

/**
 * Closed-loop load from the Node client. Unlike wrk, it stops gracefully: when the time is up no new
 * request starts and the ones in flight are read to the end, so no connection is dropped mid-response
 * (used for warm-ups).
 */
export async function runNodeLoad(target: HttpTarget, options: Omit<LoadOptions, 'workDir'>): Promise<LoadResult> {
  const job = { mode: 'load', ...target, connections: options.connections, durationSec: options.durationSec };
  const { code, stdout, stderr } = await runClient(job, (options.durationSec + 30) * 1000);
  const line = /BENCH_RESULT (\{.*\})/.exec(stdout)?.[1];
  if (code !== 0 || !line) throw new Error(`the Node load client failed (exit ${code}): ${stderr || stdout}`);
  return { generator: 'node', ...(JSON.parse(line) as Omit<LoadResult, 'generator'>) };
}

/** Closed-loop load: `connections` clients, each sending the next request when the last answered. */
export function runLoad(target: HttpTarget, options: LoadOptions): Promise<LoadResult> {
  return hasWrk() ? runWrk(target, options) : runNodeLoad(target, options);
}

/**
 * Runs bench/client.ts in a child process with one JSON job on its stdin (a job of hundreds of
 * targets is too long for an argument); `onOutput` sees its stdout so far as it grows.
 */
export function runClient(
  job: object,
  timeoutMs: number,
  onOutput?: (stdout: string) => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return run(process.execPath, ['--import', 'tsx', path.join('bench', 'client.ts')], timeoutMs, onOutput, JSON.stringify(job));
}
