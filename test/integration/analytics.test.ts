import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/core/ids';
import { subscriptionEvent } from '../../lib/local/triggers/log-delivery';
import { ingestLogEvent } from '../../lib/observability/log-ingest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch, type TestResponse } from '../support/gateway-client';
import { columns, expectedRow, expectRowsMatch, groupOf, quantile } from '../support/analytics-sums';
import { connectToGatewayStore } from '../support/gateway-store';

connectToGatewayStore();

const json = { 'content-type': 'application/json' };

async function ok(response: TestResponse | Promise<TestResponse>): Promise<any> {
  const answered = await response;
  const body = await answered.json();
  expect(answered.status, JSON.stringify(body)).toBe(200);
  return body;
}

const as = (key: string, path: string) => gatewayFetch(path, { headers: { 'x-gateway-api-key': key } });

let upstream: FakeUpstream;
let workspace: string;
let adminKey: string;
let memberKey: string;
let otherWorkspace: string;
let otherKey: string;
let records: any[];

/** A chat answer of the fake upstream, with usage. */
const chatAnswer = (model: string, prompt: number, completion: number) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
});

/** One request through the gateway to the fake upstream, answered after `delayMs`. */
async function send(key: string, options: { model: string; user?: string; team?: string; status?: number; delayMs?: number; tokens?: [number, number] }) {
  const prefix = `/an${newId('r').slice(2, 14)}`;
  const [prompt, completion] = options.tokens ?? [10, 5];
  upstream.script(prefix, [
    options.status && options.status >= 400
      ? { status: options.status, json: { error: { message: 'failed', type: 'server_error' } }, delayMs: options.delayMs }
      : { status: 200, json: chatAnswer(options.model, prompt, completion), delayMs: options.delayMs },
  ]);
  const metadata = { ...(options.user ? { _user: options.user } : {}), ...(options.team ? { team: options.team } : {}) };
  const response = await gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: {
      ...json,
      'x-gateway-api-key': key,
      'x-gateway-provider': 'openai',
      authorization: 'Bearer sk-test',
      'x-gateway-custom-host': `${upstream.url}${prefix}/v1`,
      'x-gateway-metadata': JSON.stringify(metadata),
      'x-gateway-config': JSON.stringify({ retry: { attempts: 0 } }),
    },
    body: JSON.stringify({ model: options.model, messages: [{ role: 'user', content: 'hello' }] }),
  });
  await response.text();
  return response.status;
}

/**
 * Every record of inference requests of the caller's workspace in the last 24 h, following the
 * pages (the workspace's logs also hold the test's own reads of them).
 */
async function allLogs(key: string, filter = ''): Promise<any[]> {
  const found: any[] = [];
  for (let after = ''; ; ) {
    const page = await ok(as(key, `/logs?limit=100${filter}${after ? `&after=${after}` : ''}`));
    found.push(...page.data);
    if (!page.has_more) return found.filter((record) => record.inference);
    after = page.last_id;
  }
}

async function waitForCount(key: string, count: number): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const found = await allLogs(key);
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`${found.length} records after 20 s, ${count} expected`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const savedLogsTable = process.env.GATEWAY_LOGS_TABLE;

