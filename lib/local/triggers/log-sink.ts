import { fork, type ChildProcess } from 'node:child_process';
import { stopSignals } from '../stop-when-told';
import type { LogWorkerReply, LogWorkerRequest } from './log-delivery';

export interface LogSink {
  /** Resolves once every line received so far is stored (or given up, which is reported on stderr). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export interface LogSinkOptions {
  /** The log worker's script. */
  worker: string;
  /** The logIngest bundle the worker runs. */
  ingestBundle: string;
  logGroup: string;
  intervalMs?: number;
  /** Characters of lines held while the worker has not stored them, past which lines are refused (default 64 MiB). */
  maxBacklogChars?: number;
}

/** A batch handed to the worker, kept until the worker says it is stored. */
interface Batch {
  id: number;
  lines: string[];
  chars: number;
  /** Workers that died while this batch was the one they were storing. */
  crashes: number;
}

const maxBatchLines = 500;
const restartBaseMs = 100;
const restartMaxMs = 10_000;
// A batch that takes down this many workers would stop every later line from being stored.
const crashesBeforeGivingUp = 3;
// Bounds the memory held for a worker that cannot come back; lines past it are refused and counted.
const defaultMaxBacklogChars = 64 * 1024 * 1024;
// Stopping is bounded (`npm start` exits within 5 s of a signal, see main.ts); a worker that
// stores nothing in this long is not about to.
const stopWaitMs = 2_000;
// A failed send needs no handling (the worker's exit hands its batches to the next worker), but a
// callback keeps the failure from being emitted as an error event.
const ignoreSendFailure = () => undefined;

/**
 * Plays CloudWatch Logs for the local runtime: collects the request-log lines the handlers emit and
 * sends them in batches to the log worker process, which runs the log-ingest handler.
 */
export async function installLogSink(options: LogSinkOptions): Promise<LogSink> {
  const sink = new WorkerLogSink(options);
  await sink.start();
  (globalThis as { __gatewayLocalLogSink?: unknown }).__gatewayLocalLogSink = sink;
  return sink;
}

/**
 * Lines are accepted into memory and handed over in batches; a batch stays here until the worker
 * acknowledges that ingestion has written it. A worker that dies is started again (with a backoff
 * that grows while workers die without storing anything) and gets every batch not yet
 * acknowledged, in order; ingestion keys records by their own id, so a batch stored twice
 * overwrites itself. A worker handles batches in the order it receives them, so when it dies, the
 * oldest unacknowledged batch is the one it was storing.
 */
class WorkerLogSink implements LogSink {
  private readonly intervalMs: number;
  private readonly maxBacklogChars: number;
  private lines: string[] = [];
  private linesChars = 0;
  private readonly unacknowledged = new Map<number, Batch>();
  private unacknowledgedChars = 0;
  private nextId = 0;
  private timer: NodeJS.Timeout | undefined;
  private waiters: Array<{ upTo: number; resolve: () => void }> = [];
  /** The current worker process, from its start until it exits. */
  private child: ChildProcess | undefined;
  /** The current worker once it is ready for batches. */
  private worker: ChildProcess | undefined;
  private started: { resolve: () => void; reject: (error: Error) => void } | undefined;
  /** Workers that died since one last stored a batch: the restart backoff grows with it. */
  private deathsSinceStored = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private refused = 0;
  private stopping = false;

  constructor(private readonly options: LogSinkOptions) {
    this.intervalMs = options.intervalMs ?? 100;
    this.maxBacklogChars = options.maxBacklogChars ?? defaultMaxBacklogChars;
  }

  /** Starts the first worker; the runtime does not start without one. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.started = { resolve, reject };
      this.launch();
    });
  }

  /** Called by `emitRequestLog` for every request: the only work here that is per request. */
  emitLog(line: string): void {
    if (this.unacknowledgedChars + this.linesChars + line.length > this.maxBacklogChars) return this.refuse();
    this.lines.push(line);
    this.linesChars += line.length;
    if (this.lines.length >= maxBatchLines) this.cut();
    else if (!this.timer) this.timer = setTimeout(this.cut, this.intervalMs);
  }

  flush(): Promise<void> {
    this.cut();
    if (this.unacknowledged.size === 0) return Promise.resolve();
    const upTo = this.nextId - 1;
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  async stop(): Promise<void> {
    let waiting: NodeJS.Timeout | undefined;
    const gaveUp = await Promise.race([
      this.flush().then(() => false),
      new Promise<boolean>((resolve) => (waiting = setTimeout(() => resolve(true), stopWaitMs))),
    ]);
    clearTimeout(waiting);
    this.stopping = true;
    clearTimeout(this.restartTimer);
    delete (globalThis as { __gatewayLocalLogSink?: unknown }).__gatewayLocalLogSink;
    if (gaveUp)
      console.error(`Stopped with ${this.pendingLines()} request log lines the log worker had not stored after ${stopWaitMs / 1000} s; they are lost.`);
    const child = this.child;
    if (!child) return;
    const exited = new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
    if (child.connected) child.disconnect();
    await exited;
  }

  private readonly cut = (): void => {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.lines.length === 0) return;
    const batch: Batch = { id: this.nextId++, lines: this.lines, chars: this.linesChars, crashes: 0 };
    this.lines = [];
    this.linesChars = 0;
    this.unacknowledged.set(batch.id, batch);
    this.unacknowledgedChars += batch.chars;
    if (this.worker) this.send(this.worker, batch);
  };

