/**
 * 2,000 varied requests through a gateway of their own (four models, ten users, failures, latencies
 * from a few ms to 200 ms), then every groupBy with every column, unfiltered and filtered, against
 * sums of the raw records read back from `GET /v1/logs`: counts, tokens and cost exact,
 * percentiles within the sketch's 1%. Run by `npm run test:batches` with the other heavy runs; too
 * long for `npm test`.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { columns, expectRowsMatch, groupOf } from '../support/analytics-sums';
import { stackAdminKey, startBatchStack, type BatchStack } from '../support/batch-stack';

const heavy = !!process.env.GATEWAY_HEAVY_TESTS;
const total = 2_000;
const models = ['gpt-4o-mini', 'gpt-4o', 'gpt-4.1-mini', 'gpt-4.1'];

let stack: BatchStack;
beforeAll(async () => {
  if (heavy) stack = await startBatchStack();
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const get = async (path: string) => {
  const response = await fetch(`${stack.gateway.url}${path}`, { headers: { 'x-gateway-api-key': stackAdminKey } });
  const body = (await response.json()) as any;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
};

async function send(n: number): Promise<void> {
  const prefix = `/exact${n}`;
  const model = models[n % models.length]!;
  const status = n % 13 === 5 ? 500 : n % 17 === 2 ? 429 : 200;
  const [prompt, completion] = [3 + (n % 23), 1 + (n % 7)];
  stack.upstream.script(prefix, [
    status === 200
      ? {
          status,
          delayMs: (n * 31) % 200,
          json: {
            id: `chatcmpl-${n}`,
            object: 'chat.completion',
            created: 1,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
          },
        }
      : { status, delayMs: (n * 7) % 50, json: { error: { message: 'failed', type: 'server_error' } } },
  ]);
  const response = await fetch(`${stack.gateway.url}/chat/completions`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-gateway-api-key': stackAdminKey,
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-exact',
      'x-gateway-custom-host': `${stack.upstream.url}${prefix}/v1`,
      'x-gateway-config': JSON.stringify({ retry: { attempts: 0 } }),
      'x-gateway-metadata': JSON.stringify(n % 10 === 9 ? {} : { _user: `user-${n % 10}` }),
    },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: `question ${n}` }] }),
  });
  await response.text();
}

async function inferenceRecords(): Promise<any[]> {
  const found: any[] = [];
  for (let after = ''; ; ) {
    const page = await get(`/logs?limit=100${after ? `&after=${after}` : ''}`);
    found.push(...page.data.filter((record: any) => record.inference));
    if (!page.has_more) return found;
    after = page.last_id;
  }
}

it.skipIf(!heavy)(
  'answers groups of 2,000 varied requests exactly as their raw records sum',
  async () => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < total) await send(next++);
      }),
    );
    let records: any[] = [];
    for (const deadline = Date.now() + 300_000; records.length < total && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 2000));
      records = await inferenceRecords();
    }
    expect(records).toHaveLength(total);

    const groupings: [string, (record: any) => string | null | undefined][] = [
      ['ai_service', (record) => record.provider],
      ['model', (record) => record.model],
      ['status_code', (record) => String(record.status)],
      ['api_key', (record) => record.api_key_id],
      ['workspace', (record) => record.workspace_id],
      ['metadata._user', (record) => record.metadata?._user],
    ];
    const filters: [string, (record: any) => boolean][] = [
      ['', () => true],
      ['&model=gpt-4o', (record) => record.model === 'gpt-4o'],
      ['&metadata._user=user-3', (record) => record.metadata?._user === 'user-3'],
      ['&status_code=2xx&model=gpt-4.1', (record) => record.status < 300 && record.model === 'gpt-4.1'],
    ];
    for (const [filter, keep] of filters) {
      for (const [groupBy, pick] of groupings) {
        const answer = await get(`/analytics/groups/${groupBy}?columns=${columns.join(',')}${filter}`);
        try {
          expectRowsMatch(answer.data, groupBy, groupOf(records.filter(keep), pick));
        } catch (error) {
          // Which part of the filtered records the rollups miss: their requests by user and by status, both ways.
          const breakdown: string[] = [];
          for (const [by, of] of [
            ['metadata._user', (record: any) => record.metadata?._user],
            ['status_code', (record: any) => String(record.status)],
          ] as const) {
            const rolled = await get(`/analytics/groups/${by}?${filter.slice(1)}`);
            const raw = groupOf(records.filter(keep), of);
            breakdown.push(
              `${by}: rollups ${JSON.stringify(rolled.data.map((row: any) => [row[by], row.requests]))}, records ${JSON.stringify([...raw].map(([value, group]) => [value, group.length]))}`,
            );
          }
          throw new Error(`${(error as Error).message}\nUnder "${filter}":\n${breakdown.join('\n')}`);
        }
      }
    }
  },
  900_000,
);
