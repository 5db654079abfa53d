/**
 * A 1,000-line batch that meets every fault at once, and still ends `completed` with each request
 * written exactly once: chunk messages delivered twice, the gateway killed (SIGKILL) while its
 * workers are half-way through chunks and started again, lines whose provider call fails, a
 * message no worker can read (it goes to the dead-letter queue after the redrive count), and a
 * chunk handed to the dead-letter worker as a poisoned chunk would be. Run by `npm run
 * test:batches` (CI runs it once); too long for `npm test`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chatLine, readJsonLines, startBatchStack, uploadBatchInput, waitForBatch, type BatchStack } from '../support/batch-stack';

const lines = 1_000;
const chunkLines = 50;
/** Lines whose provider answers 500: every 97th. */
const failing = (index: number) => index % 97 === 50;
/** The chunk given to the dead-letter worker: its lines without a result are given up. */
const poisonedChunk = 13;

let stack: BatchStack;
beforeAll(async () => {
  if (!process.env.GATEWAY_HEAVY_TESTS) return;
  stack = await startBatchStack({
    env: {
      GATEWAY_BATCH_CHUNK_LINES: String(chunkLines),
      GATEWAY_BATCH_LINE_CONCURRENCY: '4',
      GATEWAY_BATCH_LEASE_SECONDS: '3',
      GATEWAY_LOCAL_QUEUE_VISIBILITY_SECONDS: '2',
      GATEWAY_LOCAL_QUEUE_CONCURRENCY: '4',
    },
  });
}, 60_000);
afterAll(() => stack?.stop(), 30_000);

it.runIf(process.env.GATEWAY_HEAVY_TESTS)(
  'completes a 1,000-line batch through duplicates, a crash, provider failures and poison, each line once',
  async () => {
    const ids = Array.from({ length: lines }, (_, index) => `line-${String(index).padStart(4, '0')}`);
    const input = await uploadBatchInput(
      stack.files,
      ids.map((id, index) => chatLine(id, `request ${index}`, failing(index) ? 'error-500' : 'gpt-4o-mini')),
    );
    // Every line waits a little at the provider, so the crash finds chunks half-way.
    stack.upstream.script(
      '/lines/v1/chat/completions',
      Array.from({ length: 3_000 }, () => ({ handle: slowEcho })),
    );
    const created = await stack.batches.batches.create({ input_file_id: input, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const workspaceId = await stack.workspaceId();
    await waitForBatch(stack.batches, created.id, (batch) => batch.status === 'in_progress', 30_000);

    // Every chunk message a second time; a message no worker can read; a chunk given up as poisoned.
    const chunk = (number: number) => JSON.stringify({ kind: 'chunk', workspace_id: workspaceId, batch_id: created.id, chunk: number });
    for (let number = 0; number < lines / chunkLines; number++) await stack.sendToQueue('batch-chunk', chunk(number));
    await stack.sendToQueue('batch-chunk', 'not a batch message');
    await stack.sendToQueue('batch-chunk-dlq', chunk(poisonedChunk));

    // The gateway dies with chunks half-way, then starts again on the same queues and tables.
    await waitForBatch(stack.batches, created.id, (batch) => (batch.request_counts?.completed ?? 0) >= 150, 60_000);
    const firstRun = stack.gateway;
    stack.killGateway();
    await new Promise((resolve) => firstRun.process.once('exit', resolve));
    await stack.startGateway();

    const batch = await waitForBatch(
      stack.batches,
      created.id,
      (candidate) => ['completed', 'failed', 'expired', 'cancelled'].includes(candidate.status),
      240_000,
    );
    expect(batch.status).toBe('completed');

    const output = await readJsonLines(stack.files, batch.output_file_id);
    const errors = await readJsonLines(stack.files, batch.error_file_id);
    const written = [...output, ...errors].map((line) => line.custom_id);
    expect(written).toHaveLength(lines);
    expect(new Set(written).size).toBe(lines);
    expect(new Set(written)).toEqual(new Set(ids));
    expect(batch.request_counts).toEqual({ total: lines, completed: output.length, failed: errors.length });

    expect(output.every((line) => line.response.status_code === 200 && line.error === null)).toBe(true);
    const poisoned = errors.filter((line) => line.error?.code === 'batch_chunk_failed');
    const refused = errors.filter((line) => line.response?.status_code === 500);
    expect(poisoned.length + refused.length).toBe(errors.length);
    const inPoisonedChunk = (id: string) => Math.floor(Number(id.slice(5)) / chunkLines) === poisonedChunk;
    expect(poisoned.every((line) => inPoisonedChunk(line.custom_id))).toBe(true);
    const failingIds = ids.filter((_, index) => failing(index));
    expect(refused.map((line) => line.custom_id).sort()).toEqual(failingIds.filter((id) => !poisoned.some((line) => line.custom_id === id)));

    // The unreadable message went to the dead-letter queue after its redrive count, and was dropped there.
    const logs = () => `${firstRun.errors()}${stack.gateway.errors()}`;
    const deadline = Date.now() + 60_000;
    while (!logs().includes('"dropped":true') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250));
    expect(logs()).toContain('"type":"gateway.batch_dead_letter","dropped":true');

    console.log(
      `batch faults: ${output.length} answered, ${refused.length} refused by the provider, ${poisoned.length} given up with the poisoned chunk; ` +
        `${calls} provider calls for ${lines - poisoned.length} lines run (a line is called again only when the crash came between its answer and its write)`,
    );
  },
  420_000,
);

let calls = 0;
async function slowEcho(_request: unknown, response: import('node:http').ServerResponse, recorded: { json?: unknown }) {
  calls++;
  await new Promise((resolve) => setTimeout(resolve, 20));
  const body = recorded.json as { model: string; messages: { content: string }[] };
  if (body.model.startsWith('error-')) {
    response
      .writeHead(500, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: 'The fake provider failed.', type: 'server_error', code: null } }));
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      id: `chatcmpl-${calls}`,
      object: 'chat.completion',
      created: 1,
      model: body.model,
      choices: [{ index: 0, message: { role: 'assistant', content: `echo: ${body.messages.at(-1)?.content}` }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
    }),
  );
}
