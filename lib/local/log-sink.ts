import { gzipSync } from 'node:zlib';
import type { LambdaHandler } from './server';

export interface LogSink {
  /** Delivers every line received so far to the ingest handler. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Plays CloudWatch Logs for the local runtime: collects the request-log lines the handlers emit and
 * delivers them in batches to the log-ingest handler, gzip+base64 as a subscription does.
 */
export function installLogSink(options: { ingest: LambdaHandler; intervalMs?: number; logGroup: string }): LogSink {
  const intervalMs = options.intervalMs ?? 100;
  let lines: string[] = [];
  let timer: NodeJS.Timeout | undefined;
  let sequence = 0;
  let delivering: Promise<void> = Promise.resolve();

  const deliver = async (batch: string[]) => {
    const now = Date.now();
    const payload = {
      messageType: 'DATA_MESSAGE',
      owner: '000000000000',
      logGroup: options.logGroup,
      logStream: 'local',
      subscriptionFilters: ['request-logs'],
      logEvents: batch.map((message) => ({ id: String(++sequence), timestamp: now, message })),
    };
    const event = { awslogs: { data: gzipSync(JSON.stringify(payload)).toString('base64') } };
    try {
      await options.ingest(event, { functionName: 'logIngest', getRemainingTimeInMillis: () => 60_000 });
    } catch (error) {
      console.error('Log ingestion failed; the batch is dropped', error);
    }
  };

  const flush = (): Promise<void> => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (lines.length > 0) {
      const batch = lines;
      lines = [];
      delivering = delivering.then(() => deliver(batch));
    }
    return delivering;
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
      delete (globalThis as { __gatewayLocalLogSink?: unknown }).__gatewayLocalLogSink;
    },
  };
}
