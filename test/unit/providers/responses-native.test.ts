/*
 * Responses requests run natively by openai and azure-openai (lib/providers/responses-format/native.ts):
 * the body each gets (the provider's own id and the new items when it holds the earlier response, the
 * whole portable conversation otherwise), the usage read from an answer and from a stream relayed byte
 * for byte, where each adapter sends the call, and whole calls over HTTP against the fakes.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../../lib/core/usage';
import { AttemptTimeout } from '../../../lib/inference/provider-body';
import { attemptProvider } from '../../../lib/inference/provider-attempt';
import { findProvider } from '../../../lib/providers/registry';
import { credentialFingerprint, type ResponsesChain } from '../../../lib/providers/responses-format/chain';
import { eventType, nativeResponsesBody, relayResponsesStream, usageFromResponses } from '../../../lib/providers/responses-format/native';
import type { ProviderCall, ProviderSettings, ResolvedTarget } from '../../../lib/providers/types';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { startFakeAzure, type FakeAzure } from '../../support/fakes/azure';
import { rejectedGatewayError } from '../../support/gateway-error';
import { parseSse } from '../../support/sse';

const openai = findProvider('openai')!;
const azure = findProvider('azure-openai')!;

function target(provider = openai, baseUrl = 'https://api.openai.com/v1', settings: ProviderSettings = { api_key: 'sk-one' }): ResolvedTarget {
  return { provider, baseUrl, settings };
}

function responsesCall(body: Record<string, unknown>, options: Partial<ProviderCall> = {}): ProviderCall {
  return {
    operation: 'responses',
    body,
    stream: body.stream === true,
    target: target(),
    forwardHeaders: {},
    requestHeaders: {},
    strictApiCompliance: true,
    ...options,
  };
}

/** A chain whose earlier response was made natively at `made` with the provider id `id`. */
function chainAt(made: ResolvedTarget, historyLength: number, id = 'resp_provider0001'): ResponsesChain {
  return { historyLength, link: { providerResponseId: id, provider: made.provider.name, baseUrl: made.baseUrl, credential: credentialFingerprint(made) } };
}

// The conversation as the gateway holds it: earlier turns with the ids it gave them, then the new turn.
const history = [
  { type: 'message', id: 'msg_gateway01', role: 'user', content: 'What is the capital of France?' },
  { type: 'reasoning', id: 'rs_gateway01', summary: [{ type: 'summary_text', text: 'thinking' }] },
  { type: 'reasoning', id: 'rs_gateway02', summary: [], encrypted_content: 'gAAAAABsealed' },
  { type: 'web_search_call', id: 'ws_gateway01', status: 'completed', action: { type: 'search', query: 'capital of France' } },
  { type: 'message', id: 'msg_gateway02', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Paris.', annotations: [] }] },
  { type: 'function_call', id: 'fc_gateway01', call_id: 'call_1', name: 'lookup', arguments: '{}', status: 'completed' },
  { type: 'function_call_output', id: 'fco_gateway01', call_id: 'call_1', output: 'ok' },
];
const newTurn = [{ type: 'message', role: 'user', content: 'And of Italy?' }];
const conversation = { model: 'gpt-4.1', input: [...history, ...newTurn], store: true };

describe('the body of a native Responses call', () => {
  it("sends the provider's own id and only the new items when the earlier response was made at the same provider, base URL and credential", () => {
    const body = nativeResponsesBody(responsesCall(conversation, { responsesChain: chainAt(target(), history.length) }));
    expect(body).toEqual({ model: 'gpt-4.1', store: true, previous_response_id: 'resp_provider0001', input: newTurn });
  });

  it.each([
    ['another base URL', target(openai, 'https://eu.api.openai.com/v1')],
    ['another credential', target(openai, 'https://api.openai.com/v1', { api_key: 'sk-two' })],
    ['another organization', target(openai, 'https://api.openai.com/v1', { api_key: 'sk-one', compat_organization: 'org-2' })],
    ['another provider', target(azure, 'https://api.openai.com/v1')],
  ])('sends the whole conversation, portable, and no previous_response_id when the link is for %s', (_case, made) => {
    const body = nativeResponsesBody(responsesCall(conversation, { responsesChain: chainAt(made, history.length) }));
    expect(body.previous_response_id).toBeUndefined();
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: 'What is the capital of France?' },
      // Reasoning without encrypted content and the provider's own search are left out; ids and statuses go.
      { type: 'reasoning', summary: [], encrypted_content: 'gAAAAABsealed' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Paris.', annotations: [] }] },
      { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: '{}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'ok' },
      ...newTurn,
    ]);
  });

  it("leaves the new items as they are, ids included: they are the client's", () => {
    const fresh = [{ type: 'item_reference', id: 'msg_client' }, ...newTurn];
    const body = nativeResponsesBody(responsesCall({ ...conversation, input: [...history, ...fresh] }, { responsesChain: { historyLength: history.length } }));
    expect((body.input as unknown[]).slice(-2)).toEqual(fresh);
  });

  it('is the call body itself, and the client bytes go as they came, when nothing changes', async () => {
    const body = { model: 'gpt-4.1', input: 'Hi', stream: true };
    const clientBytes = Buffer.from(JSON.stringify(body));
    const call = responsesCall(body, { clientBytes, responsesChain: { historyLength: 0 } });
    expect(nativeResponsesBody(call)).toBe(body);
    expect((await openai.adapter.prepare(call)).body).toBe(clientBytes);
  });

  it('asks for a stream exactly when the call streams, and leaves background to the gateway', () => {
    const streamed = nativeResponsesBody(responsesCall({ model: 'm', input: 'Hi', background: true }, { stream: true }));
    expect(streamed).toEqual({ model: 'm', input: 'Hi', stream: true });
    const whole = nativeResponsesBody(
      responsesCall({ model: 'm', input: 'Hi', stream: true, stream_options: { include_obfuscation: false } }, { stream: false }),
    );
    expect(whole).toEqual({ model: 'm', input: 'Hi' });
  });
});