beforeAll(async () => {
  process.env.GATEWAY_LOGS_TABLE = 'llm-gateway-local-logs';
  upstream = await startFakeUpstream();
  const created = await ok(gatewayFetch('/workspaces', { method: 'POST', headers: json, body: JSON.stringify({ name: `Analytics ${Date.now()}` }) }));
  workspace = created.id;
  adminKey = (
    await ok(
      gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name: 'analytics admin', role: 'admin', workspace_id: workspace }) }),
    )
  ).key;
  memberKey = (
    await ok(
      gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name: 'analytics member', role: 'member', workspace_id: workspace }) }),
    )
  ).key;
  const other = await ok(gatewayFetch('/workspaces', { method: 'POST', headers: json, body: JSON.stringify({ name: `Analytics other ${Date.now()}` }) }));
  otherWorkspace = other.id;
  otherKey = (
    await ok(
      gatewayFetch('/api-keys', { method: 'POST', headers: json, body: JSON.stringify({ name: 'other admin', role: 'admin', workspace_id: otherWorkspace }) }),
    )
  ).key;

  // 36 varied requests (and one refused): two models, two users and none, a team, failures, two keys, scripted delays.
  const sent: Promise<number>[] = [];
  for (let n = 0; n < 36; n++) {
    sent.push(
      send(n % 3 === 0 ? memberKey : adminKey, {
        model: n % 2 === 0 ? 'gpt-4o-mini' : 'gpt-4o',
        user: n % 4 === 0 ? undefined : n % 4 === 1 ? 'ana' : 'bo',
        team: n % 5 === 0 ? 'red' : undefined,
        status: n % 7 === 3 ? 500 : n % 11 === 4 ? 429 : 200,
        delayMs: 5 + ((n * 37) % 120),
        tokens: [5 + (n % 9), 1 + (n % 4)],
      }),
    );
    if (sent.length % 6 === 0) await Promise.all(sent.slice(-6));
  }
  await Promise.all(sent);
  // A body that is not JSON: refused before it is routed, and still an inference request.
  const refused = await gatewayFetch('/chat/completions', { method: 'POST', headers: { ...json, 'x-gateway-api-key': adminKey }, body: '{' });
  expect(refused.status).toBe(400);
  await send(otherKey, { model: 'gpt-4o-mini', user: 'ana' });
  records = await waitForCount(adminKey, 37);
}, 60_000);

afterAll(async () => {
  if (savedLogsTable === undefined) delete process.env.GATEWAY_LOGS_TABLE;
  else process.env.GATEWAY_LOGS_TABLE = savedLogsTable;
  await upstream?.close();
});

describe('log filters', () => {
  it('filters by each parameter, newest first, as the raw records say', async () => {
    expect(records.every((record) => record.inference === true && typeof record.started_at === 'string')).toBe(true);
    const ids = (list: any[]) => list.map((record) => record.id);
    expect(ids(records)).toEqual([...ids(records)].sort().reverse());
    const cases: [string, (record: any) => boolean][] = [
      ['&provider=openai', (record) => record.provider === 'openai'],
      ['&model=gpt-4o', (record) => record.model === 'gpt-4o'],
      ['&status_code=500', (record) => record.status === 500],
      ['&status_code=4xx', (record) => record.status >= 400 && record.status < 500],
      ['&status_code=2xx', (record) => record.status < 300],
      [
        `&api_key_id=${records.find((record) => record.status === 200).api_key_id}`,
        (record) => record.api_key_id === records.find((r) => r.status === 200).api_key_id,
      ],
      ['&metadata._user=ana', (record) => record.metadata?._user === 'ana'],
      ['&metadata.team=red', (record) => record.metadata?.team === 'red'],
      [`&trace_id=${records[3].trace_id}`, (record) => record.trace_id === records[3].trace_id],
      ['&cache_status=DISABLED', (record) => record.cache_status === 'DISABLED'],
      [
        '&model=gpt-4o-mini&metadata._user=bo&status_code=2xx',
        (record) => record.model === 'gpt-4o-mini' && record.metadata?._user === 'bo' && record.status < 300,
      ],
      ['&metadata._user=ana&metadata.team=red', (record) => record.metadata?._user === 'ana' && record.metadata?.team === 'red'],
      ['&config_id=cfg_none', () => false],
      ['&prompt_id=pp_none', () => false],
    ];
    for (const [filter, keep] of cases) expect(ids(await allLogs(adminKey, filter)), filter).toEqual(ids(records.filter(keep)));
  });

  it('fills pages while matches remain, and limits the time range', async () => {
    const matching = records.filter((record) => record.model === 'gpt-4o');
    const first = await ok(as(adminKey, '/logs?model=gpt-4o&limit=4'));
    expect([first.data.length, first.has_more, first.first_id, first.last_id]).toEqual([4, true, matching[0].id, matching[3].id]);
    const second = await ok(as(adminKey, `/logs?model=gpt-4o&limit=4&after=${first.last_id}`));
    expect(second.data.map((record: any) => record.id)).toEqual(matching.slice(4, 8).map((record) => record.id));
    const oldest = records.at(-1);
    const until = Date.parse(oldest.started_at) / 1000;
    const early = await ok(as(adminKey, `/logs?end_time=${until}&start_time=${until - 60}`));
    expect(early.data.map((record: any) => record.id)).toEqual([oldest.id]);
    const none = await ok(as(adminKey, '/logs?start_time=2020-01-01T00:00:00Z&end_time=2020-01-02T00:00:00Z'));
    expect([none.data, none.has_more, none.first_id]).toEqual([[], false, null]);
  });

  it('refuses a bad value with a 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['status_code=abc', 'status_code'],
      ['status_code=6xx', 'status_code'],
      ['start_time=yesterday', 'start_time'],
      ['end_time=2026-13-45', 'end_time'],
      ['limit=0', 'limit'],
      ['after=nope', 'after'],
      ['colour=blue', 'colour'],
      ['start_time=2026-01-02T00:00:00Z&end_time=2026-01-01T00:00:00Z', 'start_time'],
    ]) {
      const response = await as(adminKey, `/logs?${query}`);
      const body = await response.json();
      expect([response.status, body.error.param], query).toEqual([400, param]);
    }
  });

  it('shows another workspace nothing of this one', async () => {
    const theirs = await allLogs(otherKey);
    expect(theirs).toHaveLength(1);
    expect(theirs[0].workspace_id).toBe(otherWorkspace);
    expect(await allLogs(otherKey, `&trace_id=${records[0].trace_id}`)).toEqual([]);
  });
});

