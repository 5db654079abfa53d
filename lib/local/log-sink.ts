import { fork, type ChildProcess } from 'node:child_process';
import type { LogWorkerReply, LogWorkerRequest } from './log-delivery';

export interface LogSink {
  /** Delivers every line received so far to the ingest handler. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Plays CloudWatch Logs for the local runtime: collects the request-log lines the handlers emit and
 * sends them in batches to the log worker process, which runs the log-ingest handler.
 */
export async function installLogSink(options: { worker: string; ingestBundle: string; logGroup: string; intervalMs?: number }): Promise<LogSink> {
  const intervalMs = options.intervalMs ?? 100;
  const worker = fork(options.worker, [options.ingestBundle, options.logGroup], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  await waitForReady(worker);
  let lines: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let nextId = 0;
  const pending = new Map<number, () => void>();
  worker.on('message', (reply: LogWorkerReply) => {
    if ('ready' in reply) return;
    if (!reply.ok) console.error(`Log ingestion failed; the batch is dropped: ${reply.error}`);
    pending.get(reply.id)?.();
    pending.delete(reply.id);
  });
  let stopping = false;
  worker.on('exit', (code) => {
    if (code !== 0 && !stopping) console.error(`The log worker exited with code ${code}; request logs are no longer stored.`);
    for (const done of pending.values()) done();
    pending.clear();
  });

  // The worker handles batches in order, so the last batch's answer covers every earlier one.
  let lastDelivery = Promise.resolve();
  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (lines.length > 0 && worker.connected) {
      const request: LogWorkerRequest = { id: nextId++, lines };
      lines = [];
      lastDelivery = new Promise<void>((resolve) => pending.set(request.id, resolve));
      worker.send(request);
    }
    return lastDelivery;
  };

  (globalThis as { __gatewayLocalLogSink?: unknown }).__gatewayLocalLogSink = {
    emitLog(line: string) {
      lines.push(line);
      if (lines.length >= 500) void flush();
      else if (!timer) timer = setTimeout(flush, intervalMs);
    },
  };

  return {
    flush,
    async stop() {
      await flush();
      stopping = true;
      delete (globalThis as { __gatewayLocalLogSink?: unknown }).__gatewayLocalLogSink;
      worker.disconnect();
      await new Promise<void>((resolve) => (worker.exitCode !== null ? resolve() : worker.once('exit', () => resolve())));
    },
  };
}

function waitForReady(worker: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('exit', (code) => reject(new Error(`The log worker exited with code ${code} before it was ready.`)));
  });
}
