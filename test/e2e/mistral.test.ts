import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mistralCompletionSample, mistralStreamSample } from '../fixtures/providers/mistral';
import { collectChunks, collectChunksUntilError, makeWeatherTool } from '../support/chat-stream';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openaiClient } from '../support/gateway-client';
import { readRecording, readRecordingJson, recordingsPresent } from '../support/recordings';

const weatherTool = makeWeatherTool({ description: null });
const mistralId = /^[a-zA-Z0-9]{9}$/;

describe('mistral-ai through the gateway with the official openai client', () => {
  let upstream: FakeUpstream;
  let client: OpenAI;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    client = openaiClient({ provider: 'mistral-ai', apiKey: 'mistral-key', headers: { 'x-gateway-custom-host': `${upstream.url}/mistral/v1` } });
  });
  beforeEach(() => upstream.reset());
  afterAll(() => upstream.close());

  it('gets the completion, sending random_seed and max_tokens', async () => {
    upstream.script('/mistral', [{ status: 200, body: JSON.stringify(mistralCompletionSample), headers: { 'content-type': 'application/json' } }]);
    const data = await client.chat.completions.create({
      model: 'mistral-small-latest',
      messages: [{ role: 'user', content: 'When does order A-1042 ship?' }],
      seed: 42,
      max_completion_tokens: 32,
    });
    expect(data.id).toBe('4c1e9a7f0b2d48e6a5f3c8d17e6b0a92');
    expect(data.choices[0].message.content).toBe(mistralCompletionSample.choices[0].message.content);
    expect(data.choices[0].finish_reason).toBe('length');
    expect(data.usage).toEqual({ prompt_tokens: 27, completion_tokens: 32, total_tokens: 59 });
    const sent = upstream.requests[0];
    expect(sent.path).toBe('/mistral/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer mistral-key');
    expect(sent.json).toEqual({
      model: 'mistral-small-latest',
      messages: [{ role: 'user', content: 'When does order A-1042 ship?' }],
      random_seed: 42,
      max_tokens: 32,
    });
  });

  it('streams with the usage on the final content chunk', async () => {
    upstream.script('/mistral', [{ rawSse: mistralStreamSample, splitEvery: 500 }]);
    const stream = await client.chat.completions.create({
      model: 'mistral-small-latest',
      messages: [{ role: 'user', content: 'When does order A-1042 ship?' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(text).toBe('Your order A-1042 ships on Tuesday. Tracking details follow by email once the parcel is sc');
    expect(last!.choices[0].finish_reason).toBe('length');
    expect(last!.usage).toEqual({ prompt_tokens: 19, total_tokens: 44, completion_tokens: 25 });
    expect((upstream.requests[0].json as any).stream_options).toBeUndefined();
  });

  it('streams a forced tool call (tool_choice any) and sends the OpenAI call id back as a Mistral id', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const stream = await client.chat.completions.create({
      model: 'mistral-large-latest',
      messages,
      tools: [weatherTool],
      tool_choice: 'required',
      stream: true,
    });
    const { assembledToolCalls } = await collectChunks(stream);
    expect(assembledToolCalls).toHaveLength(1);
    const [call] = assembledToolCalls;
    expect((upstream.requests[0].json as any).tool_choice).toBe('any');
    expect(call.id).toMatch(/^call_/);
    expect(call.name).toBe('get_weather');

    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }] },
      { role: 'tool', tool_call_id: call.id, content: '18°C' },
    );
    messages.push({ role: 'user', content: 'Thanks' });
    const answer = await client.chat.completions.create({ model: 'mistral-large-latest', messages, tools: [weatherTool] });
    expect(answer.choices[0].message.content).toBe('echo: Thanks');
    const sent = upstream.requests[1].json as any;
    const sentId = sent.messages[1].tool_calls[0].id;
    expect(sentId).toMatch(mistralId);
    expect(sent.messages[2]).toEqual({ role: 'tool', tool_call_id: sentId, content: '18°C' });
  });

  it('keeps the error status, and turns finish_reason "error" into an error the client sees', async () => {
    const error = await client.chat.completions.create({ model: 'error-429', messages: [{ role: 'user', content: 'hi' }] }).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error.error.provider).toBe('mistral-ai');

    upstream.script('/mistral', [
      {
        sse: [
          '{"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"Par"},"finish_reason":null}]}',
          '{"id":"a","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tial"},"finish_reason":"error"}]}',
          '[DONE]',
        ],
      },
    ]);
    const stream = await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
    const { text, error: failure } = await collectChunksUntilError(stream);
    expect(text).toBe('Partial');
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect((failure as Error).message).toMatch(/finish reason "error"/);
  });

  describe.skipIf(!recordingsPresent)('mistral-ai: recorded transcripts', () => {
    it('gets the recorded completion, sending random_seed and max_tokens', async () => {
      upstream.script('/mistral', [
        { status: 200, body: readRecording('mistral_chat_completion_nonstream.json'), headers: { 'content-type': 'application/json' } },
      ]);
      const data = await client.chat.completions.create({
        model: 'mistral-large-latest',
        messages: [{ role: 'user', content: 'Coca-Cola?' }],
        seed: 42,
        max_completion_tokens: 100,
      });
      const recorded = readRecordingJson<any>('mistral_chat_completion_nonstream.json');
      expect(data.id).toBe(recorded.id);
      expect(data.choices[0].message.content).toBe(recorded.choices[0].message.content);
      expect(data.choices[0].finish_reason).toBe('length');
      expect(data.usage).toEqual({ prompt_tokens: 34, completion_tokens: 100, total_tokens: 134 });
      const sent = upstream.requests[0];
      expect(sent.path).toBe('/mistral/v1/chat/completions');
      expect(sent.headers.authorization).toBe('Bearer mistral-key');
      expect(sent.json).toEqual({ model: 'mistral-large-latest', messages: [{ role: 'user', content: 'Coca-Cola?' }], random_seed: 42, max_tokens: 100 });
    });

    it('streams the recorded stream with its usage on the final content chunk', async () => {
      upstream.script('/mistral', [{ rawSse: readRecording('mistral_chat_stream_text_usage_in_final_chunk.sse'), splitEvery: 500 }]);
      const stream = await client.chat.completions.create({
        model: 'mistral-large-latest',
        messages: [{ role: 'user', content: 'Coca-Cola?' }],
        stream: true,
        stream_options: { include_usage: true },
      });
      const { chunks, text, last } = await collectChunks(stream);
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      expect(text).toMatch(/^Coca-Cola, often referred to as Coke/);
      expect(last!.choices[0].finish_reason).toBe('length');
      expect(last!.usage).toEqual({ prompt_tokens: 34, total_tokens: 134, completion_tokens: 100 });
      expect((upstream.requests[0].json as any).stream_options).toBeUndefined();
    });
  });
});
