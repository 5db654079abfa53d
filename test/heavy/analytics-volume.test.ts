/**
 * What a groups query costs at volume: 10,000 records over 30 days (stored, and added into their
 * rollups as the log ingest adds them), and 1,000,000 records' worth of rollup items written
 * directly. Prints the time and items read of 30-day queries; asserts that the items read depend on
 * hours × group values, not on the records. Run by `npm run test:batches` with the other heavy
 * runs; too long for `npm test`.
 */
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { newId } from '../../lib/core/ids';
import { startEmulators, type RunningEmulators } from '../../lib/local/emulators/emulators';
import { latencyBucket } from '../../lib/observability/log-dimensions';
import { groupRows, groupsQuery } from '../../lib/observability/log-queries';
import { hourOf, logFilters, rollupAdds } from '../../lib/observability/log-rollups';
import { writeInBatches } from '../../lib/store/batch-write';
import { dynamoClient, resetClients } from '../../lib/store/clients';
import { logIndexKey, rollupKey } from '../../lib/store/keys';
import { queryRollups } from '../../lib/store/log-rollups';
import { listLogsFiltered } from '../../lib/store/request-logs';

const heavy = !!process.env.GATEWAY_HEAVY_TESTS;
const logsTable = 'analytics-volume-logs';
const hourMs = 3_600_000;
const models = ['gpt-4o-mini', 'gpt-4o', 'claude-3-5-sonnet', 'mistral-large', 'gemini-1.5-pro'];

let emulators: RunningEmulators;
let dataDir: string;
const savedEnv = { ...process.env };

beforeAll(async () => {
  if (!heavy) return;
  dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-analytics-'));
  emulators = await startEmulators({ dataDir });
  Object.assign(process.env, { GATEWAY_MODE: 'local', GATEWAY_DYNAMODB_ENDPOINT: emulators.endpoints.dynamodb, GATEWAY_LOGS_TABLE: logsTable });
  resetClients();
  const keys = (name: string) => [
    { AttributeName: `${name}pk`, KeyType: 'HASH' as const },
    { AttributeName: `${name}sk`, KeyType: 'RANGE' as const },
  ];
  await dynamoClient().send(
    new CreateTableCommand({
      TableName: logsTable,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: ['pk', 'sk', 'gsi1pk', 'gsi1sk', 'gsi2pk', 'gsi2sk'].map((name) => ({ AttributeName: name, AttributeType: 'S' as const })),
      KeySchema: keys(''),
      GlobalSecondaryIndexes: ['gsi1', 'gsi2'].map((name) => ({ IndexName: name, KeySchema: keys(name), Projection: { ProjectionType: 'ALL' as const } })),
    }),
  );
}, 60_000);

