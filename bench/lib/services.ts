/**
 * The processes the benchmark measures and feeds: the fake upstreams, the emulators, the local
 * gateway (as `npm start` runs it) and the peer gateway. Each runs in a process of its own with
 * stdout and stderr going to files (so a chatty process never blocks on a pipe and this process
 * spends no CPU reading its output); readiness is read from the stdout file.
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const repoRoot = path.resolve(import.meta.dirname, '..', '..');

/** Every process started here, so they can all be ended when the benchmark stops, however it stops. */
const running = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of running) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export interface ServiceSpec {
  name: string;
  command: string;
  args: string[];
  env?: Record<string, string | undefined>;
  /** Where stdout/stderr files go. */
  logDir: string;
  /** Ready when the stdout file matches; the first capture group, if any, is returned. */
  ready: RegExp;
  /** Give the child an IPC channel (the emulators stop when it closes). */
  ipc?: boolean;
  readyTimeoutMs?: number;
}

export class Service {
  child!: ChildProcess;
  /** The first capture group of the readiness pattern (a URL, a JSON line). */
  readyText = '';
  /** How many times the process exited unexpectedly and was started again. */
  restarts = 0;
  readonly stdoutFile: string;
  readonly stderrFile: string;
  private stopping = false;

  constructor(readonly spec: ServiceSpec) {
    this.stdoutFile = path.join(spec.logDir, `${spec.name}.stdout.log`);
    this.stderrFile = path.join(spec.logDir, `${spec.name}.stderr.log`);
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  alive(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** How the process ended, if it did. */
  exitStatus(): string | undefined {
    if (this.alive()) return undefined;
    return this.child.signalCode ? `signal ${this.child.signalCode}` : `exit code ${this.child.exitCode}`;
  }

  async start(): Promise<this> {
    const { spec } = this;
    const out = openSync(this.stdoutFile, 'a');
    const err = openSync(this.stderrFile, 'a');
    const stdio: StdioOptions = spec.ipc ? ['ignore', out, err, 'ipc'] : ['ignore', out, err];
    const offset = this.fileSize(this.stdoutFile);
    const child = spawn(spec.command, spec.args, { cwd: repoRoot, env: { ...process.env, ...spec.env }, stdio });
    closeSync(out);
    closeSync(err);
    this.child = child;
    running.add(child);
    child.once('exit', () => running.delete(child));
    if (spec.ipc) child.on('error', () => undefined).channel?.unref();

    const deadline = Date.now() + (spec.readyTimeoutMs ?? 60_000);
    for (;;) {
      const text = this.read(this.stdoutFile).slice(offset);
      const match = spec.ready.exec(text);
      if (match) {
        this.readyText = match[1] ?? match[0];
        return this;
      }
      if (!this.alive()) throw new Error(`${spec.name} exited (${this.exitStatus()}) before it was ready.\n${this.tail()}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${spec.name} was not ready within ${(spec.readyTimeoutMs ?? 60_000) / 1000} s.\n${this.tail()}`);
      }
      await sleep(50);
    }
  }

  /** Starts the process again if it has exited; true when it had to. */
  async ensureRunning(): Promise<boolean> {
    if (this.alive()) return false;
    this.restarts += 1;
    await this.start();
    return true;
  }

  /** The last lines of its stdout and stderr, for error messages and the JSON report. */
  tail(chars = 2_000): string {
    const out = this.read(this.stdoutFile).slice(-chars);
    const err = this.read(this.stderrFile).slice(-chars);
    return `--- ${this.spec.name} stdout (end) ---\n${out}\n--- ${this.spec.name} stderr (end) ---\n${err}`;
  }

  stderrTail(chars = 2_000): string {
    return this.read(this.stderrFile).slice(-chars);
  }

  async stop(): Promise<void> {
    if (this.stopping || !this.alive()) return;
    this.stopping = true;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private read(file: string): string {
    try {
      return readFileSync(file, 'utf8');
    } catch {
      return '';
    }
  }

  private fileSize(file: string): number {
    return this.read(file).length;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A port that was free a moment ago (for a process that cannot listen on port 0 and report it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

const tsx = ['--import', 'tsx'];

export interface FakeUpstreamService {
  service: Service;
  /** `http://127.0.0.1:PORT` (no `/v1`). */
  url: string;
}

/** test/support/fake-upstream-main.ts; `burst` writes a whole stream in one tick. */
export async function startFakeUpstream(name: string, logDir: string, options: { chunks: number; burst: boolean }): Promise<FakeUpstreamService> {
  const service = await new Service({
    name,
    command: process.execPath,
    args: [...tsx, 'test/support/fake-upstream-main.ts'],
    env: {
      FAKE_UPSTREAM_PORT: '0',
      FAKE_UPSTREAM_CHUNKS: String(options.chunks),
      FAKE_UPSTREAM_BURST_STREAMS: options.burst ? '1' : '0',
      FAKE_UPSTREAM_RECORD: '0',
    },
    logDir,
    ready: /^(\{.*"url".*\})$/m,
  }).start();
  return { service, url: (JSON.parse(service.readyText) as { url: string }).url };
}

export interface EmulatorsService {
  service: Service;
  endpoints: { dynamodb: string; sqs: string; s3: string };
}

/** lib/local/emulators/emulators-main.ts: DynamoDB, SQS and S3 emulators in their own process. */
export async function startEmulators(logDir: string, dataDir: string): Promise<EmulatorsService> {
  const service = await new Service({
    name: 'emulators',
    command: process.execPath,
    args: [...tsx, 'lib/local/emulators/emulators-main.ts', '--data-dir', dataDir],
    logDir,
    ready: /^(\{.*"dynamodb".*\})$/m,
    ipc: true,
  }).start();
  return { service, endpoints: JSON.parse(service.readyText) as EmulatorsService['endpoints'] };
}

/** bench/fake-anthropic-main.ts; the URL includes `/v1`. */
export async function startFakeAnthropic(logDir: string): Promise<{ service: Service; url: string }> {
  const service = await new Service({
    name: 'fake-anthropic',
    command: process.execPath,
    args: [...tsx, 'bench/fake-anthropic-main.ts'],
    logDir,
    ready: /^(\{.*"url".*\})$/m,
  }).start();
  return { service, url: (JSON.parse(service.readyText) as { url: string }).url };
}

/**
 * The local gateway exactly as `npm start` runs it (the built `.build/local/main.mjs`), on a free
 * port, using the separate emulators. The URL includes `/v1`.
 */
export async function startGateway(logDir: string, env: Record<string, string>): Promise<{ service: Service; url: string }> {
  // A fixed port, so a restarted gateway keeps its URL.
  const port = await freePort();
  const service = await new Service({
    name: 'gateway',
    command: process.execPath,
    args: [path.join('.build', 'local', 'main.mjs')],
    env: { PORT: String(port), HOST: '127.0.0.1', ...env },
    logDir,
    ready: /listening on (http:\/\/\S+)/,
  }).start();
  return { service, url: service.readyText };
}

/**
 * The peer: the published @portkey-ai/gateway package, started from its own entry point
 * (`build/start-server.js --port=N`, the `start:node` script of its package.json). `--headless`
 * leaves out its local log console, so it runs its lean configuration. The URL includes `/v1`.
 */
export async function startPeer(logDir: string): Promise<{ service: Service; url: string; version: string }> {
  const entry = path.join('node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js');
  const version = (JSON.parse(readFileSync(path.join(repoRoot, 'node_modules', '@portkey-ai', 'gateway', 'package.json'), 'utf8')) as { version: string })
    .version;
  const port = await freePort();
  const service = await new Service({
    name: 'peer',
    command: process.execPath,
    args: [entry, `--port=${port}`, '--headless'],
    logDir,
    ready: /Ready for connections/,
  }).start();
  return { service, url: `http://127.0.0.1:${port}/v1`, version };
}
