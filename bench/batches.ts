/**
 * Managed batch throughput (`npm run bench:batches`): lines per second from create to completed for
 * batches of 1,000 and 10,000 chat lines against an upstream that answers at once, on the local
 * runtime with its documented worker concurrency (4 chunk workers × 8 lines); the DynamoDB, SQS and
 * S3 calls per line, counted by a proxy in front of each emulator; and live chat latency at c=10
 * beside a running batch, against the same with no batch.
 *
 *   npm run bench:batches                 1,000 and 10,000 lines, then live traffic beside a batch
 *   npm run bench:batches -- --lines 2000 one batch of that size only
 *
 * The numbers are printed, never asserted.
 */
import '../lib/local/sdk-node-notice';
import { parseArgs } from 'node:util';
import { chatLine, stackAdminKey, startBatchStack, uploadBatchInput, waitForBatch, type BatchStack } from '../test/support/batch-stack';

const { values } = parseArgs({ options: { lines: { type: 'string' }, 'no-build': { type: 'boolean' } } });

async function runBatch(stack: BatchStack, lines: number): Promise<{ seconds: number; perLine: Record<string, number> }> {
  const input = await uploadBatchInput(
    stack.files,
    Array.from({ length: lines }, (_, index) => chatLine(`line-${index}`, `request ${index}`)),
  );
  stack.calls.clear();
  const started = performance.now();
  const created = await stack.batches.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
  const batch = await waitForBatch(
    stack.batches,
    created.id,
    (candidate) => ['completed', 'failed', 'expired', 'cancelled'].includes(candidate.status),
    900_000,
  );
  const seconds = (performance.now() - started) / 1000;
  if (batch.status !== 'completed' || batch.request_counts?.completed !== lines)
    throw new Error(`The batch ended ${batch.status}: ${JSON.stringify(batch.request_counts)}`);
  const perLine: Record<string, number> = {};
  for (const [action, count] of [...stack.calls].sort()) perLine[action] = count / lines;
  return { seconds, perLine };
}

/** Chat requests at concurrency 10 for `ms`: the latencies, in ms. */
async function liveTraffic(stack: BatchStack, ms: number): Promise<number[]> {
  const latencies: number[] = [];
  const until = Date.now() + ms;
  const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'live' }] });
  const headers = {
    'content-type': 'application/json',
    'x-gateway-api-key': stackAdminKey,
    'x-gateway-custom-host': `${stack.upstream.url}/live/v1`,
    authorization: 'Bearer sk-live',
  };
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (Date.now() < until) {
        const started = performance.now();
        const response = await fetch(`${stack.gateway.url}/chat/completions`, { method: 'POST', headers, body });
        await response.arrayBuffer();
        if (response.status !== 200) throw new Error(`A live request answered ${response.status}`);
        latencies.push(performance.now() - started);
      }
    }),
  );
  return latencies.sort((a, b) => a - b);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
const describeLatency = (sorted: number[]) =>
  `${sorted.length} requests, p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`;

async function main() {
  if (!values['no-build']) {
    const { spawnSync } = await import('node:child_process');
    const build = spawnSync(process.execPath, ['scripts/build.mjs', '--local'], { stdio: ['ignore', 'ignore', 'inherit'] });
    if (build.status !== 0) throw new Error('The build failed.');
  }
  const stack = await startBatchStack({ counting: true });
  try {
    const sizes = values.lines ? [Number(values.lines)] : [1_000, 10_000];
    for (const lines of sizes) {
      const { seconds, perLine } = await runBatch(stack, lines);
      console.log(`batch of ${lines} lines: ${seconds.toFixed(1)} s, ${(lines / seconds).toFixed(0)} lines/s`);
      console.log(
        `  per line: ${Object.entries(perLine)
          .map(([action, count]) => `${action} ${count.toFixed(3)}`)
          .join(', ')}`,
      );
    }
    if (values.lines) return;
    const alone = await liveTraffic(stack, 5_000);
    console.log(`live chat at c=10, no batch running: ${describeLatency(alone)}`);
    const input = await uploadBatchInput(
      stack.files,
      Array.from({ length: 10_000 }, (_, index) => chatLine(`beside-${index}`, `request ${index}`)),
    );
    const created = await stack.batches.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitForBatch(stack.batches, created.id, (batch) => (batch.request_counts?.completed ?? 0) > 500, 120_000);
    const beside = await liveTraffic(stack, 5_000);
    const during = await stack.batches.batches.retrieve(created.id);
    console.log(
      `live chat at c=10 beside a running 10,000-line batch: ${describeLatency(beside)} (the batch was ${during.status}, ${during.request_counts?.completed} lines done)`,
    );
    await stack.batches.batches.cancel(created.id).catch(() => undefined);
  } finally {
    await stack.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
