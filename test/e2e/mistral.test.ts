import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../lib/core/usage';
import { collectChunks, collectChunksUntilError, makeWeatherTool } from '../support/chat-stream';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { openaiClient } from '../support/gateway-client';
import { readRecording, recordingsPresent } from '../support/recordings';

const weatherTool = makeWeatherTool({ description: null });
const mistralId = /^[a-zA-Z0-9]{9}$/;

/** The model and the one user question of a chat request. */
interface ChatRequest {
  model: string;
  content: string;
}

describe('mistral-ai through the gateway with the official openai client', () => {
  let upstream: FakeUpstream;
  let client: OpenAI;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    client = openaiClient({ provider: 'mistral-ai', apiKey: 'mistral-key', headers: { 'x-gateway-custom-host': `${upstream.url}/mistral/v1` } });
  });
  beforeEach(() => upstream.reset());
  afterAll(() => upstream.close());

  /** Relays a non-streamed answer for a question, sending Mistral's names for the seed and the token limit. */
  const expectCompletionRelayed = async (answer: string, request: ChatRequest & { maxTokens: number }, expected: { id: string; usage: TokenUsage }) => {
    upstream.script('/mistral', [{ status: 200, body: answer, headers: { 'content-type': 'application/json' } }]);
    const data = await client.chat.completions.create({
      model: request.model,
      messages: [{ role: 'user', content: request.content }],
      seed: 42,
      max_completion_tokens: request.maxTokens,
    });
    expect(data.id).toBe(expected.id);
    expect(data.choices[0].message.content).toBe(JSON.parse(answer).choices[0].message.content);
    expect(data.choices[0].finish_reason).toBe('length');
    expect(data.usage).toEqual(expected.usage);
    const sent = upstream.requests[0];
    expect(sent.path).toBe('/mistral/v1/chat/completions');
    expect(sent.headers.authorization).toBe('Bearer mistral-key');
    expect(sent.json).toEqual({
      model: request.model,
      messages: [{ role: 'user', content: request.content }],
      random_seed: 42,
      max_tokens: request.maxTokens,
    });
  };

  /** Relays a stream whose usage rides on the final content chunk, without sending stream_options. */
  const expectStreamRelayed = async (sse: string, request: ChatRequest, expected: { text: RegExp; usage: TokenUsage }) => {
    upstream.script('/mistral', [{ rawSse: sse, splitEvery: 500 }]);
    const stream = await client.chat.completions.create({
      model: request.model,
      messages: [{ role: 'user', content: request.content }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(text).toMatch(expected.text);
    expect(last!.choices[0].finish_reason).toBe('length');
    expect(last!.usage).toEqual(expected.usage);
    expect((upstream.requests[0].json as any).stream_options).toBeUndefined();
  };

  it('gets a completion cut at max_tokens, sending random_seed and max_tokens', () =>
    expectCompletionRelayed(
      JSON.stringify({
        id: 'm1',
        object: 'chat.completion',
        created: 1,
        model: 'mistral-small-latest',
        choices: [{ index: 0, message: { role: 'assistant', content: 'On Tues', tool_calls: null }, finish_reason: 'length' }],
        usage: { prompt_tokens: 5, total_tokens: 8, completion_tokens: 3 },
      }),
      { model: 'mistral-small-latest', content: 'When?', maxTokens: 3 },
      { id: 'm1', usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 } },
    ));

  it('streams with the usage on the final content chunk', () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null, extra = '') =>
      `data: {"id":"m2","object":"chat.completion.chunk","created":1,"model":"mistral-small-latest","choices":[{"index":0,"delta":${JSON.stringify(delta)},"finish_reason":${JSON.stringify(finish)}}]${extra}}\n\n`;
    const sse = `${chunk({ role: 'assistant', content: '' }, null)}${chunk({ content: 'On Tu' }, null)}${chunk({ content: 'es' }, 'length', ',"usage":{"prompt_tokens":5,"total_tokens":8,"completion_tokens":3}')}data: [DONE]\n\n`;
    return expectStreamRelayed(
      sse,
      { model: 'mistral-small-latest', content: 'When?' },
      { text: /^On Tues$/, usage: { prompt_tokens: 5, total_tokens: 8, completion_tokens: 3 } },
    );
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
    it('gets the recorded completion, sending random_seed and max_tokens', () =>
      expectCompletionRelayed(
        readRecording('mistral_chat_completion_nonstream.json'),
        { model: 'mistral-large-latest', content: 'Coca-Cola?', maxTokens: 100 },
        { id: 'b5899875951449e9a2997246a3a54d21', usage: { prompt_tokens: 34, completion_tokens: 100, total_tokens: 134 } },
      ));

    it('streams the recorded stream with its usage on the final content chunk', () =>
      expectStreamRelayed(
        readRecording('mistral_chat_stream_text_usage_in_final_chunk.sse'),
        { model: 'mistral-large-latest', content: 'Coca-Cola?' },
        { text: /^Coca-Cola, often referred to as Coke/, usage: { prompt_tokens: 34, total_tokens: 134, completion_tokens: 100 } },
      ));
  });
});
