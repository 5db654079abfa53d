import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collectChunks, weatherTool } from '../support/chat-stream';
import { contentFilterErrorMessage, startFakeAzure, type FakeAzure } from '../support/fakes/azure';
import { openaiClient } from '../support/gateway-client';

const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2lnbmF0dXJl';

describe('azure-openai through the gateway with the official openai client', () => {
  let fake: FakeAzure;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeAzure();
    client = openaiClient({
      provider: 'azure-openai',
      apiKey: fake.key,
      headers: { 'x-gateway-custom-host': `${fake.url}/openai`, 'x-gateway-cloudC-deployment-id': 'gpt4o-prod', 'x-gateway-cloudC-api-version': '2024-10-21' },
    });
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });
  afterAll(() => fake.close());

  it('gets a chat completion from the deployment, the key sent as api-key', async () => {
    const { data, response } = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello Azure' }] }).withResponse();
    expect(data.choices[0].message.content).toBe('echo: Hello Azure');
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.model).toBe('gpt-4o-2024-08-06');
    expect(data.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect((data as any).prompt_filter_results[0].content_filter_results.hate).toEqual({ filtered: false, severity: 'safe' });
    expect(response.headers.get('x-gateway-provider')).toBe('azure-openai');
    const sent = fake.requests[0];
    expect(sent.path).toBe('/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
    expect(sent.headers['api-key']).toBe(fake.key);
    expect(sent.headers.authorization).toBeUndefined();
  });

  it('streams text without the id-less prompt-filter chunk, and the stream helper assembles it', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'Stream to me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, last } = await collectChunks(stream);
    expect(chunks.every((chunk) => chunk.id === 'chatcmpl-fakeazure0001' && chunk.model === 'gpt-4o-2024-08-06')).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect((chunks[0] as any).prompt_filter_results).toHaveLength(1);
    expect(text).toBe('echo: Stream to me');
    expect(last!.choices).toEqual([]);
    expect(last!.usage?.total_tokens).toBe(17);

    const helper = client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Assemble me' }] });
    const final = await helper.finalChatCompletion();
    expect(final.id).toBe('chatcmpl-fakeazure0001');
    expect(final.choices[0].message.content).toBe('echo: Assemble me');
    expect(fake.requests.at(-1)!.json.stream_options).toEqual({ include_usage: true });
  });

  it('streams a tool call and carries a two-turn tool conversation', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool], stream: true });
    const { assembledToolCalls, finishReasons } = await collectChunks(stream);
    expect(assembledToolCalls).toHaveLength(1);
    const [{ id, name, arguments: args }] = assembledToolCalls;
    expect({ id, name, args: JSON.parse(args), finishReasons }).toEqual({
      id: `call_${'az'.repeat(12)}`,
      name: 'get_weather',
      args: { location: 'Paris' },
      finishReasons: ['tool_calls'],
    });

    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: args } }] },
      { role: 'tool', tool_call_id: id, content: '18°C and sunny' },
    );
    const answer = await client.chat.completions.create({ model: 'gpt-4o', messages, tools: [weatherTool] });
    expect(answer.choices[0].message.content).toBe('the tool said: 18°C and sunny');
    const sent = fake.requests.at(-1)!.json;
    expect(sent.messages.slice(1)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }] },
      { role: 'tool', tool_call_id: id, content: '18°C and sunny' },
    ]);
  });

  it("answers Azure's content-filter 400 in OpenAI's error shape", async () => {
    const filtered = openaiClient({
      provider: 'azure-openai',
      apiKey: fake.key,
      headers: { 'x-gateway-custom-host': `${fake.url}/openai`, 'x-gateway-cloudC-deployment-id': 'error-content-filter' },
    });
    const error = await filtered.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'bad words' }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.status).toBe(400);
    expect(error.code).toBe('content_filter');
    expect(error.param).toBe('prompt');
    expect(error.type).toBe('invalid_request_error');
    expect(error.error.provider).toBe('azure-openai');
    expect(error.error.message).toBe(contentFilterErrorMessage);
    expect(error.message).toContain(contentFilterErrorMessage);

    const limited = openaiClient({
      provider: 'azure-openai',
      apiKey: fake.key,
      headers: { 'x-gateway-custom-host': `${fake.url}/openai`, 'x-gateway-cloudC-deployment-id': 'error-429' },
    });
    const rateError = await limited.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((caught) => caught);
    expect(rateError).toBeInstanceOf(OpenAI.RateLimitError);
    expect(rateError.error.provider).toBe('azure-openai');
  });

  it('reports filtered output as finish_reason content_filter', async () => {
    const filtered = openaiClient({
      provider: 'azure-openai',
      apiKey: fake.key,
      headers: { 'x-gateway-custom-host': `${fake.url}/openai`, 'x-gateway-cloudC-deployment-id': 'filtered-output' },
    });
    const stream = await filtered.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const { finishReasons } = await collectChunks(stream);
    expect(finishReasons).toEqual(['content_filter']);
  });

  it('sends an Entra ID token as a bearer', async () => {
    const entra = openaiClient({
      provider: 'azure-openai',
      apiKey: jwt,
      headers: { 'x-gateway-custom-host': `${fake.url}/openai`, 'x-gateway-cloudC-deployment-id': 'gpt4o-prod' },
    });
    await entra.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'token' }] });
    expect(fake.requests[0].headers.authorization).toBe(`Bearer ${jwt}`);
    expect(fake.requests[0].headers['api-key']).toBeUndefined();
  });

  it('picks the deployment by alias from a config, and embeds through it', async () => {
    const config = {
      provider: 'azure-openai',
      api_key: fake.key,
      custom_host: `${fake.url}/openai`,
      deployments: [
        { deployment_id: 'embed-small', alias: 'text-embedding-3-small', api_version: '2024-06-01' },
        { deployment_id: 'gpt4o-prod', alias: 'gpt-4o', api_version: '2024-10-21', is_default: true },
      ],
    };
    const configured = openaiClient({ provider: 'azure-openai', headers: { 'x-gateway-config': JSON.stringify(config) } });
    const embedding = await configured.embeddings.create({ model: 'text-embedding-3-small', input: ['a', 'b'], encoding_format: 'float' });
    expect(embedding.data.map((item) => item.embedding)).toEqual([
      [0.25, -0.5, 0],
      [0.25, -0.5, 1],
    ]);
    expect(fake.requests[0].path).toBe('/openai/deployments/embed-small/embeddings?api-version=2024-06-01');
    await configured.chat.completions.create({ model: 'anything', messages: [{ role: 'user', content: 'default' }] });
    expect(fake.requests[1].path).toBe('/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21');
  });
});
