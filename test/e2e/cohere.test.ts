import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collectChunks, weatherTool } from '../support/chat-stream';
import { startFakeCohere, type FakeCohere } from '../support/fakes/cohere';
import { openaiClient, waitForLogs } from '../support/gateway-client';

describe('cohere through the gateway with the official openai client', () => {
  let fake: FakeCohere;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeCohere();
    client = openaiClient({ provider: 'cohere', apiKey: fake.key, headers: { 'x-gateway-custom-host': `${fake.url}/v2` } });
  });
  beforeEach(() => {
    fake.requests.length = 0;
  });
  afterAll(() => fake.close());

  it('gets a chat completion, usage from tokens', async () => {
    const { data, response } = await client.chat.completions
      .create({
        model: 'command-a-03-2025',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello Cohere' },
        ],
        max_tokens: 50,
        top_p: 0.5,
        stop: ['\n\n'],
      })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.id).toBe('cohere-fake-0001');
    expect(data.model).toBe('command-a-03-2025');
    expect(data.choices[0].message).toEqual({ role: 'assistant', content: 'echo: Hello Cohere' });
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage).toEqual({ prompt_tokens: 120, completion_tokens: 6, total_tokens: 126, prompt_tokens_details: { cached_tokens: 32 } });
    expect(response.headers.get('x-gateway-provider')).toBe('cohere');
    const sent = fake.requests[0];
    expect(sent.path).toBe('/v2/chat');
    expect(sent.json).toEqual({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello Cohere' },
      ],
      max_tokens: 50,
      p: 0.5,
      stop_sequences: ['\n\n'],
    });
  });

  it('streams text with the usage chunk when asked, and logs the usage', async () => {
    const traceId = `cohere-stream-${Date.now()}`;
    const stream = await client.chat.completions.create(
      { model: 'command-a-03-2025', messages: [{ role: 'user', content: 'Stream this please' }], stream: true, stream_options: { include_usage: true } },
      { headers: { 'x-gateway-trace-id': traceId } },
    );
    const { chunks, text, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(text).toBe('echo: Stream this please');
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('stop');
    expect(last!.usage).toMatchObject({ prompt_tokens: 120, completion_tokens: 6, total_tokens: 126 });
    expect(fake.requests[0].json.stream).toBe(true);
    const [log] = await waitForLogs(traceId);
    expect(log.usage.total_tokens).toBe(126);
  });

  it('streams a tool call and carries a two-turn tool conversation', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
    const stream = await client.chat.completions.create({ model: 'command-a-03-2025', messages, tools: [weatherTool], tool_choice: 'required', stream: true });
    const { assembledToolCalls, finishReasons } = await collectChunks(stream);
    expect(assembledToolCalls).toEqual([{ index: 0, id: 'get_weather_fk3x9q2b7m1n', name: 'get_weather', arguments: '{"location":"Paris"}' }]);
    const [call] = assembledToolCalls;
    expect(finishReasons).toEqual(['tool_calls']);
    expect(fake.requests[0].json.tool_choice).toBe('REQUIRED');

    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.id, content: '18°C' },
    );
    const answer = await client.chat.completions.create({ model: 'command-a-03-2025', messages, tools: [weatherTool] });
    expect(answer.choices[0].message.content).toBe('the tools said: 18°C');
    expect(fake.requests[1].json.messages.slice(1)).toEqual([
      { role: 'assistant', tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
      { role: 'tool', tool_call_id: call.id, content: '18°C' },
    ]);
  });

  it('gets a non-streamed tool call', async () => {
    const data = await client.chat.completions.create({ model: 'command-a-03-2025', messages: [{ role: 'user', content: 'weather?' }], tools: [weatherTool] });
    expect(data.choices[0].finish_reason).toBe('tool_calls');
    expect(data.choices[0].message.content).toBeNull();
    expect(data.choices[0].message.tool_calls).toEqual([
      { id: 'get_weather_fk3x9q2b7m1n', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } },
    ]);
  });

  it('embeds, decoding the base64 the client asks for by default', async () => {
    const decoded = await client.embeddings.create({ model: 'embed-v4.0', input: ['abcdefgh', 'xy'] });
    expect(decoded.data.map((item) => item.embedding)).toEqual([
      [1, -0.5, 0.25],
      [0.25, -0.5, 1.25],
    ]);
    expect(decoded.usage).toEqual({ prompt_tokens: 6, total_tokens: 6 });
    expect(fake.requests[0].json).toEqual({ model: 'embed-v4.0', texts: ['abcdefgh', 'xy'], input_type: 'search_document', embedding_types: ['float'] });
  });

  it("keeps Cohere's error status and message, and answers 400 for what it cannot map", async () => {
    const error = await client.chat.completions.create({ model: 'error-429', messages: [{ role: 'user', content: 'hi' }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.error).toMatchObject({ message: 'fake cohere error 429', provider: 'cohere' });

    const badKey = openaiClient({ provider: 'cohere', apiKey: 'wrong', headers: { 'x-gateway-custom-host': `${fake.url}/v2` } });
    const auth = await badKey.chat.completions
      .create({ model: 'command-a', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .catch((caught) => caught);
    expect(auth).toBeInstanceOf(OpenAI.AuthenticationError);

    const unsupported = await client.chat.completions
      .create({ model: 'command-a', messages: [{ role: 'user', content: 'hi' }], n: 2 })
      .catch((caught) => caught);
    expect(unsupported).toBeInstanceOf(OpenAI.BadRequestError);
    expect(unsupported.param).toBe('n');
    expect(fake.requests.length).toBe(2);
  });
});
