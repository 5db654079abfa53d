/**
 * `npm start` and `npm run emulators` stop when told: a SIGTERM (what `kill`, a script's `kill $!`
 * or a process manager sends) or a SIGINT to npm's pid, or a signal to a process below it, ends
 * every process of the tree within 5 s, and the ports are free again. The npm cases run npm as a
 * user does, on ports of their own (PORT=0: the gateway prints where it listens) with emulators
 * and data of their own. The log worker's case starts the gateway as the shared one is started,
 * without npm (whose part the npm cases show) and without a build of its own (each `npm start`
 * builds first, the longest part of this file), on the shared emulators: its request log is read
 * back through the shared gateway. The processes are found through /proc: Linux only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { env, spawnSharedGateway, waitForLogs } from '../support/gateway-client';
import { repoRoot } from '../support/repo-root';

const stopWithinMs = 5_000;
// Each `npm start` builds first, and the cases run side by side on a machine that may be busy.
const caseTimeoutMs = 90_000;

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }))));

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'gateway-process-stop-'));
  dirs.push(dir);
  return dir;
}

interface NpmRun {
  npm: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the first match of `pattern` on stdout. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Kills whatever is left of the tree (after a failed case), by its process group. */
  kill(): void;
}

/** Runs `npm <args>` in the repository, in a process group of its own so a failed case can clean up. */
function runNpm(args: string[], environment: Record<string, string | undefined>): NpmRun {
  const npm = spawn(process.platform === 'win32' ? 'npm.cmd' : 'npm', args, {
    cwd: repoRoot,
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  npm.stdout!.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  npm.stderr!.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  return {
    npm,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stdout);
          if (!match) return;
          npm.stdout!.off('data', check);
          resolve(match);
        };
        npm.stdout!.on('data', check);
        check();
        void exited.then(() => reject(new Error(`npm ${args.join(' ')} exited before printing ${pattern}.\nstdout: ${stdout}\nstderr: ${stderr}`)));
      }),
    kill: () => {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // The group is gone already.
      }
    },
  };
}

