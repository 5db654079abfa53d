import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/core/ids';
import { subscriptionEvent } from '../../lib/local/triggers/log-delivery';
import { ingestLogEvent } from '../../lib/observability/log-ingest';
import { dynamoClient } from '../../lib/store/clients';
import { gatewayFetch, readTrace, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore } from '../support/gateway-store';

const store = connectToGatewayStore();
const logsTable = 'llm-gateway-local-logs';

const chatHeaders = { 'content-type': 'application/json', 'x-gateway-provider': 'openai', authorization: 'Bearer sk-test' };

/** Sends `count` cheap pass-through requests that name the trace, a few at a time. */
async function sendTraced(traceId: string, count: number): Promise<void> {
  for (let sent = 0; sent < count; sent += 20) {
    const batch = Array.from({ length: Math.min(20, count - sent) }, async () => {
      const response = await gatewayFetch('/models', {
        headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-trace-id': traceId },
      });
      expect(response.status).toBe(200);
      await response.text();
    });
    await Promise.all(batch);
  }
}

const traceLogs = async (traceId: string, query = '') => (await gatewayFetch(`/logs/${encodeURIComponent(traceId)}${query}`)).json();

describe('request logs', () => {
  it('records trace, spans, metadata, key, provider, model, status, latency, usage and path', async () => {
    const traceId = `log-${Date.now()}`;
    const response = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: {
        ...chatHeaders,
        'x-gateway-trace-id': traceId,
        'x-gateway-span-id': 'span-1',
        'x-gateway-parent-span-id': 'span-0',
        'x-gateway-span-name': 'answer',
        'x-gateway-metadata': JSON.stringify({ _user: 'alice', env: 'ci' }),
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'log me' }] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-gateway-trace-id')).toBe(traceId);
    await response.text();
    const [log] = await waitForLogs(traceId);
    expect(log).toMatchObject({
      trace_id: traceId,
      span_id: 'span-1',
      parent_span_id: 'span-0',
      span_name: 'answer',
      metadata: { _user: 'alice', env: 'ci' },
      provider: 'openai',
      model: 'gpt-4o-mini',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      stream: false,
    });
    expect(log.workspace_id).toMatch(/^ws_/);
    expect(log.api_key_id).toMatch(/^key_/);
    expect(log.latency_ms).toBeGreaterThan(0);
    expect(log.usage.prompt_tokens).toBeGreaterThan(0);
    expect(log.usage.total_tokens).toBe(log.usage.prompt_tokens + log.usage.completion_tokens);
  });

  it('logs failed requests too', async () => {
    const traceId = `log-fail-${Date.now()}`;
    const response = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...chatHeaders, 'x-gateway-trace-id': traceId },
      body: JSON.stringify({ model: 'error-500', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(response.status).toBe(500);
    const invalid = await gatewayFetch('/chat/completions', { method: 'POST', headers: { ...chatHeaders, 'x-gateway-trace-id': traceId }, body: '{' });
    expect(invalid.status).toBe(400);
    const logs = await waitForLogs(traceId, { count: 2 });
    expect(logs.map((log) => log.status).sort()).toEqual([400, 500]);
    expect(logs.find((log) => log.status === 500).error.message).toBeTruthy();
  });

  it('logs pass-through requests and lists recent logs newest first', async () => {
    const traceId = `log-pt-${Date.now()}`;
    const response = await gatewayFetch('/models', { headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-trace-id': traceId } });
    expect(response.status).toBe(200);
    await response.text();
    const [log] = await waitForLogs(traceId);
    expect(log).toMatchObject({ path: '/v1/models', method: 'GET', provider: 'openai', status: 200 });

    const list = await (await gatewayFetch('/logs?limit=5')).json();
    expect(list.object).toBe('list');
    expect(list.data.length).toBeGreaterThan(0);
    const ids = list.data.map((entry: any) => entry.id);
    expect([...ids].sort().reverse()).toEqual(ids);
    const next = await (await gatewayFetch(`/logs?limit=5&after=${list.last_id}`)).json();
    for (const entry of next.data) expect(entry.id < list.last_id).toBe(true);
  });

  it('names the trace of an untraced request by its log id, finds it without a trace index entry, and continues it', async () => {
    const first = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: chatHeaders,
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] }),
    });
    expect(first.status).toBe(200);
    await first.text();
    const traceId = first.headers.get('x-gateway-trace-id')!;
    expect(traceId).toMatch(/^log_[0-9a-z]{26}$/);
    const [own] = await waitForLogs(traceId);
    expect(own).toMatchObject({ id: traceId, trace_id: traceId, status: 200 });
    const item = await dynamoClient().send(
      new GetItemCommand({ TableName: logsTable, Key: { pk: { S: `WS#${store.workspaceId}` }, sk: { S: `LOG#${traceId}` } } }),
    );
    expect(item.Item?.record?.S).toContain(traceId);
    expect(item.Item?.gsi1pk).toBeUndefined();

    // A later request that names the trace joins it: the index holds it, the first is found by key.
    const second = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...chatHeaders, 'x-gateway-trace-id': traceId },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'two' }] }),
    });
    expect(second.headers.get('x-gateway-trace-id')).toBe(traceId);
    await second.text();
    const logs = await waitForLogs(traceId, { count: 2 });
    expect(logs).toHaveLength(2);
    expect(logs[1].id).toBe(traceId);
    expect(logs[0].id > logs[1].id).toBe(true);
    expect(logs.every((log) => log.trace_id === traceId)).toBe(true);
  });

  it('does not count a record whose id is asked for as a trace when it belongs to another trace', async () => {
    const named = `log-named-${Date.now()}`;
    const response = await gatewayFetch('/models', { headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-trace-id': named } });
    await response.text();
    const [log] = await waitForLogs(named);
    expect((await gatewayFetch(`/logs/${log.id}`)).status).toBe(404);
  });

  it('answers 404 for an unknown trace id', async () => {
    expect((await gatewayFetch('/logs/no-such-trace')).status).toBe(404);
  });

  it('pages a trace longer than 100 records: 100 by default, the rest after last_id', async () => {
    const traceId = `log-long-${Date.now()}`;
    await sendTraced(traceId, 101);
    const all = await waitForLogs(traceId, { count: 101, timeoutMs: 10_000 });
    expect(all).toHaveLength(101);
    expect(new Set(all.map((log) => log.id)).size).toBe(101);

    const first = await traceLogs(traceId);
    expect(first).toMatchObject({ object: 'list', trace_id: traceId, has_more: true, first_id: all[0].id, last_id: all[99].id });
    expect(first.data.map((log: any) => log.id)).toEqual(all.slice(0, 100).map((log) => log.id));
    const rest = await traceLogs(traceId, `?after=${first.last_id}`);
    expect(rest).toMatchObject({ object: 'list', trace_id: traceId, has_more: false, first_id: all[100].id, last_id: all[100].id });
    expect(rest.data.map((log: any) => log.id)).toEqual([all[100].id]);

    const paged: string[] = [];
    for (let after = ''; ; ) {
      const page = await traceLogs(traceId, `?limit=40${after && `&after=${after}`}`);
      expect(page.data.length).toBeLessThanOrEqual(40);
      paged.push(...page.data.map((log: any) => log.id));
      if (!page.has_more) break;
      after = page.last_id;
    }
    expect(paged).toEqual(all.map((log) => log.id));
  });

  it('answers a trace that fits in one page as before, with the cursor fields and its feedback added', async () => {
    const traceId = `log-short-${Date.now()}`;
    await sendTraced(traceId, 2);
    const logs = await waitForLogs(traceId, { count: 2 });
    const body = await traceLogs(traceId);
    expect(Object.keys(body)).toEqual(['object', 'trace_id', 'data', 'has_more', 'first_id', 'last_id', 'feedback']);
    expect(body).toEqual({ object: 'list', trace_id: traceId, data: logs, has_more: false, first_id: logs[0].id, last_id: logs[1].id, feedback: [] });
    // Later pages carry the records only.
    expect(await traceLogs(traceId, `?after=${logs[1].id}`)).not.toHaveProperty('feedback');
    expect((await gatewayFetch(`/logs/${traceId}?limit=0`)).status).toBe(400);
    expect((await gatewayFetch(`/logs/${traceId}?limit=101`)).status).toBe(400);
  });

  it('pages a trace started without a name, its first record found by key', async () => {
    const first = await gatewayFetch('/models', { headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk' } });
    await first.text();
    const traceId = first.headers.get('x-gateway-trace-id')!;
    await sendTraced(traceId, 2);
    const all = await waitForLogs(traceId, { count: 3 });
    expect(all.map((log) => log.id).at(-1)).toBe(traceId);

    const pages: any[] = [];
    for (let after = ''; ; ) {
      const page = await traceLogs(traceId, `?limit=1${after && `&after=${after}`}`);
      pages.push(page);
      if (!page.has_more) break;
      after = page.last_id;
    }
    expect(pages.map((page) => page.data.map((log: any) => log.id))).toEqual(all.map((log) => [log.id]));
    expect(pages.map((page) => page.has_more)).toEqual([true, true, false]);
  });

  it('finds a trace whose id holds a percent sign, decoding its path parameter once', async () => {
    const traceId = `50%off-${Date.now()}`;
    await sendTraced(traceId, 1);
    const [log] = await waitForLogs(traceId);
    expect(log.trace_id).toBe(traceId);
    const unknown = await gatewayFetch('/logs/%25zz');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toMatchObject({ code: 'log_not_found' });
  });

  it('answers a malformed percent-escape in a logs path with 400, never 500', async () => {
    for (const path of ['/logs/%', '/logs/%zz', '/logs/50%-off', '/logs/%E0%A4%A', '/logs/%ff']) {
      const response = await gatewayFetch(path);
      expect(response.status, path).toBe(400);
      expect((await response.json()).error, path).toMatchObject({ type: 'invalid_request_error', param: null, code: 'invalid_path' });
    }
  });

  it('stores a record once however often its line is delivered (a batch sent again after a log worker died)', async () => {
    process.env.GATEWAY_LOGS_TABLE = logsTable;
    const traceId = `log-redelivered-${Date.now()}`;
    const lines = [0, 1].map((index) =>
      JSON.stringify({
        type: 'gateway.request',
        id: newId('log'),
        trace_id: traceId,
        workspace_id: store.workspaceId,
        method: 'GET',
        path: '/v1/models',
        status: 200,
        latency_ms: index,
        request_id: `req-${index}`,
        created_at: new Date().toISOString(),
      }),
    );
    await ingestLogEvent(subscriptionEvent(lines, '/aws/lambda/test', 1));
    await ingestLogEvent(subscriptionEvent([lines[1], lines[0], lines[1]], '/aws/lambda/test', 3));
    const stored = await readTrace(traceId);
    expect(stored.map((log) => JSON.stringify(log)).sort()).toEqual([...lines].sort());
    const indexed = await dynamoClient().send(
      new QueryCommand({
        TableName: logsTable,
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': { S: `WS#${store.workspaceId}#TRACE#${traceId}` } },
      }),
    );
    expect(indexed.Count).toBe(2);
  });
});
