/**
 * The benchmark's Node HTTP client, run in a child process of its own so its CPU never shares an
 * event loop with anything measured:
 *
 *   node --import tsx bench/client.ts '<json job>'
 *
 * Jobs (`mode`):
 *   ttfc  {url, headers, body, count, warmup}: `count` streamed requests one after another on one
 *         keep-alive connection (after `warmup` more, then a line `BENCH_WARM`); per request the
 *         time to the response headers, to the first body bytes (the first streamed chunk) and to
 *         the last byte.
 *   load  {url, headers, body, connections, durationSec}: closed-loop load, the fallback when `wrk`
 *         is not installed.
 *   bodies {url, headers, bodies, warmup}: one request per entry of `bodies`, one after another on
 *         one keep-alive connection; the first `warmup` are not counted (then a line `BENCH_WARM`).
 *         The total time of each, and how many were not answered `x-gateway-cache-status: HIT`.
 * Prints one line `BENCH_RESULT {...}` (times in milliseconds).
 */
import { Agent, request } from 'node:http';

interface Job {
  mode: 'ttfc' | 'load' | 'bodies';
  url: string;
  headers: Record<string, string>;
  body: string;
  count?: number;
  warmup?: number;
  connections?: number;
  durationSec?: number;
  bodies?: string[];
}

interface Timing {
  status: number;
  headersMs: number;
  firstChunkMs: number;
  totalMs: number;
  bytes: number;
  cacheStatus?: string;
}

function once(agent: Agent, job: Job): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const url = new URL(job.url);
    const body = Buffer.from(job.body);
    const started = performance.now();
    let headersAt = 0;
    let firstAt = 0;
    let bytes = 0;
    const req = request(
      {
        agent,
        method: 'POST',
        host: url.hostname,
        port: url.port,
        path: `${url.pathname}${url.search}`,
        headers: { ...job.headers, 'content-length': body.length },
      },
      (res) => {
        headersAt = performance.now();
        res.on('data', (chunk: Buffer) => {
          if (bytes === 0) firstAt = performance.now();
          bytes += chunk.length;
        });
        res.once('end', () => {
          const ended = performance.now();
          const cacheStatus = res.headers['x-gateway-cache-status'];
          resolve({
            status: res.statusCode ?? 0,
            headersMs: headersAt - started,
            firstChunkMs: (firstAt || ended) - started,
            totalMs: ended - started,
            bytes,
            cacheStatus: typeof cacheStatus === 'string' ? cacheStatus : undefined,
          });
        });
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

function summary(values: number[]): { p50: number; p90: number; p99: number; min: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), min: sorted[0], max: sorted.at(-1)! };
}

async function ttfc(job: Job): Promise<object> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  for (let i = 0; i < (job.warmup ?? 20); i++) await once(agent, job);
  // The parent reads the server's CPU time when it sees this, so warm-up requests are not counted.
  await new Promise<void>((resolve) => process.stdout.write('BENCH_WARM\n', () => resolve()));
  const timings: Timing[] = [];
  let failures = 0;
  let lastStatus = 0;
  for (let i = 0; i < (job.count ?? 200); i++) {
    const timing = await once(agent, job);
    if (timing.status !== 200) {
      failures += 1;
      lastStatus = timing.status;
      continue;
    }
    timings.push(timing);
  }
  agent.destroy();
  return {
    count: timings.length,
    failures,
    lastBadStatus: lastStatus || undefined,
    bytesPerResponse: timings.length ? Math.round(timings.reduce((sum, t) => sum + t.bytes, 0) / timings.length) : 0,
    headers: summary(timings.map((t) => t.headersMs)),
    firstChunk: summary(timings.map((t) => t.firstChunkMs)),
    total: summary(timings.map((t) => t.totalMs)),
  };
}

async function load(job: Job): Promise<object> {
  const connections = job.connections ?? 1;
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const latencies: number[] = [];
  let socketErrors = 0;
  let badStatus = 0;
  const started = performance.now();
  const deadline = started + (job.durationSec ?? 5) * 1000;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < deadline) {
        try {
          const timing = await once(agent, job);
          latencies.push(timing.totalMs);
          if (timing.status > 399) badStatus += 1;
        } catch {
          socketErrors += 1;
        }
      }
    }),
  );
  const durationSec = (performance.now() - started) / 1000;
  agent.destroy();
  const s = summary(latencies);
  return {
    requests: latencies.length,
    durationSec,
    rps: latencies.length / durationSec,
    p50: s.p50,
    p90: s.p90,
    p99: s.p99,
    max: s.max,
    socketErrors,
    badStatus,
  };
}

async function bodies(job: Job): Promise<object> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const all = job.bodies ?? [];
  const warmup = job.warmup ?? 0;
  for (const body of all.slice(0, warmup)) await once(agent, { ...job, body });
  await new Promise<void>((resolve) => process.stdout.write('BENCH_WARM\n', () => resolve()));
  const totals: number[] = [];
  let failures = 0;
  let notHits = 0;
  for (const body of all.slice(warmup)) {
    const timing = await once(agent, { ...job, body });
    if (timing.status !== 200) failures += 1;
    else if (timing.cacheStatus !== 'HIT') notHits += 1;
    else totals.push(timing.totalMs);
  }
  agent.destroy();
  return { count: totals.length, failures, notHits, total: summary(totals) };
}

async function readStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += chunk;
  return text || '{}';
}

async function main(): Promise<void> {
  // The job comes on stdin; an argument still works for running the client by hand.
  const job = JSON.parse(process.argv[2] ?? (await readStdin())) as Job;
  const modes = { ttfc, load, bodies };
  const result = Object.hasOwn(modes, job.mode) ? await modes[job.mode](job) : undefined;
  if (!result) throw new Error(`unknown mode ${JSON.stringify(job.mode)}`);
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(result)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench client: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
