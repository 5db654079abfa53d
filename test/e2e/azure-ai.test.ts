import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collectChunks, makeWeatherTool } from '../support/chat-stream';
import { startFakeAzure, type FakeAzure } from '../support/fakes/azure';
import { openaiClient } from '../support/gateway-client';

const weatherTool = makeWeatherTool({ description: null, required: false });

describe('azure-ai through the gateway with the official openai client', () => {
  let fake: FakeAzure;
  let foundry: OpenAI;
  let serverless: OpenAI;
  beforeAll(async () => {
    fake = await startFakeAzure();
    const foundryConfig = {
      provider: 'azure-ai',
      api_key: fake.key,
      custom_host: `${fake.url}/models`,
      cloudC_resource_name: 'my-foundry',
      cloudC_deployment_name: 'mistral-large-deploy',
    };
    foundry = openaiClient({ provider: 'azure-ai', headers: { 'x-gateway-config': JSON.stringify(foundryConfig) } });
    const serverlessConfig = {
      provider: 'azure-ai',
      api_key: fake.key,
      custom_host: fake.url,
      cloudC_deployment_type: 'serverless',
      cloudC_endpoint_name: 'llama-endpoint',
      cloudC_region: 'eastus2',
      cloudC_api_version: '2024-04-01',
    };
    serverless = openaiClient({ provider: 'azure-ai', headers: { 'x-gateway-config': JSON.stringify(serverlessConfig) } });
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });
  afterAll(() => fake.close());

  it('gets a chat completion from a Foundry resource: /models path, deployment as model, api-key, pass-through', async () => {
    const { data, response } = await foundry.chat.completions
      .create({ model: 'mistral-large', messages: [{ role: 'user', content: 'Bonjour', name: 'x' }] })
      .withResponse();
    expect(data.choices[0].message.content).toBe('echo: Bonjour');
    expect(response.headers.get('x-gateway-provider')).toBe('azure-ai');
    const sent = fake.requests[0];
    expect(sent.path).toBe('/models/chat/completions?api-version=2024-05-01-preview');
    expect(sent.json.model).toBe('mistral-large-deploy');
    expect(sent.headers['api-key']).toBe(fake.key);
    expect(sent.headers['extra-parameters']).toBe('pass-through');
  });

  it('streams a tool call from a serverless endpoint, then answers the tool result', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'weather in Paris' }];
    const stream = await serverless.chat.completions.create({ model: 'llama', messages, tools: [weatherTool], tool_choice: 'required', stream: true });
    const { assembledToolCalls: calls } = await collectChunks(stream);
    expect(calls.map((call) => call.index)).toEqual([0]);
    expect(JSON.parse(calls[0].arguments)).toEqual({ location: 'Paris' });
    const sent = fake.requests[0];
    expect(sent.path).toBe('/chat/completions?api-version=2024-04-01');
    expect(sent.headers.authorization).toBe(`Bearer ${fake.key}`);
    expect(sent.headers['api-key']).toBeUndefined();
    expect(sent.json.stream_options).toBeUndefined();

    messages.push(
      { role: 'assistant', tool_calls: [{ id: calls[0].id, type: 'function', function: { name: calls[0].name, arguments: calls[0].arguments } }] },
      { role: 'tool', tool_call_id: calls[0].id, content: 'sunny' },
    );
    const answer = await serverless.chat.completions.create({ model: 'llama', messages, tools: [weatherTool] });
    expect(answer.choices[0].message.content).toBe('the tool said: sunny');
    expect(fake.requests[1].json.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: calls[0].id, content: 'sunny' });
  });

  it("keeps the endpoint's error status, with provider azure-ai", async () => {
    const error = await foundry.chat.completions
      .create(
        { model: 'x', messages: [{ role: 'user', content: 'hi' }] },
        {
          headers: {
            'x-gateway-config': JSON.stringify({
              provider: 'azure-ai',
              api_key: fake.key,
              custom_host: `${fake.url}/models`,
              cloudC_deployment_name: 'error-503',
            }),
          },
        },
      )
      .catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(error.status).toBe(503);
    expect(error.error.provider).toBe('azure-ai');
    expect(error.message).toMatch(/fake azure error 503/);
  });
});