describe('usage and streams of a native Responses call', () => {
  const usage = {
    input_tokens: 120,
    input_tokens_details: { cached_tokens: 64 },
    output_tokens: 30,
    output_tokens_details: { reasoning_tokens: 12 },
    total_tokens: 150,
  };
  const expectedUsage: TokenUsage = {
    prompt_tokens: 120,
    completion_tokens: 30,
    total_tokens: 150,
    prompt_tokens_details: { cached_tokens: 64 },
    completion_tokens_details: { reasoning_tokens: 12 },
  };

  it("reads the Responses API's usage in the gateway's token terms", () => {
    expect(usageFromResponses(usage)).toEqual(expectedUsage);
    expect(usageFromResponses({ input_tokens: 3, output_tokens: 4 })).toEqual({ prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
    expect(usageFromResponses(null)).toBeUndefined();
  });

  it('answers with the bytes as they came, and their usage; a body that is not JSON is a 502', async () => {
    const prepared = await openai.adapter.prepare(responsesCall({ model: 'm', input: 'Hi' }));
    const bytes = Buffer.from(JSON.stringify({ id: 'resp_1', object: 'response', status: 'completed', output: [], usage }));
    const answer = prepared.readResponse(bytes);
    expect(answer.body).toBe(bytes);
    expect(answer.usage).toEqual(expectedUsage);
    const error = await rejectedGatewayError(() => prepared.readResponse(Buffer.from('<html>')));
    expect(error).toMatchObject({ status: 502, code: 'provider_response_unreadable', provider: 'openai' });
  });

  const event = (type: string, fields: Record<string, unknown>, sequence: number) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence, ...fields })}\n\n`;
  const completed = { id: 'resp_1', object: 'response', status: 'completed', output: [], usage };
  const streamBody = [
    event('response.created', { response: { ...completed, status: 'in_progress', usage: null } }, 0),
    event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Hé ', logprobs: [] }, 1),
    // A delta whose text reads like a terminal event is not one.
    event('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'event: response.completed', logprobs: [] }, 2),
    event('response.completed', { response: completed }, 3),
  ].join('');

  async function relay(bytes: string | Buffer, splitEvery: number) {
    const input = Buffer.from(bytes);
    const pieces: Buffer[] = [];
    for (let at = 0; at < input.length; at += splitEvery) pieces.push(input.subarray(at, at + splitEvery));
    const usages: TokenUsage[] = [];
    const out: Buffer[] = [];
    for await (const chunk of Readable.from(pieces).pipe(relayResponsesStream({ provider: 'openai', onUsage: (u) => usages.push(u) }))) out.push(chunk);
    return { bytes: Buffer.concat(out), usages };
  }

  it('relays the stream byte for byte, however it is cut, and reports the usage of its terminal event once', async () => {
    for (const splitEvery of [1, 2, 7, 64, 100_000]) {
      const { bytes, usages } = await relay(streamBody, splitEvery);
      expect(bytes.toString(), `split every ${splitEvery}`).toBe(streamBody);
      expect(usages).toEqual([expectedUsage]);
    }
  });

  it('reads usage from response.incomplete and response.failed too, and from events without an event line', async () => {
    for (const type of ['response.incomplete', 'response.failed']) {
      const body = `data: ${JSON.stringify({ type, sequence_number: 0, response: { ...completed, status: type.slice(9) } })}\r\n\r\n`;
      const { bytes, usages } = await relay(body, 5);
      expect(bytes.toString()).toBe(body);
      expect(usages).toEqual([expectedUsage]);
    }
    expect(eventType('id: 4\nevent: response.completed\ndata: {}')).toBe('response.completed');
    expect(eventType('data: {"type":"response.output_text.delta","sequence_number":1}')).toBe('response.output_text.delta');
  });

  it('ends a stream cut short (no terminal event) with an error event numbered after the last one', async () => {
    const cut = streamBody.slice(0, streamBody.indexOf('event: response.completed'));
    const { bytes, usages } = await relay(cut, 9);
    expect(bytes.toString().startsWith(cut)).toBe(true);
    const added = parseSse(bytes.toString().slice(cut.length));
    expect(added).toHaveLength(1);
    expect(added[0].event).toBe('error');
    expect(JSON.parse(added[0].data)).toMatchObject({ type: 'error', code: 'provider_stream_error', sequence_number: 3 });
    expect(usages).toEqual([]);
  });
});

describe('where a native Responses call goes', () => {
  it('openai: {base}/responses with the bearer key, OpenAI scoping and the forwarded headers', async () => {
    const call = responsesCall(
      { model: 'gpt-4.1', input: 'Hi' },
      {
        stream: true,
        target: target(openai, 'https://api.openai.com/v1', { api_key: 'sk-one', compat_organization: 'org-1', compat_project: 'proj-1' }),
        forwardHeaders: { 'x-trace': 't1', authorization: 'Bearer client-value' },
      },
    );
    const prepared = await openai.adapter.prepare(call);
    expect(prepared.url.href).toBe('https://api.openai.com/v1/responses');
    expect(prepared.headers).toEqual({
      'x-trace': 't1',
      authorization: 'Bearer sk-one',
      'openai-organization': 'org-1',
      'openai-project': 'proj-1',
      'content-type': 'application/json',
      accept: 'text/event-stream',
    });
    expect(JSON.parse(prepared.body.toString())).toEqual({ model: 'gpt-4.1', input: 'Hi', stream: true });
  });

  const resource: ProviderSettings = { cloudC_resource_name: 'my-resource', cloudC_deployment_id: 'gpt41-prod', api_key: 'k'.repeat(32) };
  const azureCall = (settings: ProviderSettings, body: Record<string, unknown> = { model: 'gpt-4.1', input: 'Hi' }) =>
    responsesCall(body, { target: target(azure, azure.baseUrlFor!(settings), settings) });

  it('azure-openai, v1 API: {base}/v1/responses, the deployment as model, the api-key header', async () => {
    const prepared = await azure.adapter.prepare(azureCall({ ...resource, cloudC_api_version: 'v1' }));
    expect(prepared.url.href).toBe('https://my-resource.openai.azure.com/openai/v1/responses');
    expect(prepared.headers).toMatchObject({ 'api-key': 'k'.repeat(32), 'content-type': 'application/json', accept: 'application/json' });
    expect(prepared.headers.authorization).toBeUndefined();
    expect(JSON.parse(prepared.body.toString())).toEqual({ model: 'gpt41-prod', input: 'Hi' });
    const preview = await azure.adapter.prepare(azureCall({ ...resource, cloudC_api_version: 'preview' }));
    expect(preview.url.href).toBe('https://my-resource.openai.azure.com/openai/v1/responses?api-version=preview');
  });

  it('azure-openai, a version older than the Responses API (the default among them): the v1 API', async () => {
    const defaulted = await azure.adapter.prepare(azureCall(resource));
    expect(defaulted.url.href).toBe('https://my-resource.openai.azure.com/openai/v1/responses');
    expect(JSON.parse(defaulted.body.toString())).toEqual({ model: 'gpt41-prod', input: 'Hi' });
    const old = await azure.adapter.prepare(azureCall({ ...resource, cloudC_api_version: '2024-10-21' }));
    expect(old.url.href).toBe('https://my-resource.openai.azure.com/openai/v1/responses');
  });

  it('azure-openai, dated api-version: {base}/responses?api-version=…, beside the deployments, the deployment as model', async () => {
    const prepared = await azure.adapter.prepare(azureCall({ ...resource, cloudC_api_version: '2025-04-01-preview' }));
    expect(prepared.url.href).toBe('https://my-resource.openai.azure.com/openai/responses?api-version=2025-04-01-preview');
    expect(JSON.parse(prepared.body.toString())).toEqual({ model: 'gpt41-prod', input: 'Hi' });
    // Without a configured deployment the model names it, as for chat; an Entra ID token goes as a bearer.
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJ4In0.c2ln';
    const byModel = await azure.adapter.prepare(azureCall({ cloudC_resource_name: 'my-resource', cloudC_api_version: '2025-04-01-preview', api_key: jwt }));
    expect(JSON.parse(byModel.body.toString()).model).toBe('gpt-4.1');
    expect(byModel.headers).toMatchObject({ authorization: `Bearer ${jwt}` });
    expect(byModel.headers['api-key']).toBeUndefined();
  });

  it("azure-openai: the chain's link holds for the same resource and key", async () => {
    const settings = { ...resource, cloudC_api_version: 'v1' };
    const call = azureCall(settings, conversation);
    call.responsesChain = chainAt(call.target, history.length, 'resp_azure0001');
    const body = JSON.parse((await azure.adapter.prepare(call)).body.toString());
    expect(body).toEqual({ model: 'gpt41-prod', store: true, previous_response_id: 'resp_azure0001', input: newTurn });
  });
});

describe('native Responses calls over HTTP', () => {
  let upstream: FakeUpstream;
  let fakeAzure: FakeAzure;
  const savedMode = process.env.GATEWAY_MODE;

  beforeAll(async () => {
    // The outbound guard lets the gateway reach loopback only in local mode.
    process.env.GATEWAY_MODE = 'local';
    [upstream, fakeAzure] = await Promise.all([startFakeUpstream({ chunkCount: 3 }), startFakeAzure()]);
  });
  afterAll(async () => {
    if (savedMode === undefined) delete process.env.GATEWAY_MODE;
    else process.env.GATEWAY_MODE = savedMode;
    await Promise.all([upstream?.close(), fakeAzure?.close()]);
  });

  async function attempt(call: ProviderCall) {
    const timeout = new AttemptTimeout(call.target.provider.name, 10_000);
    const usages: TokenUsage[] = [];
    try {
      const outcome = await attemptProvider(call, timeout, { onUsage: (usage) => usages.push(usage), onStreamError: () => {} });
      let text = '';
      if (outcome.ok && outcome.body instanceof Readable) for await (const chunk of outcome.body) text += chunk.toString();
      else if (outcome.ok) text = outcome.body.toString();
      return { outcome, text, usages };
    } finally {
      timeout.stop();
    }
  }
  const openaiAt = () => target(openai, `${upstream.url}/v1`, { api_key: 'sk-test' });
  const json = (text: string) => JSON.parse(text);
  const failure = (outcome: AttemptOutcome) => (outcome.ok ? undefined : outcome.error);

  it('a whole answer: the response object as the provider made it, with its usage', async () => {
    const { outcome, text, usages } = await attempt(responsesCall({ model: 'gpt-4.1', input: 'Hello' }, { target: openaiAt() }));
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    const response = json(text);
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-4.1' });
    expect(response.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(response.output[0].content[0].text).toBe('echo: Hello (turn 1)');
    expect(usages).toEqual([usageFromResponses(response.usage)]);
    expect(upstream.requests.at(-1)!.path).toBe('/v1/responses');
  });

  it('a stream: the provider events as they came, ending in response.completed, with its usage', async () => {
    const { outcome, text, usages } = await attempt(responsesCall({ model: 'gpt-4.1', input: 'Hello', stream: true }, { target: openaiAt() }));
    expect(outcome).toMatchObject({ ok: true, status: 200, headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
    const events = parseSse(text);
    expect(events.map((event) => event.event)).toContain('response.output_text.delta');
    const last = json(events.at(-1)!.data);
    expect(last.type).toBe('response.completed');
    expect(last.response.output[0].content[0].text).toBe('echo: Hello (turn 1)');
    expect(usages).toEqual([usageFromResponses(last.response.usage)]);
  });

  it("continues a conversation by the provider's own id, sending only the new turn", async () => {
    const first = json((await attempt(responsesCall({ model: 'gpt-4.1', input: 'Hello' }, { target: openaiAt() }))).text);
    const held = [{ type: 'message', role: 'user', content: 'Hello' }, ...first.output];
    const call = responsesCall({ model: 'gpt-4.1', input: [...held, { role: 'user', content: 'Again' }] }, { target: openaiAt() });
    call.responsesChain = chainAt(call.target, held.length, first.id);
    const { outcome, text, usages } = await attempt(call);
    expect(outcome).toMatchObject({ ok: true });
    expect(json(text).output[0].content[0].text).toBe('echo: Again (turn 2)');
    expect(upstream.requests.at(-1)!.json).toEqual({ model: 'gpt-4.1', input: [{ role: 'user', content: 'Again' }], previous_response_id: first.id });
    // The fake counts the stored conversation as cached: it did not come again.
    expect(usages[0].prompt_tokens_details?.cached_tokens).toBeGreaterThan(0);
  });

  it("sends a conversation the provider does not hold whole and portable: the gateway's ids would be unknown to it", async () => {
    const reasoning = { reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'] };
    const first = json((await attempt(responsesCall({ model: 'o4-mini', input: 'Hello', ...reasoning }, { target: openaiAt() }))).text);
    expect(first.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'message']);
    // As the gateway holds it: its own ids on every item, and reasoning from elsewhere without encrypted content.
    const held = [
      { type: 'message', id: 'msg_gateway01', role: 'user', content: 'Hello' },
      { type: 'reasoning', id: 'rs_gateway00', summary: [{ type: 'summary_text', text: 'thought elsewhere' }] },
      { ...first.output[0], id: 'rs_gateway01' },
      { ...first.output[1], id: 'msg_gateway02' },
    ];
    const call = responsesCall({ model: 'o4-mini', input: [...held, { role: 'user', content: 'Again' }], ...reasoning }, { target: openaiAt() });
    call.responsesChain = chainAt(target(openai, 'https://elsewhere.example/v1'), held.length);
    const { outcome, text } = await attempt(call);
    expect(failure(outcome)).toBeUndefined();
    expect(json(text).output[1].content[0].text).toBe('echo: Again (turn 2)');
    const sent = upstream.requests.at(-1)!.json as { input: Array<Record<string, unknown>>; previous_response_id?: string };
    expect(sent.previous_response_id).toBeUndefined();
    expect(sent.input.map((item) => [item.type ?? item.role, item.id])).toEqual([
      ['message', undefined],
      ['reasoning', undefined],
      ['message', undefined],
      ['user', undefined],
    ]);
  });

  it("an error status is the provider's error, status and message kept", async () => {
    const { outcome } = await attempt(responsesCall({ model: 'error-429', input: 'Hello' }, { target: openaiAt() }));
    expect(outcome).toMatchObject({ ok: false, status: 429 });
    expect(failure(outcome)).toMatchObject({ status: 429, code: 'rate_limit_exceeded', provider: 'openai' });
    const gone = responsesCall(
      {
        model: 'gpt-4.1',
        input: [
          { role: 'user', content: 'Hello' },
          { role: 'user', content: 'Again' },
        ],
      },
      { target: openaiAt() },
    );
    gone.responsesChain = chainAt(gone.target, 1, 'resp_missing');
    const unknown = await attempt(gone);
    expect(failure(unknown.outcome)).toMatchObject({ status: 404, code: 'previous_response_not_found', param: 'previous_response_id' });
  });

  it.each([
    ['v1', '/openai/v1/responses'],
    ['2025-04-01-preview', '/openai/responses?api-version=2025-04-01-preview'],
  ])('azure-openai (api_version %s): a whole answer and a stream from the deployment', async (version, path) => {
    const settings: ProviderSettings = { cloudC_deployment_id: 'gpt41-prod', cloudC_api_version: version, api_key: fakeAzure.key };
    const azureTarget = target(azure, `${fakeAzure.url}/openai`, settings);
    const whole = await attempt(responsesCall({ model: 'gpt-4.1', input: 'Hallo' }, { target: azureTarget }));
    expect(failure(whole.outcome)).toBeUndefined();
    expect(json(whole.text)).toMatchObject({ model: 'gpt41-prod', output: [{ content: [{ text: 'echo: Hallo (turn 1)' }] }] });
    expect(fakeAzure.requests.at(-1)!.path).toBe(path);
    const streamed = await attempt(responsesCall({ model: 'gpt-4.1', input: 'Hallo', stream: true }, { target: azureTarget }));
    expect(parseSse(streamed.text).at(-1)!.event).toBe('response.completed');
    expect(streamed.usages).toHaveLength(1);
  });
});