  private send(worker: ChildProcess, batch: Batch): void {
    const request: LogWorkerRequest = { id: batch.id, lines: batch.lines };
    worker.send(request, ignoreSendFailure);
  }

  private launch(): void {
    const child = fork(this.options.worker, [this.options.ingestBundle, this.options.logGroup], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.child = child;
    child.on('message', (reply: LogWorkerReply) => {
      if ('ready' in reply) this.ready(child);
      else if ('signal' in reply) this.signalled(reply.signal);
      else this.answered(reply);
    });
    child.once('exit', (code, signal) => this.exited(child, signal ?? `code ${code}`));
    child.on('error', (error) => {
      // Without a process there is no exit event to wait for.
      if (child.pid === undefined) this.exited(child, error.message);
    });
  }

  private ready(child: ChildProcess): void {
    if (child !== this.child) return;
    this.worker = child;
    if (this.started) {
      this.started.resolve();
      this.started = undefined;
    } else {
      console.error(`The log worker is running again (pid ${child.pid}).`);
    }
    for (const batch of this.unacknowledged.values()) this.send(child, batch);
  }

  /**
   * The worker was told to stop (its pid was signalled, or a Ctrl-C reached the whole process
   * group): this process gets the same signal, so what it does on it (the local runtime stops in
   * order, flushing to the worker first) happens whichever of the two was told.
   */
  private signalled(signal: NodeJS.Signals): void {
    if (this.stopping || !stopSignals.includes(signal)) return;
    process.kill(process.pid, signal);
  }

  private answered(reply: Extract<LogWorkerReply, { id: number }>): void {
    const batch = this.unacknowledged.get(reply.id);
    if (!batch) return;
    if (reply.ok) this.deathsSinceStored = 0;
    else console.error(`Log ingestion failed; a batch of ${batch.lines.length} request log lines is dropped: ${reply.error}`);
    this.settle(batch);
    if (this.refused > 0 && reply.ok) {
      console.error(`The request log backlog was full while the log worker could not store it: ${this.refused} request log lines were dropped.`);
      this.refused = 0;
    }
  }

  private settle(batch: Batch): void {
    this.unacknowledged.delete(batch.id);
    this.unacknowledgedChars -= batch.chars;
    const oldest = this.unacknowledged.size > 0 ? this.unacknowledged.keys().next().value! : Infinity;
    if (this.waiters.length === 0 || this.waiters[0].upTo >= oldest) return;
    const waiting = this.waiters;
    this.waiters = waiting.filter((waiter) => waiter.upTo >= oldest);
    for (const waiter of waiting) if (waiter.upTo < oldest) waiter.resolve();
  }

  private exited(child: ChildProcess, how: string): void {
    if (child !== this.child) return;
    const wasReady = child === this.worker;
    this.child = undefined;
    this.worker = undefined;
    if (this.started) {
      this.started.reject(new Error(`The log worker exited (${how}) before it was ready.`));
      this.started = undefined;
      return;
    }
    if (this.stopping) return;
    if (wasReady) this.blameOldestBatch();
    this.deathsSinceStored++;
    const delay = Math.min(restartMaxMs, restartBaseMs * 2 ** (this.deathsSinceStored - 1));
    const pending = this.pendingLines();
    console.error(
      `The log worker exited (${how}); starting another in ${delay} ms.` +
        (pending > 0 ? ` ${pending} request log lines not yet stored will be sent to it.` : ''),
    );
    this.restartTimer = setTimeout(() => this.launch(), delay);
  }

  private blameOldestBatch(): void {
    const oldest = this.unacknowledged.values().next().value;
    if (!oldest || ++oldest.crashes < crashesBeforeGivingUp) return;
    console.error(`Gave up ${oldest.lines.length} request log lines: ${oldest.crashes} log workers died while storing them.`);
    this.settle(oldest);
  }

  private refuse(): void {
    if (this.refused++ === 0)
      console.error(
        `The request log backlog is full (${this.maxBacklogChars} characters not yet stored); request log lines are dropped until the log worker stores it.`,
      );
  }

  private pendingLines(): number {
    let count = this.lines.length;
    for (const batch of this.unacknowledged.values()) count += batch.lines.length;
    return count;
  }
}
