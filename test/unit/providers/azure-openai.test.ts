import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import { azureOpenAIProvider } from '../../../lib/providers/azure-openai';
import type { ProviderSettings } from '../../../lib/providers/types';
import { providerCall, replayPrepared, streamedText } from '../../support/fakes/azure';
import { readRecordingBytes, readRecordingJson, recordingsPresent } from '../../support/recordings';
import { parseSse } from '../../support/sse';

const chat = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hallo' }] };
const resource: ProviderSettings = { cloudC_resource_name: 'my-resource', cloudC_deployment_id: 'gpt4o-prod', api_key: 'k'.repeat(32) };
const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2lnbmF0dXJl';

const prepare = (body: Record<string, unknown>, settings: ProviderSettings = resource, options: Parameters<typeof providerCall>[2] = {}) =>
  azureOpenAIProvider.adapter.prepare(providerCall(azureOpenAIProvider, body, { settings, ...options }));

// A test that replays a recorded transcript is declared skipped where the recordings are absent and
// reads them only inside the test, so a clone without them collects and runs the rest untouched.
const itOnRecordings = it.skipIf(!recordingsPresent);

describe('azure-openai: a stream with content filter results', () => {
  it('drops a leading chunk without choices and carries its prompt_filter_results on the next chunk', async () => {
    const prepared = await prepare({ ...chat, stream: true }, resource, { stream: true });
    const promptResults = [{ prompt_index: 0, content_filter_results: { hate: { filtered: false, severity: 'low' } } }];
    const answer = {
      choices: [{ delta: { content: 'ok' }, finish_reason: 'stop', index: 0 }],
      created: 2,
      id: 'c2',
      model: 'gpt-4o',
      object: 'chat.completion.chunk',
    };
    // Azure closes the stream right after `data: [DONE]` and one newline, without the blank line.
    const sent = `data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptResults })}\n\ndata: ${JSON.stringify(answer)}\n\ndata: [DONE]\n`;
    const { events } = await replayPrepared(prepared, sent, 11);
    expect(events).toEqual([{ ...answer, prompt_filter_results: promptResults }, '[DONE]']);
  });

  itOnRecordings('drops the leading id-less chunk and carries its prompt_filter_results on the first real chunk (recordings)', async () => {
    const sent = readRecordingBytes('azure_openai_chat_stream_with_content_filter.sse');
    const prepared = await prepare({ ...chat, stream: true }, resource, { stream: true });
    const { events, usages } = await replayPrepared(prepared, sent, 11);
    // Azure ends without the blank line after `[DONE]`; the gateway still reads that event.
    expect(sent.toString().endsWith('data: [DONE]\n')).toBe(true);
    const sentEvents = parseSse(`${sent}\n`).map((event) => event.data);
    // The prompt-filter chunk, the role chunk, three pieces, the finish chunk, [DONE].
    expect(sentEvents).toHaveLength(7);
    expect(events).toHaveLength(sentEvents.length - 1);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: 'chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j',
        model: 'gpt-4o-2024-08-06',
        created: 1750697159,
        object: 'chat.completion.chunk',
      });
      expect(chunk.choices).toHaveLength(1);
    }
    const leading = JSON.parse(sentEvents[0]);
    expect(leading).toMatchObject({ id: '', model: '', object: '', created: 0, choices: [] });
    expect(chunks[0].prompt_filter_results).toEqual(leading.prompt_filter_results);
    expect(chunks[0].choices[0].delta).toEqual({ content: '', refusal: null, role: 'assistant' });
    expect(chunks.slice(1).every((chunk: any) => chunk.prompt_filter_results === undefined)).toBe(true);
    // Everything after the first chunk is relayed exactly as Azure sent it.
    expect(chunks.slice(1).map((chunk: any) => JSON.stringify(chunk))).toEqual(sentEvents.slice(2, -1));
    expect(chunks[2].choices[0].content_filter_results.sexual).toEqual({ filtered: false, severity: 'safe' });
    expect(streamedText(events)).toBe('Hallo Welt!');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(usages).toEqual([]);
  });

  it('reads usage from the usage chunk it asked for and drops that chunk; content_filter passes as a finish reason, with its filter results', async () => {
    const prepared = await prepare({ ...chat, stream: true }, resource, { stream: true });
    const sent = JSON.parse(String(prepared.body));
    expect(sent.stream_options).toEqual({ include_usage: true });
    const filterResults = { hate: { filtered: false, severity: 'safe' }, violence: { filtered: true, severity: 'medium' } };
    const stream =
      [
        'data: {"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{}}]}',
        'data: {"choices":[{"delta":{"content":"x"},"finish_reason":null,"index":0}],"created":1,"id":"c1","model":"gpt-4o","object":"chat.completion.chunk"}',
        `data: {"choices":[{"delta":{},"finish_reason":"content_filter","index":0,"content_filter_results":${JSON.stringify(filterResults)}}],"created":1,"id":"c1","model":"gpt-4o","object":"chat.completion.chunk"}`,
        'data: {"choices":[],"created":1,"id":"c1","model":"gpt-4o","object":"chat.completion.chunk","usage":{"prompt_tokens":9,"completion_tokens":1,"total_tokens":10,"prompt_tokens_details":{"cached_tokens":4}}}',
        'data: [DONE]',
      ].join('\n\n') + '\n\n';
    const { events, usages } = await replayPrepared(prepared, stream);
    // The text chunk (with the prompt's results), the finish chunk, [DONE]: no usage chunk.
    expect(events).toHaveLength(3);
    expect(events[0].prompt_filter_results).toEqual([{ prompt_index: 0, content_filter_results: {} }]);
    expect(events.slice(0, -1).every((chunk: any) => chunk.id === 'c1' && chunk.choices.length === 1)).toBe(true);
    expect(events[1].choices[0]).toEqual({ delta: {}, finish_reason: 'content_filter', index: 0, content_filter_results: filterResults });
    expect(streamedText(events)).toBe('x');
    expect(usages).toEqual([{ prompt_tokens: 9, completion_tokens: 1, total_tokens: 10, prompt_tokens_details: { cached_tokens: 4 } }]);
  });
});

