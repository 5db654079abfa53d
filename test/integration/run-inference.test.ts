import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../lib/config/types';
import { inferenceRequest, type InferenceCaller, type InferenceRequest } from '../../lib/inference/inference-request';
import type { JsonObject } from '../../lib/providers/types';
import { inferenceContext, runInference } from '../../lib/inference/run-inference';
import type { RequestLogRecord } from '../../lib/observability/request-log';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch } from '../support/gateway-client';
import { connectToGatewayStore, stateTable } from '../support/gateway-store';

// The core is called here as a batch worker will call it: no HTTP request, no route, no Lambda
// event; only an InferenceRequest. `inferenceContext` makes the recorder and keeps the deferred
// work, and `finish` ends both once the answer is read. The store is there as it is for any caller:
// rate-limit policies and budgets are read from it.
const store = connectToGatewayStore();
let upstream: FakeUpstream;
let previousMode: string | undefined;
let previousStateTable: string | undefined;
beforeAll(async () => {
  previousMode = process.env.GATEWAY_MODE;
  previousStateTable = process.env.GATEWAY_STATE_TABLE;
  process.env.GATEWAY_MODE = 'local';
  // Budgets and token policies count in the state table, as the gateway's functions do.
  process.env.GATEWAY_STATE_TABLE = stateTable;
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  restore('GATEWAY_MODE', previousMode);
  restore('GATEWAY_STATE_TABLE', previousStateTable);
  await upstream.close();
});

/** Puts an environment variable back as it was (assigning undefined would store "undefined"). */
function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

const caller = { organisationId: 'org_core', workspaceId: 'ws_core' };
let counter = 0;
const hostFor = (label: string) => {
  const prefix = `/core/${label}-${++counter}`;
  return { prefix, custom_host: `${upstream.url}${prefix}/v1` };
};

