import { describe, expect, it } from 'vitest';
import { azureAIProvider } from '../../../lib/providers/azure-ai';
import type { ProviderSettings } from '../../../lib/providers/types';
import { providerCall, replayPrepared, streamedText } from '../../support/fakes/azure';
import { readRecordingBytes, recordingsPresent } from '../../support/recordings';
import { parseSse } from '../../support/sse';

const chat = { model: 'Mistral-Large-2411', messages: [{ role: 'user', content: 'Bonjour' }] };
const prepare = (settings: ProviderSettings, body: Record<string, unknown> = chat, options: Parameters<typeof providerCall>[2] = {}) =>
  azureAIProvider.adapter.prepare(providerCall(azureAIProvider, body, { settings: { api_key: 'endpoint-key', ...settings }, ...options }));

describe('azure-ai: endpoints', () => {
  it('sends a Foundry resource request to /models with the deployment as model and the key in api-key', async () => {
    const prepared = await prepare({ cloudC_resource_name: 'my-foundry', cloudC_deployment_name: 'mistral-large' }, chat, { clientBytes: true });
    expect(prepared.url.href).toBe('https://my-foundry.services.ai.azure.com/models/chat/completions?api-version=2024-05-01-preview');
    expect(prepared.headers['api-key']).toBe('endpoint-key');
    expect(prepared.headers.authorization).toBeUndefined();
    expect(prepared.headers['extra-parameters']).toBe('pass-through');
    expect(JSON.parse(String(prepared.body))).toEqual({ ...chat, model: 'mistral-large' });
  });

  it('sends a serverless endpoint request to {endpoint}.{region}.models.ai.azure.com with a bearer key', async () => {
    const prepared = await prepare({
      cloudC_deployment_type: 'serverless',
      cloudC_endpoint_name: 'Llama-3-70B-xyz',
      cloudC_region: 'eastus2',
      cloudC_api_version: '2024-04-01',
    });
    expect(prepared.url.href).toBe('https://llama-3-70b-xyz.eastus2.models.ai.azure.com/chat/completions?api-version=2024-04-01');
    expect(prepared.headers.authorization).toBe('Bearer endpoint-key');
    expect(prepared.headers['api-key']).toBeUndefined();
    // The body is the client's: the endpoint serves one model.
    expect(JSON.parse(String(prepared.body)).model).toBe(chat.model);
  });

  it('names a serverless host by cloudC_deployment_name when there is no endpoint name', () => {
    expect(azureAIProvider.baseUrlFor!({ cloudC_deployment_type: 'serverless', cloudC_deployment_name: 'phi-4-abc', cloudC_region: 'westus' })).toBe(
      'https://phi-4-abc.westus.models.ai.azure.com',
    );
  });

  it('sends a managed endpoint request to {endpoint}.{region}.inference.ml.azure.com, pinning the deployment', async () => {
    const prepared = await prepare(
      { cloudC_deployment_type: 'managed', cloudC_endpoint_name: 'my-endpoint', cloudC_region: 'swedencentral', cloudC_deployment_name: 'blue' },
      { model: 'e', input: ['a'] },
      { operation: 'embeddings' },
    );
    expect(prepared.url.href).toBe('https://my-endpoint.swedencentral.inference.ml.azure.com/embeddings?api-version=2024-05-01-preview');
    expect(prepared.headers['azureml-model-deployment']).toBe('blue');
    expect(prepared.headers.authorization).toBe('Bearer endpoint-key');
  });

  it('says which setting is missing, as a 400', () => {
    expect(() => azureAIProvider.baseUrlFor!({ cloudC_deployment_type: 'managed', cloudC_endpoint_name: 'e' })).toThrow(/cloudC_region/);
    expect(() => azureAIProvider.baseUrlFor!({ cloudC_deployment_type: 'serverless', cloudC_region: 'eastus' })).toThrow(/cloudC_endpoint_name/);
    expect(() => azureAIProvider.baseUrlFor!({})).toThrow(/cloudC_resource_name/);
    try {
      azureAIProvider.baseUrlFor!({ cloudC_endpoint_name: 'a.b', cloudC_region: 'eastus' });
      expect.unreachable();
    } catch (error) {
      expect(error).toMatchObject({ status: 400, param: 'cloudC_endpoint_name' });
    }
  });

  it("keeps a client's extra-parameters header and never sends stream_options", async () => {
    const prepared = await prepare(
      { cloudC_resource_name: 'r' },
      { ...chat, stream: true, stream_options: { include_usage: true } },
      { stream: true, requestHeaders: { 'extra-parameters': 'drop' } },
    );
    expect(prepared.headers['extra-parameters']).toBe('drop');
    expect(JSON.parse(String(prepared.body)).stream_options).toBeUndefined();
  });

  it('relays an OpenAI-format stream, usage read from the final chunk, prompt-filter chunk folded in', async () => {
    const prepared = await prepare({ cloudC_resource_name: 'r' }, { ...chat, stream: true }, { stream: true });
    const promptResults = [{ prompt_index: 0, content_filter_results: {} }];
    const usage = { prompt_tokens: 7, completion_tokens: 1, total_tokens: 8 };
    const answer = {
      choices: [{ delta: { content: 'Oui' }, finish_reason: 'stop', index: 0 }],
      created: 3,
      id: 'c3',
      model: 'mistral-large',
      object: 'chat.completion.chunk',
      usage,
    };
    const sent = `data: ${JSON.stringify({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: promptResults })}\n\ndata: ${JSON.stringify(answer)}\n\ndata: [DONE]\n\n`;
    const { events, usages } = await replayPrepared(prepared, sent);
    expect(events).toEqual([{ ...answer, prompt_filter_results: promptResults }, '[DONE]']);
    expect(usages).toEqual([usage]);
  });

  it("relays an azure-ai error's message with its status", async () => {
    const prepared = await prepare({ cloudC_resource_name: 'r' });
    const error = prepared.readError(
      422,
      Buffer.from('{"status":422,"code":"parameter_not_supported","message":"One of the parameters contain invalid values."}'),
      {},
    );
    expect(error.toBody().error).toMatchObject({ message: 'One of the parameters contain invalid values.', provider: 'azure-ai' });
    expect(error.status).toBe(422);
  });

  it.skipIf(!recordingsPresent)('relays an Azure stream with its leading prompt-filter chunk folded in (recordings)', async () => {
    const prepared = await prepare({ cloudC_resource_name: 'r' }, { ...chat, stream: true }, { stream: true });
    const sent = readRecordingBytes('azure_openai_chat_stream_with_content_filter.sse');
    const { events, usages } = await replayPrepared(prepared, sent);
    expect(events[0].id).toBe('chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j');
    expect(events[0].prompt_filter_results).toHaveLength(1);
    expect(events[0].prompt_filter_results).toEqual(JSON.parse(parseSse(sent.toString())[0].data).prompt_filter_results);
    expect(streamedText(events)).toBe('Hallo Welt!');
    expect(usages).toEqual([]);
  });
});