describe('azure-openai: errors', () => {
  it("maps Azure's error type null to invalid_request_error, keeping the content_filter code and param", async () => {
    const prepared = await prepare(chat);
    const body = { error: { message: 'refused', type: null, param: 'prompt', code: 'content_filter', status: 400 } };
    const error = prepared.readError(400, Buffer.from(JSON.stringify(body)), {});
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(400);
    expect(error.toBody()).toEqual({
      error: { message: 'refused', type: 'invalid_request_error', param: 'prompt', code: 'content_filter', provider: 'azure-openai' },
    });
  });

  itOnRecordings("keeps Azure's content-filter 400 as an OpenAI error with code content_filter (recordings)", async () => {
    const name = 'azure_openai_error_400_content_filter.json';
    const body = readRecordingBytes(name);
    const prepared = await prepare(chat);
    const error = prepared.readError(400, body, {});
    expect(error).toBeInstanceOf(GatewayError);
    expect(error.status).toBe(400);
    expect(error.toBody()).toEqual({
      error: {
        message: readRecordingJson<{ error: { message: string } }>(name).error.message,
        type: 'invalid_request_error',
        param: 'prompt',
        code: 'content_filter',
        provider: 'azure-openai',
      },
    });
    // Azure's own fields: `type: null` becomes OpenAI's type; the filter details stay with Azure.
    expect(JSON.parse(body.toString())).toMatchObject({
      error: {
        type: null,
        status: 400,
        innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_result: { sexual: { filtered: true, severity: 'high' } } },
      },
    });
  });

  it('relays a non-streamed answer unchanged, prompt filter results and all', async () => {
    const prepared = await prepare(chat);
    const body = {
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o',
      prompt_filter_results: [],
      choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'content_filter' }],
      usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    };
    const result = prepared.readResponse(Buffer.from(JSON.stringify(body)));
    expect(JSON.parse(result.body.toString())).toEqual(body);
    expect(result.usage).toEqual({ prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 });
  });
});