/** A chat line as a worker makes it: what it says, and the constructor's defaults for the rest. */
function chatRequest(config: GatewayConfig, extra: { body?: JsonObject; caller?: InferenceCaller; metadata?: Record<string, unknown> } = {}): InferenceRequest {
  return inferenceRequest({
    kind: 'unified',
    operation: 'chat',
    body: extra.body ?? { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from a worker' }] },
    caller: extra.caller ?? caller,
    options: { config: { kind: 'inline', config } },
    metadata: extra.metadata,
  });
}

/** Runs the request as a worker does; the caller reads the answer, then calls `context.finish`. */
async function run(request: InferenceRequest) {
  const context = inferenceContext(request);
  const records: RequestLogRecord[] = [];
  context.recorder.onFinish((record) => records.push(record));
  const result = await runInference(context);
  return { result, context, records };
}

describe('runInference without HTTP', () => {
  it('routes a fallback config and reports the answer, its path, its usage and its log facts', async () => {
    const first = hostFor('down');
    const second = hostFor('up');
    upstream.script(first.prefix, [{ status: 503, json: { error: { message: 'down', type: 'server_error' } } }]);
    const { result, context, records } = await run(
      chatRequest({
        strategy: { mode: 'fallback' },
        targets: [
          { provider: 'openai', api_key: 'sk-a', ...first },
          { provider: 'openai', api_key: 'sk-b', override_params: { model: 'gpt-4o' }, ...second },
        ],
      }),
    );
    expect(result.outcome.ok).toBe(true);
    expect(result.path).toBe('config.targets[1]');
    expect(result.retries).toBe(0);
    expect(result.cacheStatus).toBe('DISABLED');
    expect(result.usage?.total_tokens).toBeGreaterThan(0);
    const answer = JSON.parse(String(result.outcome.ok && result.outcome.body));
    expect(answer.choices[0].message.content).toContain('from a worker');
    expect(upstream.requests.filter((request) => request.path.startsWith(second.prefix)).map((request) => (request.json as { model: string }).model)).toEqual([
      'gpt-4o',
    ]);

    await context.finish({ status: 200, requestId: 'batch-line-1', traceId: 'trace_core' });
    expect(records).toHaveLength(1);
    // The caller and the path come from the request itself: no call on the recorder can be forgotten.
    expect(records[0]).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o',
      organisation_id: 'org_core',
      workspace_id: 'ws_core',
      method: 'POST',
      path: '/v1/chat/completions',
      status: 200,
      request_id: 'batch-line-1',
      trace_id: 'trace_core',
    });
    expect(records[0].usage?.total_tokens).toBe(result.usage?.total_tokens);
  });

  it('answers a stream as a readable body and records the usage when it ends', async () => {
    const target = hostFor('stream');
    const { result, records, context } = await run(
      chatRequest(
        { provider: 'openai', api_key: 'sk-s', ...target },
        { body: { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream it' }] } },
      ),
    );
    expect(result.outcome.ok).toBe(true);
    let text = '';
    for await (const chunk of (result.outcome as { body: Readable }).body) text += chunk;
    expect(text).toContain('data: [DONE]');
    await context.finish({ status: 200 });
    expect(records[0]).toMatchObject({ stream: true, request_id: records[0].id, trace_id: records[0].id });
    expect(records[0].usage?.total_tokens).toBeGreaterThan(0);
  });

  it('gives a provider failure as the result, and a request error as a rejection', async () => {
    const target = hostFor('fails');
    upstream.script(target.prefix, [{ status: 400, json: { error: { message: 'bad model', type: 'invalid_request_error' } } }]);
    const { result } = await run(chatRequest({ provider: 'openai', api_key: 'sk-f', ...target }));
    expect(result.outcome.ok).toBe(false);
    expect(result.outcome.status).toBe(400);

    await expect(run(chatRequest({ provider: 'no-such-provider', api_key: 'sk' }))).rejects.toMatchObject({ status: 400, code: 'unknown_provider' });
  });

  it('makes requests only through the constructor, which validates a body and fills in what a worker leaves out', () => {
    expect(() => chatRequest({ provider: 'openai' }, { body: { model: 'gpt-4o-mini', messages: [] } })).toThrow(
      expect.objectContaining({ status: 400, param: 'messages' }),
    );
    const made = chatRequest({ provider: 'openai' }, { body: { model: 'gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] } });
    expect(made).toMatchObject({
      stream: true,
      path: '/v1/chat/completions',
      headers: {},
      metadata: {},
      options: { credentials: {}, forwardHeaderNames: [], cache: { forceRefresh: false } },
    });
  });

  it('forwards a pass-through request with its method, path and query', async () => {
    const target = hostFor('pass');
    const request = inferenceRequest({
      kind: 'passthrough',
      method: 'GET',
      providerPath: 'models',
      rawQuery: 'limit=2',
      caller,
      options: { credentials: { provider: 'openai', apiKey: 'sk-p', customHost: target.custom_host } },
    });
    const { result } = await run(request);
    expect(result.outcome.status).toBe(200);
    const received = upstream.requests.filter((recorded) => recorded.path.startsWith(target.prefix));
    expect(received.map((recorded) => [recorded.method, recorded.path])).toEqual([['GET', `${target.prefix}/v1/models?limit=2`]]);
    expect(received[0].headers.authorization).toBe('Bearer sk-p');
    (result.outcome as { body: Readable }).body.resume();
  });
});

describe("a worker's line under a budget and a token policy", () => {
  const run = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const line = `line-${run}`;
  const policies: { budget?: string; tokens?: string } = {};
  const json = { 'content-type': 'application/json' };
  const scoped = { conditions: [{ key: 'metadata.line', value: line }], group_by: [{ key: 'metadata.line' }] };

  beforeAll(async () => {
    for (const [kind, path, body] of [
      ['budget', 'usage-limits', { name: `worker budget ${run}`, type: 'tokens', credit_limit: 1_000_000, ...scoped }],
      ['tokens', 'rate-limits', { name: `worker tokens ${run}`, type: 'tokens', unit: 'rph', value: 1_000_000, ...scoped }],
    ] as const) {
      const response = await gatewayFetch(`/policies/${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
      const created = await response.json();
      expect(response.status, JSON.stringify(created)).toBe(200);
      policies[kind] = created.id;
    }
  });

  const lineRequest = (target: { custom_host: string }) =>
    chatRequest(
      { provider: 'openai', api_key: 'sk-line', ...target },
      { caller: { organisationId: 'org_core', workspaceId: store.workspaceId }, metadata: { line } },
    );

  it('completes with the calls a worker makes, and its tokens are counted', async () => {
    const target = hostFor('budgeted-line');
    const context = inferenceContext(lineRequest(target));
    const result = await runInference(context);
    expect(result.outcome.ok).toBe(true);
    const tokens = result.usage?.total_tokens ?? 0;
    expect(tokens).toBeGreaterThan(0);
    await context.finish({ status: result.outcome.status, requestId: 'line-1' });

    // Settled by the time finish resolved: the budget shows exactly this line's tokens.
    const budget = await (await gatewayFetch(`/policies/usage-limits/${policies.budget}`)).json();
    expect(budget.current_usage).toBe(tokens);
  });

  it('completes whatever the caller awaits first: deferred work never waits on the finish', async () => {
    const target = hostFor('budgeted-order');
    const deferred: Promise<unknown>[] = [];
    const context = inferenceContext(lineRequest(target), { waitUntil: (work) => deferred.push(work) });
    const result = await runInference(context);
    // The order that used to hang: the caller's own deferred work first, then the finish.
    await Promise.all(deferred);
    await context.finish({ status: result.outcome.status });
    await Promise.all(deferred);
    const budget = await (await gatewayFetch(`/policies/usage-limits/${policies.budget}`)).json();
    expect(budget.current_usage).toBe(2 * (result.usage?.total_tokens ?? 0));
  });
});
