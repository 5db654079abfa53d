import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicErrorBody, startFakeAnthropic, type FakeAnthropic } from '../support/fakes/anthropic';
import { collectChunks, weatherTool } from '../support/chat-stream';
import { gatewayFetch, openaiClient, waitForLogs } from '../support/gateway-client';
import { readRecordingBytes, readRecordingJson, recordingsPresent } from '../support/recordings';
import { collectSse } from '../support/sse';

/** A thinking request and what its streamed answer must carry. */
interface ThinkingExchange {
  model: string;
  question: string;
  /** How the streamed thinking starts. */
  thinking: RegExp;
  signature: string;
  text: string;
}

describe('anthropic through the gateway with the official openai client', () => {
  let fake: FakeAnthropic;
  let client: OpenAI;
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    client = openaiClient({ provider: 'anthropic', apiKey: 'sk-ant-e2e', headers: { 'x-gateway-custom-host': fake.url } });
  });
  afterAll(() => fake.close());

  /** Answers the next call with an overloaded error and checks the client gets Anthropic's status, type and message. */
  const expectOverloadedRelayed = async (answer: { status: number; body: unknown }, message: string) => {
    fake.script({ status: answer.status, json: answer.body });
    const overloaded = await client.chat.completions
      .create({ model: 'claude-sonnet-4-20250514', messages: [{ role: 'user', content: 'hi' }] })
      .catch((error) => error);
    expect(overloaded).toBeInstanceOf(OpenAI.APIError);
    expect(overloaded.status).toBe(529);
    expect(overloaded.error).toEqual({ message, type: 'overloaded_error', param: null, code: 'overloaded_error', provider: 'anthropic' });
  };

  /** Streams a thinking answer that ends in a refusal through a config with strict_api_compliance off. */
  const expectThinkingStreamed = async (sse: string | Buffer, expected: ThinkingExchange) => {
    const config = { provider: 'anthropic', api_key: 'sk-ant-cfg', custom_host: fake.url, strict_api_compliance: false };
    // The provider header agrees with the config's target, as a header beside a config must.
    const thinking = openaiClient({ provider: 'anthropic', headers: { 'x-gateway-config': JSON.stringify(config) } });
    fake.script({ sse });
    const stream = await thinking.chat.completions.create({
      model: expected.model,
      messages: [{ role: 'user', content: expected.question }],
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    } as never);
    const { chunks, text, finishReason } = await collectChunks(stream as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>);
    const blocks = chunks.flatMap((chunk) => (chunk.choices[0]?.delta as any)?.content_blocks ?? []);
    expect(blocks.map((block: any) => block.thinking ?? '').join('')).toMatch(expected.thinking);
    expect(blocks.at(-1).signature).toBe(expected.signature);
    expect(text).toBe(expected.text);
    expect(finishReason).toBe('content_filter');
    expect(fake.requests.at(-1)!.json).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 1024 + 4096 });
    expect(fake.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-cfg');
  };

  it('gets a plain text completion', async () => {
    const traceId = `anthropic-text-${Date.now()}`;
    const { data, response } = await client.chat.completions
      .create(
        {
          model: 'claude-sonnet-4-20250514',
          messages: [
            { role: 'system', content: 'Be brief.' },
            { role: 'user', content: 'Hello Claude' },
          ],
          temperature: 0.2,
        },
        { headers: { 'x-gateway-trace-id': traceId } },
      )
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.id).toMatch(/^msg_fake/);
    expect(data.model).toBe('claude-sonnet-4-20250514');
    expect(data.choices[0].message).toMatchObject({ role: 'assistant', content: 'echo: Hello Claude' });
    expect(data.choices[0].finish_reason).toBe('stop');
    expect(data.usage?.completion_tokens).toBe(7);
    expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(3);
    expect(data.usage?.total_tokens).toBe(data.usage!.prompt_tokens + 7);
    expect(response.headers.get('x-gateway-provider')).toBe('anthropic');
    expect(response.headers.get('request-id')).toMatch(/^req_fake/);

    const sent = fake.requests.at(-1)!;
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe('sk-ant-e2e');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.json).toEqual({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 4096,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello Claude' }],
      temperature: 0.2,
    });
    const [log] = await waitForLogs(traceId);
    expect(log.usage.total_tokens).toBe(data.usage!.total_tokens);
  });

  it('streams a tool call with stable index and id, incremental arguments and usage at the end', async () => {
    const stream = await client.chat.completions.create({
      model: 'claude-sonnet-4-20250514',
      messages: [{ role: 'user', content: "What's the weather in Paris?" }],
      tools: [weatherTool],
      stream: true,
      stream_options: { include_usage: true },
    });
    const { chunks, text, toolCalls, toolArguments, finishReason, last } = await collectChunks(stream);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(text).toBe('Let me check.');
    expect(toolCalls[0]).toMatchObject({ index: 0, id: expect.stringMatching(/^toolu_fake/), type: 'function', function: { name: 'get_weather' } });
    expect(toolCalls.every((call) => call.index === 0)).toBe(true);
    expect(toolCalls.length).toBeGreaterThan(2);
    expect(JSON.parse(toolArguments())).toEqual({ location: 'Paris' });
    expect(finishReason).toBe('tool_calls');
    expect(last!.choices).toEqual([]);
    expect(last!.usage).toMatchObject({ completion_tokens: 7, prompt_tokens_details: { cached_tokens: 3 } });
    expect(fake.requests.at(-1)!.json).toMatchObject({ stream: true, tools: [{ name: 'get_weather', input_schema: weatherTool.function.parameters }] });
  });

  it('holds a two-turn tool conversation', async () => {
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Use the tool: weather in Paris?' }];
    const first = await client.chat.completions.create({ model: 'claude-sonnet-4-20250514', messages, tools: [weatherTool], tool_choice: 'required' });
    const call = first.choices[0].message.tool_calls![0] as OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    expect(first.choices[0].message.content).toBeNull();
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris' });
    expect(fake.requests.at(-1)!.json.tool_choice).toEqual({ type: 'any' });

    messages.push(first.choices[0].message, { role: 'tool', tool_call_id: call.id, content: '18C and sunny' });
    const second = await client.chat.completions.create({ model: 'claude-sonnet-4-20250514', messages, tools: [weatherTool] });
    expect(second.choices[0].message.content).toBe('The tool said: 18C and sunny');
    expect(second.choices[0].finish_reason).toBe('stop');
    expect(fake.requests.at(-1)!.json.messages).toEqual([
      { role: 'user', content: 'Use the tool: weather in Paris?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: 'get_weather', input: { location: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: '18C and sunny' }] },
    ]);
  });

  it('surfaces provider error statuses with the provider message', async () => {
    const limited = await client.chat.completions.create({ model: 'error-429', messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited.status).toBe(429);
    expect(limited.error).toMatchObject({ type: 'rate_limit_error', provider: 'anthropic' });
    expect(limited.headers.get('retry-after')).toBe('1');

    await expectOverloadedRelayed({ status: 529, body: anthropicErrorBody(529, 'Busy, try again') }, 'Busy, try again');
  });

  it('ends a stream that fails midway with an error event and [DONE]', async () => {
    const response = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-gateway-provider': 'anthropic', authorization: 'Bearer sk-ant-e2e', 'x-gateway-custom-host': fake.url },
      body: JSON.stringify({ model: 'error-midstream', messages: [{ role: 'user', content: 'a long answer' }], stream: true }),
    });
    const { status, json, doneLast } = await collectSse(response as unknown as Response);
    expect(status).toBe(200);
    expect((json[0] as any).choices[0].delta.role).toBe('assistant');
    expect(json.at(-1)).toEqual({ error: { message: 'Overloaded', type: 'overloaded_error', param: null, code: 'overloaded_error', provider: 'anthropic' } });
    expect(doneLast).toBe(true);
  });

  // The thinking stream that strict_api_compliance off lets through is replayed from the recordings (below).
  it('refuses thinking with strict_api_compliance on', async () => {
    const refused = await client.chat.completions
      .create({
        model: 'claude-sonnet-4-20250514',
        messages: [{ role: 'user', content: 'think' }],
        thinking: { type: 'enabled', budget_tokens: 1024 },
      } as never)
      .catch((error) => error);
    expect(refused.status).toBe(400);
    expect(refused.error.message).toMatch(/strict_api_compliance: false/);
  });

  it('answers 400 for text completions and embeddings', async () => {
    const completion = await client.completions.create({ model: 'claude-sonnet-4-20250514', prompt: 'x' }).catch((error) => error);
    expect(completion.status).toBe(400);
    expect(completion.message).toMatch(/not supported by anthropic/);
    const embedding = await client.embeddings.create({ model: 'claude-sonnet-4-20250514', input: 'x' }).catch((error) => error);
    expect(embedding.status).toBe(400);
  });

  it('passes a native Messages request through with x-api-key and the client anthropic-version', async () => {
    const response = await gatewayFetch('/messages', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-gateway-provider': 'anthropic',
        authorization: 'Bearer sk-ant-pt',
        'x-gateway-custom-host': fake.url,
        'anthropic-version': '2023-01-01',
      },
      body: JSON.stringify({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'native' }] }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'echo: native' }] });
    const sent = fake.requests.at(-1)!;
    expect(sent.headers).toMatchObject({ 'x-api-key': 'sk-ant-pt', 'anthropic-version': '2023-01-01' });
    expect(sent.headers.authorization).toBeUndefined();
  });

  // Read inside the tests, so a clone without the recordings beside it skips them.
  describe.skipIf(!recordingsPresent)('recorded transcripts', () => {
    it('relays the recorded 529 overloaded body', () =>
      expectOverloadedRelayed({ status: 529, body: readRecordingJson('anthropic_error_529_overloaded.json') }, 'Overloaded'));

    it('streams the recorded thinking and refusal as content_blocks with strict_api_compliance off', () =>
      expectThinkingStreamed(readRecordingBytes('anthropic_stream_thinking_signature_refusal.SYNTHETIC.sse'), {
        model: 'claude-fable-5',
        question: 'eclipse?',
        thinking: /^Simple educational question/,
        signature: 'c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=',
        text: 'Hi',
      }));
  });
});
