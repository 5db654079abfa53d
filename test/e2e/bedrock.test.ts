import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { collectChunks, makeWeatherTool } from '../support/chat-stream';
import { pixelPng, startFakeBedrock, type FakeBedrock } from '../support/fakes/bedrock';
import { gatewayFetch, openaiClient, waitForLogs } from '../support/gateway-client';
import { parseSse } from '../support/sse';

const credentials = {
  accessKeyId: 'AKIDFAKEBEDROCK00001',
  secretAccessKey: 'fake/Secret+Key/for/the/bedrock/e2e/tests',
  sessionToken: 'FQoGZXIvYXdzEFAKEsessiontoken//abc==',
  region: 'eu-west-1',
};
const claude = 'anthropic.claude-3-5-sonnet-20240620-v1:0';
const weatherTool = makeWeatherTool({ parameter: 'city', description: 'Weather in a city' });

describe('bedrock through the gateway with the official openai client', () => {
  let fake: FakeBedrock;
  let cloudHeaders: Record<string, string>;
  let client: OpenAI;

  beforeAll(async () => {
    fake = await startFakeBedrock({ ...credentials, apiKey: 'bedrock-api-key-123' });
    cloudHeaders = {
      'x-gateway-custom-host': fake.url,
      'x-gateway-cloudA-access-key-id': credentials.accessKeyId,
      'x-gateway-cloudA-secret-access-key': credentials.secretAccessKey,
      'x-gateway-cloudA-session-token': credentials.sessionToken,
      'x-gateway-cloudA-region': credentials.region,
    };
    client = openaiClient({ provider: 'bedrock', headers: cloudHeaders });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('gets a plain text completion over a SigV4-signed Converse call', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: claude,
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello Bedrock' },
        ],
        max_tokens: 100,
        temperature: 0.2,
        stop: ['END'],
        seed: 7,
      })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe(claude);
    expect(data.choices[0].message).toMatchObject({ role: 'assistant', content: 'echo: Hello Bedrock' });
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage).toMatchObject({ prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 });
    expect(response.headers.get('x-gateway-provider')).toBe('bedrock');

    const sent = fake.requests.at(-1)!;
    expect(sent.auth).toBe('sigv4');
    expect(sent.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(sent.headers['x-amz-security-token']).toBe(credentials.sessionToken);
    expect(sent.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDFAKEBEDROCK00001\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, /,
    );
    expect(sent.json).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hello Bedrock' }] }],
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, stopSequences: ['END'] },
    });
  });

  it('streams a tool call from the binary event stream, with usage on the last chunk', async () => {
    const stream = await client.chat.completions.create({
      model: claude,
      messages: [{ role: 'user', content: 'Please call a tool for Paris' }],
      tools: [weatherTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, toolCalls, toolArguments, finishReason, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(text).toBe('Let me check.');
    expect(toolCalls[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(toolCalls[0].id).toMatch(/^tooluse_fake/);
    expect(toolCalls.every((call) => call.index === 0)).toBe(true);
    expect(JSON.parse(toolArguments())).toEqual({ city: 'example' });
    expect(finishReason).toBe('tool_calls');
    expect(last).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });

    const sent = fake.requests.at(-1)!;
    expect(sent.action).toBe('converse-stream');
    expect(sent.headers.accept).toBe('application/vnd.amazon.eventstream');
    expect(sent.json.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'Weather in a city', inputSchema: { json: weatherTool.function.parameters } } }],
    });
  });

  it('round-trips a two-turn tool conversation and keeps the tools Bedrock needs for the history', async () => {
    const question: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Oslo?' };
    const first = await client.chat.completions.create({ model: claude, messages: [question], tools: [weatherTool], tool_choice: 'required' });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(fake.requests.at(-1)!.json.toolConfig.toolChoice).toEqual({ any: {} });

    const history: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      question,
      first.choices[0].message as OpenAI.Chat.Completions.ChatCompletionMessageParam,
      { role: 'tool', tool_call_id: call.id, content: '{"temperature":"22C","sky":"sunny"}' },
    ];
    const second = await client.chat.completions.create({ model: claude, messages: history, tools: [weatherTool] });
    expect(second.choices[0].message.content).toBe('tool said: {"temperature":"22C","sky":"sunny"}');
    expect(second.choices[0].finish_reason).toBe('stop');
    const sent = fake.requests.at(-1)!.json;
    expect(sent.messages[1]).toEqual({
      role: 'assistant',
      content: [{ text: 'Let me check.' }, { toolUse: { toolUseId: call.id, name: 'get_weather', input: { city: 'example' } } }],
    });
    expect(sent.messages[2]).toEqual({
      role: 'user',
      content: [{ toolResult: { toolUseId: call.id, content: [{ text: '{"temperature":"22C","sky":"sunny"}' }] } }],
    });

    // A third turn with tool_choice "none": the history's tool blocks still need a toolConfig.
    const third = await client.chat.completions.create({
      model: claude,
      messages: [...history, { role: 'assistant', content: second.choices[0].message.content }, { role: 'user', content: 'Thanks, summarise' }],
      tools: [weatherTool],
      tool_choice: 'none',
    });
    expect(third.choices[0].message.content).toBe('echo: Thanks, summarise');
    const lastSent = fake.requests.at(-1)!.json;
    expect(lastSent.toolConfig.tools).toHaveLength(1);
    expect(lastSent.toolConfig.toolChoice).toBeUndefined();
  });

  it('surfaces a Bedrock error with its status and message', async () => {
    const error = await client.chat.completions.create({ model: 'error-429', messages: [{ role: 'user', content: 'hi' }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.status).toBe(429);
    expect(error.error).toMatchObject({ provider: 'bedrock', type: 'rate_limit_error', message: 'Too many requests, please wait before trying again.' });
  });

  it('gets 403 from Bedrock when the signature does not verify (wrong secret)', async () => {
    const wrong = openaiClient({ provider: 'bedrock', headers: { ...cloudHeaders, 'x-gateway-cloudA-secret-access-key': 'not-the-secret' } });
    const error = await wrong.chat.completions.create({ model: claude, messages: [{ role: 'user', content: 'hi' }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.error).toMatchObject({ provider: 'bedrock', message: expect.stringContaining('signature we calculated does not match') });
  });

  it('signs an inference-profile ARN as one encoded path segment', async () => {
    const arn = 'arn:aws:bedrock:eu-west-1:123456789012:application-inference-profile/abc123';
    const data = await client.chat.completions.create({ model: arn, messages: [{ role: 'user', content: 'via profile' }] });
    expect(data.choices[0].message.content).toBe('echo: via profile');
    expect(fake.requests.at(-1)!.path).toBe('/model/arn%3Aaws%3Abedrock%3Aeu-west-1%3A123456789012%3Aapplication-inference-profile%2Fabc123/converse');
    expect(fake.requests.at(-1)!.modelId).toBe(arn);
  });

  it('ends a stream broken by an exception frame with an error event and [DONE]', async () => {
    fake.script({
      frames: [
        { event: 'messageStart', payload: { role: 'assistant' } },
        { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Partial' } } },
        { exception: 'throttlingException', payload: { message: 'Too many tokens, please wait.' } },
      ],
    });
    const response = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...cloudHeaders, 'x-gateway-provider': 'bedrock', 'content-type': 'application/json' },
      body: JSON.stringify({ model: claude, messages: [{ role: 'user', content: 'stream then fail' }], stream: true }),
    });
    expect(response.status).toBe(200);
    const events = parseSse(await response.text());
    expect(JSON.parse(events[1].data).choices[0].delta.content).toBe('Partial');
    expect(JSON.parse(events.at(-2)!.data)).toEqual({
      error: { message: 'Too many tokens, please wait.', type: 'rate_limit_error', param: null, code: 'throttlingException', provider: 'bedrock' },
    });
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('streams correctly when frames arrive cut into 7-byte pieces', async () => {
    fake.script({
      splitEvery: 7,
      frames: [
        { event: 'messageStart', payload: { role: 'assistant' } },
        { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Sliced ' } } },
        { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'frames' } } },
        { event: 'messageStop', payload: { stopReason: 'max_tokens' } },
        { event: 'metadata', payload: { usage: { inputTokens: 5, outputTokens: 2, totalTokens: 7, cacheReadInputTokens: 3 } } },
      ],
    });
    const traceId = `bedrock-split-${Date.now()}`;
    const stream = await client.chat.completions.create(
      { model: claude, messages: [{ role: 'user', content: 'x' }], stream: true },
      { headers: { 'x-gateway-trace-id': traceId } },
    );
    const { text, finishReasons } = await collectChunks(stream);
    expect(text).toBe('Sliced frames');
    expect(finishReasons).toEqual(['length']);
    const [log] = await waitForLogs(traceId);
    expect(log.usage).toMatchObject({ prompt_tokens: 8, completion_tokens: 2, total_tokens: 10, prompt_tokens_details: { cached_tokens: 3 } });
  });

  it('fetches a remote image for Bedrock, which takes only bytes', async () => {
    const data = await client.chat.completions.create({
      model: claude,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: `${fake.url}/assets/pixel.png` } },
          ],
        },
      ],
    });
    expect(data.choices[0].message.content).toBe('echo: what is this');
    expect(fake.requests.at(-1)!.json.messages[0].content[1]).toEqual({ image: { format: 'png', source: { bytes: pixelPng.toString('base64') } } });
  });

  it('authenticates with a Bedrock API key when no AWS keys are given', async () => {
    const keyed = openaiClient({ provider: 'bedrock', apiKey: 'bedrock-api-key-123', headers: { 'x-gateway-custom-host': fake.url } });
    const data = await keyed.chat.completions.create({ model: claude, messages: [{ role: 'user', content: 'with a key' }] });
    expect(data.choices[0].message.content).toBe('echo: with a key');
    expect(fake.requests.at(-1)!.auth).toBe('bearer');
  });

  it('embeds with Titan through InvokeModel, as base64 by default in the client', async () => {
    const result = await client.embeddings.create({ model: 'amazon.titan-embed-text-v2:0', input: 'hello world' });
    expect(result.data[0].embedding).toEqual([0.10999999940395355, 0.25, -0.5, 0.125]);
    expect(result.usage.prompt_tokens).toBe(3);
    expect(fake.requests.at(-1)).toMatchObject({ action: 'invoke', json: { inputText: 'hello world' } });
  });

  it('answers text completions with a 400 that points at chat', async () => {
    const error = await client.completions.create({ model: claude, prompt: 'hi' }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.message).toMatch(/chat\/completions/);
  });

  it('passes a native Converse call through, signed over the raw request', async () => {
    const response = await gatewayFetch(`/model/${encodeURIComponent(claude)}/converse`, {
      method: 'POST',
      headers: { ...cloudHeaders, 'x-gateway-provider': 'bedrock', 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'native call' }] }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      output: { message: { role: 'assistant', content: [{ text: 'echo: native call' }] } },
      stopReason: 'end_turn',
    });
    expect(fake.requests.at(-1)!.auth).toBe('sigv4');
  });
});
