/**
 * One function bundle in a process of its own, as Lambda runs it: imports the bundle (cold init),
 * calls its handler once (the first request), then `requests` more times one after the other (warm
 * requests), and reports what each phase took over the IPC channel. Between phases it waits for the
 * parent's go, so the parent can read its counters at the phase boundaries.
 *
 * Bundled to .build/size/child.mjs by main.ts; stdout must be a file (the log bytes written per
 * request are read from its size).
 */
import { fstatSync } from 'node:fs';
import { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { eventFor, type RequestSpec } from './events';

export interface ChildSpec {
  functionName: string;
  bundle: string;
  memoryMb: number;
  request: RequestSpec;
  requests: number;
  /** Import the bundle, report the cold init and exit (the extra cold samples). */
  coldOnly?: boolean;
}

export type ChildReport =
  | { phase: 'cold'; wallMs: number; cpuMs: number; rssMb: number }
  | { phase: 'first'; wallMs: number; cpuMs: number; status: number; logBytes: number; answer: string }
  | {
      phase: 'warm';
      requests: number;
      cpuMs: number[];
      wallMs: number[];
      statuses: Record<string, number>;
      logBytes: number;
      peakRssMb: number;
      rssMb: number;
    }
  | { phase: 'error'; message: string };

type Handler = (event: unknown, second: unknown, third?: unknown) => Promise<unknown>;

const streamingMarker = Symbol.for('aws.lambda.runtime.handler.streaming');
const delimiter = Buffer.alloc(8);

/** What Lambda's Node.js runtime provides to streaming handlers: `awslambda`, same byte format. */
function installAwsLambda(): void {
  const globals = globalThis as { awslambda?: Record<string, unknown> };
  const awslambda = (globals.awslambda ??= {});
  awslambda.streamifyResponse = (handler: Handler) => {
    (handler as unknown as Record<symbol, string>)[streamingMarker] = 'response';
    return handler;
  };
  awslambda.HttpResponseStream = {
    from(stream: Writable, prelude: Record<string, unknown>) {
      stream.write(Buffer.concat([Buffer.from(JSON.stringify(prelude)), delimiter]));
      return stream;
    },
  };
}

/** Collects a streamed response: the prelude's status, then the body. */
class CollectingStream extends Writable {
  private chunks: Buffer[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: () => void): void {
    this.chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
    callback();
  }
  setContentType(): void {}
  result(): { status: number; body: string } {
    const all = Buffer.concat(this.chunks);
    const end = all.indexOf(delimiter);
    if (end === -1) return { status: 0, body: all.toString('utf8') };
    const prelude = JSON.parse(all.subarray(0, end).toString('utf8')) as { statusCode?: number };
    return { status: prelude.statusCode ?? 200, body: all.subarray(end + delimiter.length).toString('utf8') };
  }
}

function context(spec: ChildSpec, sequence: number) {
  const deadline = Date.now() + 900_000;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: `llm-gateway-size-${spec.functionName}`,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:llm-gateway-size-${spec.functionName}`,
    memoryLimitInMB: String(spec.memoryMb),
    awsRequestId: `size-${sequence}`,
    logGroupName: `/aws/lambda/llm-gateway-size-${spec.functionName}`,
    logStreamName: 'size',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

async function invoke(handler: Handler, spec: ChildSpec, sequence: number): Promise<{ status: number; body: string }> {
  const event = eventFor(spec.request, sequence);
  if ((handler as unknown as Record<symbol, unknown>)[streamingMarker] === 'response') {
    const stream = new CollectingStream();
    await handler(event, stream, context(spec, sequence));
    if (!stream.writableFinished) await new Promise<void>((resolve) => stream.end(resolve));
    return stream.result();
  }
  const result = (await handler(event, context(spec, sequence))) as { statusCode?: number; body?: string; batchItemFailures?: unknown[] } | undefined;
  if (spec.request.kind === 'sqs') return { status: result?.batchItemFailures?.length ? 500 : 200, body: JSON.stringify(result ?? null) };
  if (spec.request.kind === 'logs') return { status: 200, body: JSON.stringify(result ?? null) };
  return { status: result?.statusCode ?? 0, body: result?.body ?? '' };
}

const cpuMsSince = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};
const stdoutBytes = () => fstatSync(1).size;
const rssMb = () => process.memoryUsage.rss() / 2 ** 20;

function send(report: ChildReport): Promise<void> {
  return new Promise((resolve) => {
    // The parent answers `go` once it has read its counters.
    process.once('message', () => resolve());
    process.send?.(report);
  });
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.env.SIZE_CHILD_SPEC ?? '') as ChildSpec;
  installAwsLambda();

  const coldCpu = process.cpuUsage();
  const coldStart = performance.now();
  const { handler } = (await import(pathToFileURL(spec.bundle).href)) as { handler: Handler };
  await send({ phase: 'cold', wallMs: performance.now() - coldStart, cpuMs: cpuMsSince(coldCpu), rssMb: rssMb() });
  if (spec.coldOnly) process.exit(0);

  let logStart = stdoutBytes();
  const firstCpu = process.cpuUsage();
  const firstStart = performance.now();
  const first = await invoke(handler, spec, 0);
  await send({
    phase: 'first',
    wallMs: performance.now() - firstStart,
    cpuMs: cpuMsSince(firstCpu),
    status: first.status,
    logBytes: stdoutBytes() - logStart,
    answer: first.body.slice(0, 600),
  });

  logStart = stdoutBytes();
  const cpuMs: number[] = [];
  const wallMs: number[] = [];
  const statuses: Record<string, number> = {};
  for (let i = 1; i <= spec.requests; i++) {
    const cpu = process.cpuUsage();
    const start = performance.now();
    const { status } = await invoke(handler, spec, i);
    wallMs.push(performance.now() - start);
    cpuMs.push(cpuMsSince(cpu));
    statuses[status] = (statuses[status] ?? 0) + 1;
  }
  await send({
    phase: 'warm',
    requests: spec.requests,
    cpuMs,
    wallMs,
    statuses,
    logBytes: stdoutBytes() - logStart,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    rssMb: rssMb(),
  });
  process.exit(0);
}

main().catch(async (error: unknown) => {
  process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
  process.send?.({ phase: 'error', message: String((error as Error)?.message ?? error) } satisfies ChildReport, undefined, {}, () => process.exit(1));
});