afterAll(async () => {
  if (!heavy) return;
  process.env = { ...savedEnv };
  resetClients();
  await emulators.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Median ms of `runs` calls. */
async function timed(runs: number, call: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let n = 0; n < runs; n++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return Math.round(times.sort((a, b) => a - b)[Math.floor(runs / 2)]! * 10) / 10;
}

const thirtyDays = (now: number) => ({ start_time: String(Math.floor((now - 30 * 24 * hourMs) / 1000)), end_time: String(Math.floor(now / 1000)) });

it.skipIf(!heavy)(
  'answers 30 days of 10,000 records and of 1,000,000 records from rollup items, reading hours × group values',
  async () => {
    const now = Date.now();
    // 10,000 records over 30 days: stored with their index items, their rollup adds summed per item and written.
    const small = `ws_${newId('x').slice(2)}`;
    const merged = new Map<
      string,
      { key: { pk: string; sk: string }; index?: { pk: string; sk: string }; fields?: Record<string, string>; add: Record<string, number> }
    >();
    const writes = [];
    for (let n = 0; n < 10_000; n++) {
      const at = now - 30 * 24 * hourMs + Math.floor((n / 10_000) * 30 * 24 * hourMs);
      const id = newId('log', at);
      const record = {
        type: 'gateway.request' as const,
        id,
        trace_id: id,
        workspace_id: small,
        api_key_id: `key_${n % 3}`,
        inference: true as const,
        provider: 'openai',
        model: models[n % models.length]!,
        metadata: { _user: `user-${n % 20}` },
        method: 'POST',
        path: '/v1/chat/completions',
        status: n % 50 === 0 ? 500 : 200,
        latency_ms: 50 + (n % 400),
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        cost: 0.00001,
        request_id: id,
        started_at: new Date(at).toISOString(),
        created_at: new Date(at + 100).toISOString(),
      };
      const filters = logFilters(record);
      const fields = Object.fromEntries(
        Object.entries(filters.fields).map(([name, value]) => [
          name,
          typeof value === 'number'
            ? { N: String(value) }
            : typeof value === 'string'
              ? { S: value }
              : { M: Object.fromEntries(Object.entries(value).map(([k, v]) => [k, { S: v }])) },
        ]),
      );
      writes.push({ PutRequest: { Item: { pk: { S: `WS#${small}` }, sk: { S: `LOG#${id}` }, record: { S: JSON.stringify(record) }, ...fields } } });
      for (const { dimension, value } of filters.index)
        writes.push({ PutRequest: { Item: { pk: { S: logIndexKey.partition(small, dimension, value) }, sk: { S: `LOG#${id}` }, ...fields } } });
      for (const add of rollupAdds(record)!) {
        const key = `${add.key.pk}\n${add.key.sk}`;
        const into = merged.get(key) ?? { key: add.key, index: add.index, fields: add.fields, add: {} };
        for (const [name, value] of Object.entries(add.add)) into.add[name] = (into.add[name] ?? 0) + Number(value);
        merged.set(key, into);
      }
    }
    for (const item of merged.values()) {
      const attributes: Record<string, any> = { pk: { S: item.key.pk }, sk: { S: item.key.sk } };
      if (item.index) Object.assign(attributes, { gsi2pk: { S: item.index.pk }, gsi2sk: { S: item.index.sk } });
      for (const [name, value] of Object.entries(item.fields ?? {})) attributes[name] = { S: value };
      for (const [name, value] of Object.entries(item.add)) attributes[name] = { N: String(value) };
      writes.push({ PutRequest: { Item: attributes } });
    }
    const writeStarted = performance.now();
    await writeInBatches(logsTable, writes, 'volume items');
    console.log(`10k: ${writes.length} items written (${merged.size} rollup items) in ${Math.round(performance.now() - writeStarted)} ms`);

    const range = thirtyDays(now);
    const columns = 'cost,total_tokens,avg_latency,p95_latency,p99_latency,success_rate,error_count,last_seen';
    const query = groupsQuery('model', { ...range, columns });
    const rows = await groupRows([small], query);
    expect(rows.reduce((total, row) => total + (row.requests as number), 0)).toBe(10_000);
    const itemsRead = (await queryRollups({ partition: rollupKey.view(small, undefined, 'model') }, query.fromHour, query.toHour)).length;
    const filtered = groupsQuery('model', { ...range, columns, 'metadata._user': 'user-3' });
    const filteredItems = (
      await queryRollups(
        { partition: rollupKey.view(small, { dimension: 'user', value: 'user-3' }, 'model'), index: 'gsi2' },
        filtered.fromHour,
        filtered.toHour,
      )
    ).length;
    const twoFilters = groupsQuery('model', { ...range, columns, 'metadata._user': 'user-3', status_code: '2xx' });
    console.log(
      `10k records, groupBy=model 30 days: ${await timed(5, () => groupRows([small], query))} ms, ${itemsRead} items; ` +
        `with metadata._user: ${await timed(5, () => groupRows([small], filtered))} ms, ${filteredItems} items; ` +
        `with two filters (cells): ${await timed(5, () => groupRows([small], twoFilters))} ms; ` +
        `GET /v1/logs?model=gpt-4o&limit=100 page: ${await timed(5, () => listLogsFiltered(small, { index: { dimension: 'model', value: 'gpt-4o' }, conditions: [], fromId: 'log_0', toId: 'log_z', limit: 100 }))} ms`,
    );
    expect(itemsRead).toBeLessThanOrEqual(models.length * 721);

    // 1,000,000 records' worth: every hour of 30 days, each model, written as rollup items directly.
    const large = `ws_${newId('x').slice(2)}`;
    const items = [];
    const hours = 30 * 24;
    const perItem = Math.ceil(1_000_000 / (hours * models.length));
    for (let h = 0; h < hours; h++) {
      const hour = hourOf(now - h * hourMs);
      for (const model of models) {
        items.push({
          PutRequest: {
            Item: {
              pk: { S: rollupKey.view(large, undefined, 'model') },
              sk: { S: rollupKey.sort(hour, model) },
              requests: { N: String(perItem) },
              total_tokens: { N: String(perItem * 15) },
              cost: { N: (perItem * 0.00001).toFixed(9) },
              ok: { N: String(perItem) },
              latency_sum: { N: String(perItem * 250) },
              first_seen: { S: `${hour}:00:00.000Z` },
              last_seen: { S: `${hour}:59:59.000Z` },
              ...Object.fromEntries(Array.from({ length: 60 }, (_, b) => [`h_${latencyBucket(50 + b * 7)}`, { N: String(Math.ceil(perItem / 60)) }])),
            },
          },
        });
      }
    }
    await writeInBatches(logsTable, items, 'volume rollups');
    const largeQuery = groupsQuery('model', { ...range, columns });
    const largeRows = await groupRows([large], largeQuery);
    const largeItems = (await queryRollups({ partition: rollupKey.view(large, undefined, 'model') }, largeQuery.fromHour, largeQuery.toHour)).length;
    expect(largeRows.reduce((total, row) => total + (row.requests as number), 0)).toBeGreaterThanOrEqual(1_000_000);
    console.log(
      `1M records (${items.length} rollup items written directly), groupBy=model 30 days: ${await timed(5, () => groupRows([large], largeQuery))} ms, ${largeItems} items`,
    );
    expect(largeItems).toBeLessThanOrEqual(models.length * 721);
  },
  900_000,
);