/** The pid and every descendant's, read from /proc (each thread lists the children it started). */
function processTree(pid: number): number[] {
  const tree = [pid];
  for (let index = 0; index < tree.length; index++) {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${tree[index]}/task`);
    } catch {
      continue; // gone while being read
    }
    for (const task of tasks) {
      try {
        const children = readFileSync(`/proc/${tree[index]}/task/${task}/children`, 'utf8').trim();
        if (children) tree.push(...children.split(' ').map(Number));
      } catch {
        // The thread ended while being read.
      }
    }
  }
  return tree;
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/**
 * Whether the process still runs. A zombie counts as gone: it has exited and closed its ports, and
 * only waits for a parent (here possibly the machine's init) to collect its exit status.
 */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Sends `signal` to `target` and resolves with how long it took until no process of `tree` runs (at most `stopWithinMs` + 1 s). */
async function signalAndTimeStop(target: number, signal: NodeJS.Signals, tree: number[]): Promise<{ elapsedMs: number; left: string[] }> {
  const started = performance.now();
  process.kill(target, signal);
  const deadline = started + stopWithinMs + 1_000;
  while (tree.some(running) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  return { elapsedMs: performance.now() - started, left: tree.filter(running).map((pid) => `${pid} ${commandLine(pid)}`) };
}

/** Whether something can listen on the port again. */
function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, host, () => server.close(() => resolve(true)));
  });
}

const ownEmulators = { GATEWAY_DYNAMODB_ENDPOINT: undefined, GATEWAY_SQS_ENDPOINT: undefined, GATEWAY_S3_ENDPOINT: undefined };
const listening = /listening on http:\/\/127\.0\.0\.1:(\d+)\/v1/;

/** The tree below `root` once the gateway serves on `port`: the gateway and its log worker are in it. */
async function gatewayTree(root: number, port: number) {
  const tree = processTree(root);
  const gateway = tree.find((pid) => commandLine(pid).includes('.build/local/main.mjs'));
  const logWorker = tree.find((pid) => commandLine(pid).includes('log-worker.mjs'));
  // What the case stops: the gateway and its log worker (the emulators run in the gateway's process).
  expect(gateway, tree.map(commandLine).join('\n')).toBeDefined();
  expect(logWorker, tree.map(commandLine).join('\n')).toBeDefined();
  expect(await portIsFree(port)).toBe(false);
  return { tree, logWorker: logWorker! };
}

describe.skipIf(process.platform !== 'linux').concurrent('stopping the local runtime', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'npm start: %s to npm stops the gateway, its log worker and its emulators within 5 s',
    async (signal) => {
      const run = runNpm(['start'], { PORT: '0', HOST: '127.0.0.1', GATEWAY_DATA_DIR: await dataDir(), GATEWAY_ADMIN_KEY: undefined, ...ownEmulators });
      try {
        const port = Number((await run.waitFor(listening))[1]);
        const { tree } = await gatewayTree(run.npm.pid!, port);
        const { elapsedMs, left } = await signalAndTimeStop(run.npm.pid!, signal, tree);
        expect(left, `still running ${Math.round(elapsedMs)} ms after ${signal}\nstderr: ${run.stderr()}`).toEqual([]);
        expect(elapsedMs).toBeLessThan(stopWithinMs);
        expect(await portIsFree(port)).toBe(true);
        // The orderly stop, not the deadline that ends a stop that hangs.
        expect(run.stderr()).not.toMatch(/not stopped .* exiting now/);
      } finally {
        run.kill();
      }
    },
    caseTimeoutMs,
  );

  it(
    'the gateway: SIGTERM to its log worker stops both within 5 s, after storing the request log lines the gateway held',
    async () => {
      const { adminKey, upstreamUrl } = env();
      // A flush interval longer than the case: the line waits in the gateway until it stops.
      const gateway = await spawnSharedGateway({
        GATEWAY_PROVIDER_BASE_URLS: JSON.stringify({ openai: `${upstreamUrl}/openai/v1` }),
        GATEWAY_LOG_FLUSH_MS: '600000',
      });
      try {
        const port = Number(new URL(gateway.url).port);
        const { tree, logWorker } = await gatewayTree(gateway.process.pid!, port);
        const traceId = `process-stop-${Date.now()}`;
        const response = await fetch(`${gateway.url}/models`, {
          headers: { 'x-gateway-api-key': adminKey, 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-trace-id': traceId },
        });
        expect(response.status).toBe(200);
        await response.text();

        const { elapsedMs, left } = await signalAndTimeStop(logWorker, 'SIGTERM', tree);
        expect(left, `still running ${Math.round(elapsedMs)} ms after SIGTERM to the log worker\nstderr: ${gateway.errors()}`).toEqual([]);
        expect(elapsedMs).toBeLessThan(stopWithinMs);
        expect(await portIsFree(port)).toBe(true);
        expect(gateway.errors()).not.toMatch(/not stopped .* exiting now|log worker exited/);
        // Stored before the processes exited: nothing is left to store it now.
        expect(await waitForLogs(traceId, { timeoutMs: 0 })).toHaveLength(1);
      } finally {
        await gateway.stop();
      }
    },
    caseTimeoutMs,
  );

  it.each(['SIGTERM', 'SIGINT'] as const)(
    'npm run emulators: %s to npm stops the emulators within 5 s and frees their ports',
    async (signal) => {
      const run = runNpm(['run', 'emulators', '--', '--data-dir', await dataDir()], {});
      try {
        const endpoints = JSON.parse((await run.waitFor(/^\{"dynamodb".*\}$/m))[0]) as Record<string, string>;
        const ports = Object.values(endpoints).map((endpoint) => Number(new URL(endpoint).port));
        const tree = processTree(run.npm.pid!);
        expect(
          tree.some((pid) => commandLine(pid).includes('emulators-main.ts')),
          tree.map(commandLine).join('\n'),
        ).toBe(true);

        const { elapsedMs, left } = await signalAndTimeStop(run.npm.pid!, signal, tree);
        expect(left, `still running ${Math.round(elapsedMs)} ms after ${signal}\nstderr: ${run.stderr()}`).toEqual([]);
        expect(elapsedMs).toBeLessThan(stopWithinMs);
        for (const port of ports) expect(await portIsFree(port), `port ${port}`).toBe(true);
        expect(run.stderr()).not.toMatch(/not stopped .* exiting now/);
      } finally {
        run.kill();
      }
    },
    caseTimeoutMs,
  );
});