describe('groups', () => {
  const groupings: [string, (record: any) => string | null | undefined][] = [
    ['ai_service', (record) => record.provider],
    ['provider', (record) => record.provider],
    ['model', (record) => record.model],
    ['status_code', (record) => String(record.status)],
    ['api_key', (record) => record.api_key_id],
    ['config', (record) => record.config_id],
    ['prompt', (record) => record.prompt_id],
    ['metadata._user', (record) => record.metadata?._user],
  ];

  it('answers every groupBy and column as the raw records sum, on both routes', async () => {
    for (const [groupBy, pick] of groupings) {
      for (const route of ['/analytics/groups', '/logs/groups']) {
        const answer = await ok(as(adminKey, `${route}/${groupBy}?columns=${columns.join(',')}`));
        expect(answer).toMatchObject({ object: 'list', group_by: groupBy, columns: ['requests', ...columns] });
        expect(answer.total).toBe(answer.data.length);
        expectRowsMatch(answer.data, groupBy, groupOf(records, pick));
        const requests = answer.data.map((row: any) => row.requests);
        expect(requests).toEqual([...requests].sort((a, b) => b - a));
      }
    }
    const team = await ok(as(adminKey, `/analytics/groups/metadata.team?columns=${columns.join(',')}`));
    expectRowsMatch(
      team.data,
      'metadata.team',
      groupOf(
        records.filter((record) => record.metadata?.team),
        (record) => record.metadata.team,
      ),
    );
  });

  it('combines any groupBy with one filter or several', async () => {
    const filters: [string, (record: any) => boolean][] = [
      ['model=gpt-4o-mini', (record) => record.model === 'gpt-4o-mini'],
      ['status_code=5xx', (record) => record.status >= 500],
      ['status_code=200', (record) => record.status === 200],
      ['metadata._user=ana', (record) => record.metadata?._user === 'ana'],
      ['provider=openai', (record) => record.provider === 'openai'],
      [`api_key_id=${records[0].api_key_id}`, (record) => record.api_key_id === records[0].api_key_id],
      ['model=gpt-4o&metadata._user=bo', (record) => record.model === 'gpt-4o' && record.metadata?._user === 'bo'],
      ['status_code=2xx&model=gpt-4o-mini&cache_status=DISABLED', (record) => record.status < 300 && record.model === 'gpt-4o-mini'],
    ];
    for (const [filter, keep] of filters) {
      for (const [groupBy, pick] of groupings) {
        const answer = await ok(as(adminKey, `/analytics/groups/${groupBy}?${filter}&columns=cost,total_tokens,error_count,p99_latency,first_seen,last_seen`));
        const kept = records.filter(keep);
        const byValue = groupOf(kept, pick);
        expect(answer.data.map((row: any) => [row[groupBy], row.requests, row.total_tokens, row.error_count]).sort(), `${groupBy} ${filter}`).toEqual(
          [...byValue.entries()].map(([value, group]) => [value, group.length, expectedRow(group).total_tokens, expectedRow(group).error_count]).sort(),
        );
      }
    }
  });

  it('sorts by order_by, adds series, and says the hour range it used', async () => {
    const byCost = await ok(as(adminKey, '/analytics/groups/model?columns=cost&order_by=cost'));
    expect(byCost.data.map((row: any) => row.cost)).toEqual(byCost.data.map((row: any) => row.cost).sort((a: number, b: number) => b - a));
    const ascending = await ok(as(adminKey, '/analytics/groups/model?columns=cost&order_by=-cost'));
    expect(ascending.data.map((row: any) => row.model)).toEqual(byCost.data.map((row: any) => row.model).reverse());
    const start = new Date(Date.now() - 2 * 3_600_000 - 1_234);
    const series = await ok(as(adminKey, `/analytics/groups/model?columns=total_tokens&interval=hour&start_time=${start.toISOString()}`));
    expect(series.start_time).toBe(`${start.toISOString().slice(0, 13)}:00:00.000Z`);
    expect(series.end_time.endsWith(':00:00.000Z')).toBe(true);
    for (const row of series.data) {
      expect(row.series.length).toBeGreaterThanOrEqual(3);
      expect(row.series.reduce((total: number, point: any) => total + point.requests, 0)).toBe(row.requests);
      expect(row.series.reduce((total: number, point: any) => total + point.total_tokens, 0)).toBe(row.total_tokens);
    }
    const daily = await ok(as(adminKey, '/analytics/groups/model?interval=day'));
    for (const row of daily.data) expect(row.series.reduce((total: number, point: any) => total + point.requests, 0)).toBe(row.requests);
    const plain = await ok(as(adminKey, '/analytics/groups/model'));
    expect(Object.keys(plain.data[0]).sort()).toEqual(['model', 'requests']);
  });

  it('refuses what a groups route cannot answer with a 400 naming the parameter', async () => {
    for (const [path, param] of [
      ['/analytics/groups/colour', 'groupBy'],
      ['/analytics/groups/model?columns=cost,speed', 'columns'],
      ['/analytics/groups/model?interval=week', 'interval'],
      ['/analytics/groups/model?order_by=cost', 'order_by'],
      ['/analytics/groups/model?trace_id=x', 'trace_id'],
      ['/analytics/groups/model?metadata.team=red', 'metadata.team'],
      ['/logs/groups/model?limit=5', 'limit'],
      ['/logs/groups/model?status_code=9', 'status_code'],
      ['/logs/groups/model?start_time=soon', 'start_time'],
    ]) {
      const response = await as(adminKey, path);
      const body = await response.json();
      expect([response.status, body.error.param], path).toEqual([400, param]);
    }
  });

  it('groups by workspace: every workspace of the organisation for owners, only their own for others', async () => {
    const owner = await ok(gatewayFetch('/analytics/groups/workspace?columns=total_tokens'));
    const byWorkspace = new Map(owner.data.map((row: any) => [row.workspace, row]));
    expect((byWorkspace.get(workspace) as any).requests).toBe(records.length);
    expect((byWorkspace.get(otherWorkspace) as any).requests).toBe(1);
    for (const key of [adminKey, memberKey]) {
      const mine = await ok(as(key, '/analytics/groups/workspace?columns=total_tokens'));
      expect(mine.data.map((row: any) => [row.workspace, row.requests])).toEqual([[workspace, records.length]]);
    }
    const filtered = await ok(as(adminKey, '/analytics/groups/workspace?model=gpt-4o&columns=total_tokens'));
    const gpt4o = records.filter((record) => record.model === 'gpt-4o');
    expect(filtered.data).toEqual([
      { workspace, requests: gpt4o.length, total_tokens: gpt4o.reduce((total, record) => total + (record.usage?.total_tokens ?? 0), 0) },
    ]);
    const twoFilters = await ok(as(adminKey, '/analytics/groups/workspace?model=gpt-4o&metadata._user=ana'));
    expect(twoFilters.data).toEqual([{ workspace, requests: gpt4o.filter((record) => record.metadata?._user === 'ana').length }]);
    const theirs = await ok(as(otherKey, '/analytics/groups/model'));
    expect(theirs.data).toEqual([{ model: 'gpt-4o-mini', requests: 1 }]);
  });
});

