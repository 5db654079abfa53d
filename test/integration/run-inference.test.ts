import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../lib/config/types';
import type { InferenceRequest } from '../../lib/inference/inference-request';
import { inferenceContext, runInference } from '../../lib/inference/run-inference';
import { RequestRecorder } from '../../lib/observability/request-recorder';
import type { RequestLogRecord } from '../../lib/observability/request-log';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { connectToGatewayStore } from '../support/gateway-store';

// The core is called here as a batch worker or a prompt run will call it: no HTTP request, no
// route, no Lambda event; only an InferenceRequest, a recorder and a place for deferred work. The
// store is there as it is for any caller: rate-limit policies are read from it.
connectToGatewayStore();
let upstream: FakeUpstream;
let previousMode: string | undefined;
beforeAll(async () => {
  previousMode = process.env.GATEWAY_MODE;
  process.env.GATEWAY_MODE = 'local';
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  process.env.GATEWAY_MODE = previousMode;
  await upstream.close();
});

const caller = { organisationId: 'org_core', workspaceId: 'ws_core' };
let counter = 0;
const hostFor = (label: string) => {
  const prefix = `/core/${label}-${++counter}`;
  return { prefix, custom_host: `${upstream.url}${prefix}/v1` };
};

function chatRequest(config: GatewayConfig, extra: Partial<Extract<InferenceRequest, { kind: 'unified' }>> = {}): InferenceRequest {
  return {
    kind: 'unified',
    operation: 'chat',
    body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'from a worker' }] },
    stream: false,
    caller,
    options: { config: { kind: 'inline', config }, credentials: {}, forwardHeaderNames: [], cache: { forceRefresh: false } },
    metadata: {},
    path: '/v1/chat/completions',
    headers: {},
    ...extra,
  };
}

/** Runs the request and the recorder's finish, as the HTTP layer does once the answer is sent. */
async function run(request: InferenceRequest) {
  const recorder = new RequestRecorder('log_core');
  const records: RequestLogRecord[] = [];
  recorder.onFinish((record) => records.push(record));
  const deferred: Promise<unknown>[] = [];
  const result = await runInference(inferenceContext(request, { recorder, waitUntil: (work) => deferred.push(work) }));
  await Promise.all(deferred);
  return { result, recorder, records };
}

describe('runInference without HTTP', () => {
  it('routes a fallback config and reports the answer, its path, its usage and its log facts', async () => {
    const first = hostFor('down');
    const second = hostFor('up');
    upstream.script(first.prefix, [{ status: 503, json: { error: { message: 'down', type: 'server_error' } } }]);
    const { result, recorder, records } = await run(
      chatRequest({ strategy: { mode: 'fallback' }, targets: [{ provider: 'openai', api_key: 'sk-a', ...first }, { provider: 'openai', api_key: 'sk-b', override_params: { model: 'gpt-4o' }, ...second }] }),
    );
    expect(result.outcome.ok).toBe(true);
    expect(result.path).toBe('config.targets[1]');
    expect(result.retries).toBe(0);
    expect(result.cacheStatus).toBe('DISABLED');
    expect(result.usage?.total_tokens).toBeGreaterThan(0);
    const answer = JSON.parse(String(result.outcome.ok && result.outcome.body));
    expect(answer.choices[0].message.content).toContain('from a worker');
    expect(upstream.requests.filter((request) => request.path.startsWith(second.prefix)).map((request) => (request.json as { model: string }).model)).toEqual(['gpt-4o']);

    recorder.finish({ method: 'POST', path: '/v1/chat/completions', status: 200, requestId: 'batch-line-1', traceId: 'trace_core' });
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ provider: 'openai', model: 'gpt-4o', workspace_id: undefined, status: 200, request_id: 'batch-line-1', trace_id: 'trace_core' });
    expect(records[0].usage?.total_tokens).toBe(result.usage?.total_tokens);
  });

  it('answers a stream as a readable body and records the usage when it ends', async () => {
    const target = hostFor('stream');
    const { result, records, recorder } = await run(chatRequest({ provider: 'openai', api_key: 'sk-s', ...target }, { stream: true, body: { model: 'gpt-4o-mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'stream it' }] } }));
    expect(result.outcome.ok).toBe(true);
    let text = '';
    for await (const chunk of (result.outcome as { body: Readable }).body) text += chunk;
    expect(text).toContain('data: [DONE]');
    recorder.finish({ method: 'POST', path: '/v1/chat/completions', status: 200, requestId: 'r', traceId: 't' });
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

  it('forwards a pass-through request with its method, path and query', async () => {
    const target = hostFor('pass');
    const request: InferenceRequest = {
      kind: 'passthrough',
      method: 'GET',
      providerPath: 'models',
      rawQuery: 'limit=2',
      caller,
      options: { config: { kind: 'headers' }, credentials: { provider: 'openai', apiKey: 'sk-p', customHost: target.custom_host }, forwardHeaderNames: [], cache: { forceRefresh: false } },
      metadata: {},
      path: '/v1/models',
      headers: {},
    };
    const { result } = await run(request);
    expect(result.outcome.status).toBe(200);
    const received = upstream.requests.filter((recorded) => recorded.path.startsWith(target.prefix));
    expect(received.map((recorded) => [recorded.method, recorded.path])).toEqual([['GET', `${target.prefix}/v1/models?limit=2`]]);
    expect(received[0].headers.authorization).toBe('Bearer sk-p');
    (result.outcome as { body: Readable }).body.resume();
  });
});
