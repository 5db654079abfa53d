import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { dynamoClient } from '../../lib/store/clients';
import { gatewayFetch, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore } from '../support/gateway-store';

const store = connectToGatewayStore();
const logsTable = 'llm-gateway-local-logs';

const chatHeaders = { 'content-type': 'application/json', 'x-gateway-provider': 'openai', authorization: 'Bearer sk-test' };

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
    const first = await gatewayFetch('/chat/completions', { method: 'POST', headers: chatHeaders, body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'one' }] }) });
    expect(first.status).toBe(200);
    await first.text();
    const traceId = first.headers.get('x-gateway-trace-id')!;
    expect(traceId).toMatch(/^log_[0-9a-z]{26}$/);
    const [own] = await waitForLogs(traceId);
    expect(own).toMatchObject({ id: traceId, trace_id: traceId, status: 200 });
    const item = await dynamoClient().send(new GetItemCommand({ TableName: logsTable, Key: { pk: { S: `WS#${store.workspaceId}` }, sk: { S: `LOG#${traceId}` } } }));
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

  it('finds a trace whose id holds a percent sign, decoding its path parameter once', async () => {
    const traceId = `50%off-${Date.now()}`;
    const response = await gatewayFetch('/models', { headers: { 'x-gateway-provider': 'openai', authorization: 'Bearer sk', 'x-gateway-trace-id': traceId } });
    await response.text();
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
});