describe('rollups', () => {
  /** A record as the gateway writes it, for a workspace of nobody's (so its sums start empty). */
  function syntheticRecord(workspaceId: string, latency: number, at: number) {
    const id = newId('log', at);
    return {
      type: 'gateway.request',
      id,
      trace_id: id,
      workspace_id: workspaceId,
      organisation_id: 'org_synthetic',
      api_key_id: 'key_synthetic',
      inference: true,
      provider: 'openai',
      model: 'gpt-4o-mini',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      latency_ms: latency,
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
      cost: 0.000001,
      request_id: id,
      started_at: new Date(at).toISOString(),
      created_at: new Date(at + latency).toISOString(),
    };
  }

  const ingest = (lines: object[], sequence: number) =>
    ingestLogEvent(
      subscriptionEvent(
        lines.map((line) => JSON.stringify(line)),
        'test',
        sequence,
      ) as never,
    );

  it('counts a record delivered twice once, alone or in a batch with new ones', async () => {
    const workspaceId = `ws_${newId('x').slice(2)}`;
    const now = Date.now();
    const [a, b, c] = [0, 1, 2].map((n) => syntheticRecord(workspaceId, 100 + n, now - 1000 + n));
    expect(await ingest([a], 1)).toEqual({ stored: 1, skipped: 0 });
    expect(await ingest([a], 2)).toEqual({ stored: 0, skipped: 1 });
    expect(await ingest([b, a, c, b], 3)).toEqual({ stored: 2, skipped: 2 });
    const { groupRows, groupsQuery } = await import('../../lib/observability/log-queries');
    const rows = await groupRows([workspaceId], groupsQuery('model', { columns: 'cost,total_tokens' }));
    expect(rows).toEqual([{ model: 'gpt-4o-mini', requests: 3, cost: 0.000003, total_tokens: 15 }]);
  });

  it('answers p95 and p99 within 1% of the records on a wide latency distribution', async () => {
    const workspaceId = `ws_${newId('x').slice(2)}`;
    const now = Date.now();
    // Log-normal-ish latencies from 2 ms to about 20 s, deterministic.
    const latencies = Array.from({ length: 600 }, (_, n) => Math.round(2 * Math.exp(((n * 7919) % 600) / 65) * 1000) / 1000);
    const lines = latencies.map((latency, n) => syntheticRecord(workspaceId, latency, now - 60_000 + n));
    for (let offset = 0; offset < lines.length; offset += 200) await ingest(lines.slice(offset, offset + 200), offset);
    const { groupRows, groupsQuery } = await import('../../lib/observability/log-queries');
    const [row] = await groupRows([workspaceId], groupsQuery('model', { columns: 'p95_latency,p99_latency,avg_latency' }));
    expect(row!.requests).toBe(600);
    for (const [name, q] of [
      ['p95_latency', 0.95],
      ['p99_latency', 0.99],
    ] as const) {
      const truth = quantile(latencies, q);
      expect(Math.abs((row![name] as number) - truth) / truth, name).toBeLessThanOrEqual(0.01);
    }
  }, 60_000);
});