describe('azure-openai: where requests go', () => {
  it('builds the deployment URL with the default api-version and sends the key in api-key', async () => {
    const prepared = await prepare(chat);
    expect(prepared.url.href).toBe('https://my-resource.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    expect(prepared.headers['api-key']).toBe(resource.api_key);
    expect(prepared.headers.authorization).toBeUndefined();
    expect(JSON.parse(String(prepared.body))).toEqual(chat);
  });

  it('uses the same path shape for embeddings and completions, with the configured api-version', async () => {
    const settings = { ...resource, cloudC_api_version: '2024-06-01' };
    const embeddings = await prepare({ model: 'e', input: 'x' }, settings, { operation: 'embeddings' });
    expect(embeddings.url.href).toBe('https://my-resource.openai.azure.com/openai/deployments/gpt4o-prod/embeddings?api-version=2024-06-01');
    const completions = await prepare(
      { model: 'e', prompt: 'x' },
      { ...settings, cloudC_deployment_id: undefined, deployment_id: 'instruct' },
      { operation: 'completions' },
    );
    expect(completions.url.pathname).toBe('/openai/deployments/instruct/completions');
  });

  it('picks the deployment whose alias is the model, else the default one, with its api-version', async () => {
    const deployments = [
      { deployment_id: 'dep-mini', alias: 'gpt-4o-mini', api_version: '2024-08-01-preview' },
      { deployment_id: 'dep-big', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true },
    ];
    const settings = { cloudC_resource_name: 'res', deployments, api_key: 'k' };
    const mini = await prepare({ ...chat, model: 'gpt-4o-mini' }, settings);
    expect(mini.url.href).toBe('https://res.openai.azure.com/openai/deployments/dep-mini/chat/completions?api-version=2024-08-01-preview');
    const other = await prepare({ ...chat, model: 'something-else' }, settings);
    expect(other.url.pathname).toBe('/openai/deployments/dep-big/chat/completions');
    const noDefault = prepare({ ...chat, model: 'nope' }, { ...settings, deployments: [deployments[0]] });
    await expect(noDefault).rejects.toMatchObject({ status: 400, code: 'unknown_deployment', param: 'model' });
  });

  it('lets the model name the deployment when nothing else does, and encodes it', async () => {
    const prepared = await prepare({ ...chat, model: 'my deployment' }, { cloudC_resource_name: 'res', api_key: 'k' });
    expect(prepared.url.pathname).toBe('/openai/deployments/my%20deployment/chat/completions');
  });

  it('speaks the v1 API when api_version is v1: OpenAI paths, the deployment as model, no api-version', async () => {
    const prepared = await prepare(chat, { ...resource, cloudC_api_version: 'v1' }, { clientBytes: true });
    expect(prepared.url.href).toBe('https://my-resource.openai.azure.com/openai/v1/chat/completions');
    expect(JSON.parse(String(prepared.body)).model).toBe('gpt4o-prod');
  });

  it('appends the paths to a custom host (which replaces https://{resource}.openai.azure.com/openai)', async () => {
    const prepared = await prepare(chat, { cloudC_deployment_id: 'd', api_key: 'k' }, { baseUrl: 'http://127.0.0.1:9/proxy/openai' });
    expect(prepared.url.href).toBe('http://127.0.0.1:9/proxy/openai/deployments/d/chat/completions?api-version=2024-10-21');
  });

  it('needs a resource name without a custom host, and refuses one that is not a host label', () => {
    expect(() => azureOpenAIProvider.baseUrlFor!({ cloudC_deployment_id: 'd' })).toThrow(/cloudC_resource_name/);
    expect(() => azureOpenAIProvider.baseUrlFor!({ cloudC_resource_name: 'evil.example.com/x' })).toThrow(GatewayError);
    expect(azureOpenAIProvider.baseUrlFor!({ resource_name: 'Legacy-Name' })).toBe('https://legacy-name.openai.azure.com/openai');
  });

  it('does not ask for stream_options on api-versions older than 2024-09-01, and removes a client one', async () => {
    const prepared = await prepare(
      { ...chat, stream: true, stream_options: { include_usage: true } },
      { ...resource, api_version: '2024-06-01' },
      { stream: true },
    );
    expect(JSON.parse(String(prepared.body)).stream_options).toBeUndefined();
    const fresh = await prepare({ ...chat, stream: true }, { ...resource, cloudC_api_version: '2025-01-01-preview' }, { stream: true });
    expect(JSON.parse(String(fresh.body)).stream_options).toEqual({ include_usage: true });
  });

  it('sends the client bytes untouched when nothing needs changing', async () => {
    const prepared = await prepare(chat, resource, { clientBytes: true });
    expect(Buffer.isBuffer(prepared.body)).toBe(true);
  });
});

describe('azure-openai: auth', () => {
  const headersFor = async (settings: ProviderSettings) => (await prepare(chat, { ...resource, ...settings })).headers;

  it('sends an Entra ID token (a JWT) as a bearer, not as api-key', async () => {
    const headers = await headersFor({ api_key: jwt });
    expect(headers.authorization).toBe(`Bearer ${jwt}`);
    expect(headers['api-key']).toBeUndefined();
  });

  it('sends a key as a bearer when the config says Bearer or sets cloudC_entra_scope', async () => {
    expect((await headersFor({ api_key: 'Bearer opaque-token' })).authorization).toBe('Bearer opaque-token');
    expect((await headersFor({ api_key: 'opaque-token', cloudC_entra_scope: 'https://cognitiveservices.azure.com/.default' })).authorization).toBe(
      'Bearer opaque-token',
    );
  });

  it('authenticates pass-through requests the same way', () => {
    const target = providerCall(azureOpenAIProvider, chat, { settings: resource }).target;
    expect(azureOpenAIProvider.adapter.authenticate({ method: 'GET', url: new URL('https://x'), headers: {} }, target)).toEqual({
      'api-key': resource.api_key,
    });
  });
});
