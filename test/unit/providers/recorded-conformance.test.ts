/**
 * Conformance against recorded third-party transcripts, an extra pass beside the tests on the
 * repository's own fixtures: the recordings live outside the repository
 * (`<GATEWAY_SHARED_DIR or ../shared>/fixtures/providers`, see SOURCES.md there) and are read at run
 * time, never copied. Without them this file is skipped, saying so in one line.
 *
 * Gemini and Vertex AI: the recorded requests are what the gateway must send for the equivalent
 * OpenAI request, and the recorded responses and streams must come back as OpenAI's format, field by
 * field. Anthropic, OpenAI, Azure OpenAI, xAI, Mistral, Cohere and Bedrock: the recorded streams and
 * bodies through the same mappers, with the official AWS event-stream codec vectors.
 */
import { once } from 'node:events';
import { Readable, type Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../../lib/core/usage';
import { eventStreamDecoder, type EventStreamHeaders, type EventStreamItem } from '../../../lib/providers/bedrock/event-stream';
import { converseStreamTransform } from '../../../lib/providers/bedrock/stream';
import { azureOpenAIProvider } from '../../../lib/providers/azure-openai';
import { googleProvider } from '../../../lib/providers/google';
import { thoughtSignatureOf } from '../../../lib/providers/google/tool-call-id';
import { openAIStreamTransform } from '../../../lib/providers/openai-compatible/stream';
import { findProvider } from '../../../lib/providers/registry';
import type { PreparedCall, ProviderCall, ResolvedTarget } from '../../../lib/providers/types';
import { vertexAiProvider } from '../../../lib/providers/vertex-ai';
import { anthropicBodyFor, chunkDeltas, prepareAnthropic, replayAnthropicStream, streamedContent } from '../../support/fakes/anthropic';
import { providerCall, replayPrepared, streamedText } from '../../support/fakes/azure';
import { prepareCohere, replayCohereStream } from '../../support/fakes/cohere';
import { chatCall, recordingSse, runTransform } from '../../support/fakes/google';
import { sharedFixturesOrNotice } from '../../support/fixtures';
import { parseSse } from '../../support/sse';

const shared = sharedFixturesOrNotice('recorded-conformance');
const recorded = () => shared!;

const target: ResolvedTarget = { provider: googleProvider, baseUrl: googleProvider.baseUrl, settings: { api_key: 'AIza-test' } };
const prepare = (body: Record<string, unknown>) => googleProvider.adapter.prepare(chatCall(body, target) as ProviderCall) as PreparedCall;
const sentBody = (body: Record<string, unknown>) => JSON.parse(String((prepare(body) as any).body));
const recording = (name: string) => recorded().readJson<any>(name);
const readFixture = (name: string) => recorded().read(name);
const readFixtureBytes = (name: string) => recorded().readBytes(name);

async function streamThrough(body: Record<string, unknown>, pieces: Array<string | Buffer>) {
  const usages: any[] = [];
  const prepared: any = prepare({ stream: true, ...body });
  const events = await runTransform(
    prepared.streamTransform((usage: any) => usages.push(usage)),
    pieces,
  );
  return { events, usages, chunks: events.filter((event) => event !== '[DONE]') };
}

const textOf = (chunks: any[]) => chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
const splitEvery = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, (i + 1) * size));

describe.skipIf(!shared)('Gemini generateContent (recorded, non-streamed)', () => {
  it('sends the recorded request for a system prompt and a multi-turn chat, and reads the recorded answer', () => {
    const capture = readFixture('gemini_generatecontent_nonstream_capture.txt');
    const recorded = JSON.parse(capture.slice(capture.indexOf("echo '") + 6, capture.indexOf("}')") + 1));
    const sent = sentBody({
      model: 'gemini-1.5-flash',
      messages: [
        { role: 'system', content: 'You are an assistant for the company Coca Cola ' },
        { role: 'user', content: 'allo' },
        { role: 'assistant', content: 'hello how can I help you ' },
        { role: 'user', content: 'what is Coca Cola' },
      ],
      temperature: 1,
      top_k: 40,
      top_p: 0.95,
      max_tokens: 8192,
    });
    expect(sent.contents).toEqual(recorded.contents);
    expect(sent.systemInstruction.parts).toEqual(recorded.systemInstruction.parts);
    const { responseMimeType: _textPlain, ...generationConfig } = recorded.generationConfig;
    expect(sent.generationConfig).toEqual(generationConfig);

    const response = capture.slice(capture.indexOf('\n{\n  "candidates"'));
    const { body, usage } = (prepare({ model: 'gemini-1.5-flash', messages: [{ role: 'user', content: 'x' }] }) as any).readResponse(Buffer.from(response));
    const completion = JSON.parse(body);
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'gemini-1.5-flash' });
    expect(completion.id).toMatch(/^chatcmpl-/);
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: expect.stringMatching(/^Coca-Cola is a carbonated soft drink/) },
        finish_reason: 'stop',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 26, completion_tokens: 68, total_tokens: 94 });
    expect(usage).toEqual(completion.usage);
  });

  it('maps tools and a named tool_choice to the recorded functionDeclarations and toolConfig, and the signed function call back', () => {
    const exchange = recording('gemini_generatecontent_function_call_toolconfig_recording.json').interactions[0];
    const recorded = exchange.request.bodySegments[0];
    const declaration = recorded.tools[0].functionDeclarations[0];
    const request = {
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: recorded.contents[0].parts[0].text }],
      tools: [{ type: 'function', function: { name: declaration.name, description: declaration.description, parameters: declaration.parametersJsonSchema } }],
      tool_choice: { type: 'function', function: { name: 'concatStringFunction' } },
    };
    const sent = sentBody(request);
    expect(sent.contents).toEqual(recorded.contents);
    expect(sent.tools).toEqual(recorded.tools);
    expect(sent.toolConfig).toEqual(recorded.toolConfig);

    const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(exchange.response.bodySegments[0])));
    const completion = JSON.parse(body);
    expect(completion.id).toBe('chatcmpl-eC77aJKnKYam1e8PyLWRiQw');
    expect(completion.model).toBe('gemini-2.5-flash');
    const [choice] = completion.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    expect(choice.message.tool_calls).toHaveLength(1);
    const [call] = choice.message.tool_calls;
    expect(call).toMatchObject({ type: 'function', function: { name: 'concatStringFunction' } });
    expect(JSON.parse(call.function.arguments)).toEqual({ firstString: 'hello', secondString: 'world' });
    expect(call.id).toMatch(/^call_[0-9a-f]{16}_ts_[A-Za-z0-9_-]+$/);
    // The signature survives the trip through the OpenAI id, byte for byte.
    const signature = exchange.response.bodySegments[0].candidates[0].content.parts[0].thoughtSignature;
    expect(thoughtSignatureOf(call.id)).toBe(signature);
    expect(usage).toEqual({ prompt_tokens: 65, completion_tokens: 91, total_tokens: 156, completion_tokens_details: { reasoning_tokens: 69 } });

    // The next turn sends the call back with its signature, and the result as a functionResponse.
    const next = sentBody({ ...request, messages: [...request.messages, choice.message, { role: 'tool', tool_call_id: call.id, content: 'hello world' }] });
    expect(next.contents.slice(1)).toEqual([
      {
        role: 'model',
        parts: [{ functionCall: { name: 'concatStringFunction', args: { firstString: 'hello', secondString: 'world' } }, thoughtSignature: signature }],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'concatStringFunction', response: { output: 'hello world' } } }] },
    ]);
  });

  it('sends a json_schema response_format as the recorded responseJsonSchema and reads cached and thinking tokens', () => {
    const exchange = recording('gemini_generatecontent_responseJsonSchema_recording.json').interactions[0];
    const recorded = exchange.request.bodySegments[0];
    const request = {
      model: 'gemini-2.5-flash',
      messages: [{ role: 'user', content: 'populate the following object' }],
      response_format: { type: 'json_schema', json_schema: { name: 'object', schema: recorded.generationConfig.responseJsonSchema } },
    };
    expect(sentBody(request)).toEqual(recorded);
    const { body, usage } = (prepare(request) as any).readResponse(Buffer.from(JSON.stringify(exchange.response.bodySegments[0])));
    const completion = JSON.parse(body);
    expect(JSON.parse(completion.choices[0].message.content)).toMatchObject({ simpleString: 'example', inner: { innerNumber: 100 } });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(usage).toEqual({
      prompt_tokens: 5,
      completion_tokens: 279,
      total_tokens: 284,
      prompt_tokens_details: { cached_tokens: 3 },
      completion_tokens_details: { reasoning_tokens: 41 },
    });
  });

  it("reads the recorded 404 as the provider error with Google's status as the code", () => {
    const exchange = recording('gemini_stream_error_404_recording.json').interactions[0];
    const prepared: any = prepare({ model: 'custom-gemini-2.0-flash', messages: [{ role: 'user', content: 'why is the sky blue?' }], stream: true });
    expect(prepared.url.pathname).toBe(exchange.request.url.split('?')[0]);
    expect(prepared.url.search).toBe('?alt=sse');
    expect(JSON.parse(prepared.body)).toEqual({ contents: exchange.request.bodySegments[0].contents });
    const error = prepared.readError(404, Buffer.from(JSON.stringify(exchange.response.bodySegments[0])), {});
    expect(error.status).toBe(404);
    expect(error.toBody().error).toMatchObject({
      message: expect.stringMatching(/^models\/custom-gemini-2.0-flash is not found for API version v1beta/),
      type: 'not_found_error',
      code: 'NOT_FOUND',
      provider: 'google',
    });
  });
});

describe.skipIf(!shared)('Gemini streamGenerateContent (recorded)', () => {
  it('streams the recorded text: role first, every piece in order, stop, and usage only when asked', async () => {
    const exchange = recording('gemini_stream_text_recording.json').interactions[0];
    const segments = exchange.response.bodySegments;
    const expected = segments.map((segment: any) => segment.candidates[0].content.parts[0].text).join('');
    const derived = readFixtureBytes('gemini_stream_text.DERIVED.sse');
    // Cut every 7 bytes, so events and CRLFs are split across reads.
    const { events, chunks, usages } = await streamThrough(
      { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'high' }], stream_options: { include_usage: true } },
      splitEvery(derived.toString('latin1'), 7).map((piece) => Buffer.from(piece, 'latin1')),
    );
    expect(events.at(-1)).toBe('[DONE]');
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    expect(
      chunks.every((chunk) => chunk.id === 'chatcmpl-tS77aIl-4ZvV7w_A9rTBBg' && chunk.model === 'gemini-2.5-flash' && chunk.object === 'chat.completion.chunk'),
    ).toBe(true);
    expect(textOf(chunks)).toBe(expected);
    const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.map((chunk) => chunk.choices[0].finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 20, completion_tokens: 513, total_tokens: 533, completion_tokens_details: { reasoning_tokens: 260 } });
    expect(usages).toEqual([last.usage]);

    // The same stream from the recording's JSON, without include_usage: no usage chunk, usage still reported.
    const plain = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'high' }] }, [
      recordingSse(recording('gemini_stream_text_recording.json')),
    ]);
    expect(textOf(plain.chunks)).toBe(expected);
    expect(plain.chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(plain.usages).toHaveLength(1);
  });

  it('ends the recorded MAX_TOKENS stream with finish_reason length', async () => {
    const { chunks, usages } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'why is the sky blue?' }] }, [
      readFixture('gemini_stream_max_tokens.DERIVED.sse'),
    ]);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
    expect(usages).toEqual([{ prompt_tokens: 7, completion_tokens: 198, total_tokens: 205, completion_tokens_details: { reasoning_tokens: 45 } }]);
  });

  it('streams the recorded function call as one tool call with an id, its whole arguments, and tool_calls', async () => {
    const exchanges = recording('gemini_stream_function_call_recording.json');
    const tools = [
      {
        type: 'function',
        function: {
          name: 'customDivide',
          description: 'Custom divide function',
          parameters: { type: 'object', properties: { numerator: { type: 'number' }, denominator: { type: 'number' } } },
        },
      },
    ];
    const first = { model: 'gemini-2.0-flash', messages: [{ role: 'user', content: 'what is the result of 100/2' }], tools };
    const { chunks } = await streamThrough(first, [recordingSse(exchanges, 0)]);
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toEqual({
      index: 0,
      id: expect.stringMatching(/^call_[0-9a-f]{16}$/),
      type: 'function',
      function: { name: 'customDivide', arguments: '' },
    });
    expect(
      JSON.parse(
        calls
          .slice(1)
          .map((call: any) => call.function.arguments)
          .join(''),
      ),
    ).toEqual({ denominator: 2, numerator: 100 });
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');

    // The recorded second turn: the unsigned call (gemini-2.0 signs nothing) is sent back with Google's skip value.
    const second = sentBody({
      ...first,
      messages: [
        ...first.messages,
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: calls[0].id, type: 'function', function: { name: 'customDivide', arguments: '{"denominator":2,"numerator":100}' } }],
        },
        { role: 'user', content: 'what is the result of 50/2?' },
      ],
    });
    expect(second.contents[1].parts[0].thoughtSignature).toBe('skip_thought_signature_validator');
    delete second.contents[1].parts[0].thoughtSignature;
    expect(second.contents).toEqual(exchanges.interactions[1].request.bodySegments[0].contents);
    const next = await streamThrough(first, [recordingSse(exchanges, 1)]);
    expect(next.chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []).at(-1).function.arguments).toBe('{"denominator":2,"numerator":50}');
  });

  it('turns an error chunk after the stream started into an error event and [DONE]', async () => {
    const error = recording('gemini_stream_error_404_recording.json').interactions[0].response.bodySegments[0];
    const text = recording('gemini_stream_text_recording.json').interactions[0].response.bodySegments[0];
    const { events, chunks } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, [
      `data: ${JSON.stringify(text)}\r\n\r\n`,
      `data: ${JSON.stringify(error)}\r\n\r\n`,
    ]);
    expect(textOf(chunks)).toBe(text.candidates[0].content.parts[0].text);
    expect(events.at(-2).error).toMatchObject({ code: 'NOT_FOUND', provider: 'google', message: expect.stringContaining('is not found') });
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('turns a stream that ends without a finish reason into an error event', async () => {
    const text = recording('gemini_stream_text_recording.json').interactions[0].response.bodySegments[0];
    const { events } = await streamThrough({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'x' }] }, [
      `data: ${JSON.stringify(text)}\r\n\r\n`,
    ]);
    expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'google' });
    expect(events.at(-1)).toBe('[DONE]');
  });
});

describe.skipIf(!shared)('Vertex AI streamGenerateContent (recorded)', () => {
  it('reads the recorded Vertex stream, whose usage only arrives on the last chunk', async () => {
    const exchange = recording('vertex_gemini_stream_text_recording.json');
    const vertexTarget: ResolvedTarget = {
      provider: vertexAiProvider,
      baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1',
      settings: { api_key: 'ya29.test' },
    };
    const request = {
      model: 'gemini-2.5-flash',
      messages: [
        { role: 'system', content: 'I say high you say low, then tell me why is the sky blue.' },
        { role: 'user', content: 'high' },
      ],
      max_tokens: 200,
      stream: true,
      stream_options: { include_usage: true },
    };
    const prepared: any = await vertexAiProvider.adapter.prepare(chatCall(request, vertexTarget) as ProviderCall);
    expect(prepared.url.href).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    const recorded = exchange.interactions[0].request.bodySegments[0];
    const sent = JSON.parse(prepared.body);
    expect(sent.contents).toEqual(recorded.contents);
    expect(sent.systemInstruction.parts).toEqual(recorded.systemInstruction.parts);
    expect(sent.generationConfig.maxOutputTokens).toBe(200);

    const usages: any[] = [];
    const events = await runTransform(
      prepared.streamTransform((usage: any) => usages.push(usage)),
      [recordingSse(exchange)],
    );
    const chunks = events.filter((event) => event !== '[DONE]');
    expect(textOf(chunks)).toBe(exchange.interactions[0].response.bodySegments.map((segment: any) => segment.candidates[0].content.parts[0].text).join(''));
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason).choices[0].finish_reason).toBe('length');
    expect(chunks.at(-1).usage).toEqual({ prompt_tokens: 17, completion_tokens: 197, total_tokens: 214, completion_tokens_details: { reasoning_tokens: 65 } });
    expect(usages).toHaveLength(1);
  });
});

describe.skipIf(!shared)('Anthropic Messages (recorded)', () => {
  it('maps the recorded text stream: role first, text deltas, stop, usage chunk, [DONE]', async () => {
    const { events, usages } = await replayAnthropicStream(readFixtureBytes('anthropic_stream_basic_text.sse'), { includeUsage: true });
    for (const event of events.slice(0, -1)) {
      expect(event).toMatchObject({ id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK', object: 'chat.completion.chunk', model: 'claude-3-opus-latest' });
    }
    expect(chunkDeltas(events).slice(1, 4)).toEqual([{ content: 'Hello' }, { content: ' there' }, { content: '!' }]);
    expect(events.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 } });
    expect(usages).toEqual([{ prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 }]);
  });

  it('reads the real API stream with padded data lines, cut into 7-byte reads', async () => {
    const fixture = readFixture('anthropic_stream_text_claude35_recorded.sse');
    const expected = [...fixture.matchAll(/"text_delta","text":"((?:[^"\\]|\\.)*)"/g)].map((match) => JSON.parse(`"${match[1]}"`)).join('');
    const { events, usages } = await replayAnthropicStream(fixture, { splitEvery: 7 });
    expect(streamedContent(events)).toBe(expected);
    expect(expected).toMatch(/^Coca-Cola is one of/);
    expect(events.at(-2).choices[0].finish_reason).toBe('stop');
    expect(events.at(-2).model).toBe('claude-3-5-sonnet-20241022');
    expect(usages).toEqual([{ prompt_tokens: 36, completion_tokens: 265, total_tokens: 301 }]);
  });

  it('maps the recorded tool_use stream to a tool call with argument fragments', async () => {
    const { events } = await replayAnthropicStream(readFixtureBytes('anthropic_stream_tool_use.sse'), { includeUsage: true, splitEvery: 13 });
    expect(streamedContent(events)).toBe("I'll check the current weather in Paris for you.");
    const calls = chunkDeltas(events)
      .filter((delta) => delta.tool_calls)
      .map((delta) => delta.tool_calls[0]);
    expect(calls[0]).toEqual({ index: 0, id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.map((call) => call.function.arguments).join('')).toBe('{"location": "Paris"}');
    expect(events.at(-2).usage).toEqual({ prompt_tokens: 377, completion_tokens: 65, total_tokens: 442, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('maps the thinking and refusal stream, thinking as content_blocks only with strict compliance off', async () => {
    const fixture = readFixture('anthropic_stream_thinking_signature_refusal.SYNTHETIC.sse');
    const strict = await replayAnthropicStream(fixture);
    expect(chunkDeltas(strict.events).some((delta) => delta.content_blocks)).toBe(false);
    expect(streamedContent(strict.events)).toBe('Hi');
    expect(strict.events.at(-2).choices[0].finish_reason).toBe('content_filter');
    expect(strict.usages[0]).toEqual({
      prompt_tokens: 28,
      completion_tokens: 106,
      total_tokens: 134,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 67 },
    });
    const loose = await replayAnthropicStream(fixture, { strict: false, splitEvery: 5 });
    const blocks = chunkDeltas(loose.events)
      .filter((delta) => delta.content_blocks)
      .map((delta) => delta.content_blocks[0]);
    expect(blocks.map((block) => block.thinking ?? '').join('')).toMatch(/^Simple educational question about what a solar eclipse is\..*politely\.$/s);
    expect(blocks.at(-1)).toEqual({ index: 0, type: 'thinking', signature: 'c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=' });
  });

  it('maps the recorded non-streamed tool-use answer and sends the recorded request shape', () => {
    const exchange = recording('anthropic_messages_nonstream_tool_use_recording.json');
    const { body, usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(exchange.response)));
    const completion = JSON.parse(body.toString());
    expect(completion).toMatchObject({ id: 'msg_012foMGXNQ1eqhaq3QvA5dY6', object: 'chat.completion', model: 'claude-opus-4-8' });
    expect(completion.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: { tool_calls: [{ id: 'toolu_011LF2VkWpAfJnTKJcmh1PNf', type: 'function', function: { name: 'test_tool', arguments: '{"value":"test"}' } }] },
    });
    expect(usage).toEqual({ prompt_tokens: 415, completion_tokens: 76, total_tokens: 491, prompt_tokens_details: { cached_tokens: 0 } });

    const sent = anthropicBodyFor({
      model: 'claude-opus-4-8',
      max_tokens: 1000,
      messages: [{ role: 'user', content: exchange.body.messages[0].content }],
      tools: exchange.body.tools.map((tool: any) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    });
    // The recording's `type: "custom"` is the default tool type; the SDK sent stream:false explicitly.
    const { stream: _stream, ...expected } = exchange.body;
    expected.tools = expected.tools.map(({ type: _type, ...tool }: any) => tool);
    expect(sent).toEqual(expected);
  });

  it.each([
    ['anthropic_error_400_invalid_request_with_request_id.json', 400, 'invalid_request_error', 'prompt is too long: 205351 tokens > 200000 maximum'],
    ['anthropic_error_429_rate_limit.json', 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization'],
    ['anthropic_error_529_overloaded.json', 529, 'overloaded_error', 'Overloaded'],
  ])('reads the captured error body %s with status %i', (name, status, type, message) => {
    const error = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readError(status, readFixtureBytes(name), {});
    expect(error.status).toBe(status);
    expect(error.toBody().error).toMatchObject({ type, code: type, provider: 'anthropic' });
    expect(error.toBody().error.message.startsWith(message)).toBe(true);
  });
});

/** An OpenAI-format stream through the pass-through transform, 13 bytes a read. */
async function relayOpenAIStream(input: Buffer, dropUsageChunk: boolean) {
  const usages: TokenUsage[] = [];
  const pieces: Buffer[] = [];
  for (let i = 0; i < input.length; i += 13) pieces.push(input.subarray(i, i + 13));
  const transform = openAIStreamTransform({ provider: 'openai', dropUsageChunk, onUsage: (usage) => usages.push(usage) });
  let out = '';
  for await (const chunk of Readable.from(pieces).pipe(transform)) out += chunk.toString();
  return { out, usage: usages.at(-1) };
}

describe.skipIf(!shared)('OpenAI-format streams (recorded)', () => {
  it('relays the recorded OpenAI tool-call stream event for event and reads its usage', async () => {
    const bytes = readFixtureBytes('openai_chat_stream_tool_call_with_usage.sse');
    const { out, usage } = await relayOpenAIStream(bytes, false);
    expect(parseSse(out)).toEqual(parseSse(bytes.toString()));
    const last = JSON.parse(parseSse(bytes.toString()).at(-2)!.data);
    expect(usage).toMatchObject({
      prompt_tokens: last.usage.prompt_tokens,
      completion_tokens: last.usage.completion_tokens,
      total_tokens: last.usage.total_tokens,
    });
  });

  it('drops the usage-only chunk of the recorded OpenAI text stream, keeping [DONE] last', async () => {
    const bytes = readFixtureBytes('openai_chat_stream_text_with_usage.sse');
    const { out, usage } = await relayOpenAIStream(bytes, true);
    const events = parseSse(out);
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(events.slice(0, -1).every((event) => JSON.parse(event.data).choices.length > 0)).toBe(true);
    expect(events.length).toBe(parseSse(bytes.toString()).length - 1);
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it("takes the last of xAI's cumulative usages and Mistral's usage on the final content chunk", async () => {
    const xai = await relayOpenAIStream(readFixtureBytes('xai_grok_chat_stream_usage_every_chunk.sse'), true);
    expect(xai.usage).toMatchObject({ completion_tokens: 200, total_tokens: 238 });
    const mistral = findProvider('mistral-ai')!;
    const prepared = await mistral.adapter.prepare(
      providerCall(
        mistral,
        { model: 'mistral-large-latest', messages: [{ role: 'user', content: 'Coca-Cola?' }], stream: true },
        { settings: { api_key: 'k' }, stream: true },
      ),
    );
    const { events, usages } = await replayPrepared(prepared, readFixture('mistral_chat_stream_text_usage_in_final_chunk.sse'), 17);
    expect(events.at(-2).choices[0]).toMatchObject({ delta: { content: 'izable' }, finish_reason: 'length' });
    expect(streamedText(events)).toMatch(/^Coca-Cola, often referred to as Coke, is a carbonated soft drink manufactured by The C/);
    expect(usages).toEqual([{ prompt_tokens: 34, completion_tokens: 100, total_tokens: 134 }]);
  });

  it('folds the recorded Azure prompt-filter chunk into the first real chunk and relays the rest unchanged', async () => {
    const prepared = await azureOpenAIProvider.adapter.prepare(
      providerCall(
        azureOpenAIProvider,
        { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hallo' }], stream: true },
        { settings: { cloudC_resource_name: 'r', cloudC_deployment_id: 'd', api_key: 'k'.repeat(32) }, stream: true },
      ),
    );
    const bytes = readFixtureBytes('azure_openai_chat_stream_with_content_filter.sse');
    const { events } = await replayPrepared(prepared, bytes, 11);
    const sentEvents = parseSse(`${bytes}\n`).map((event) => event.data);
    const chunks = events.slice(0, -1);
    expect(chunks[0]).toMatchObject({ id: 'chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j', created: 1750697159, model: 'gpt-4o-2024-08-06' });
    expect(chunks[0].prompt_filter_results).toEqual(JSON.parse(sentEvents[0]).prompt_filter_results);
    expect(chunks.slice(1).map((chunk: any) => JSON.stringify(chunk))).toEqual(sentEvents.slice(2, -1));
    expect(streamedText(events)).toBe('Hallo Welt!');
  });

  it('maps the recorded Cohere stream and answer, usage from tokens (not billed units)', async () => {
    const lines = readFixture('cohere_v2_chat_stream_events.jsonl')
      .split('\n')
      .filter((line) => line.trim());
    const { events, usages } = await replayCohereStream(lines, { includeUsage: true, splitEvery: 9 });
    expect(streamedText(events)).toMatch(/^Coca-Cola is a carbonated soft drink/);
    expect(events[0]).toMatchObject({ id: 'a8fc192e-4bb8-4e15-ae1f-a174e8b02ae8', model: 'command-r-plus-08-2024' });
    expect(usages).toEqual([{ prompt_tokens: 186, completion_tokens: 105, total_tokens: 291 }]);
    const prepared = prepareCohere({ model: 'command-r-plus-08-2024', messages: [{ role: 'user', content: 'Coca-Cola?' }] });
    const { usage } = prepared.readResponse(readFixtureBytes('cohere_v2_chat_nonstream.json'));
    expect(usage).toEqual({ prompt_tokens: 186, completion_tokens: 93, total_tokens: 279 });
  });
});

function decodeAll(pieces: Buffer[]): EventStreamItem[] {
  const decoder = eventStreamDecoder();
  return [...pieces.flatMap((piece) => decoder.push(piece)), ...decoder.end()];
}

/** A header as the official vectors' decoded JSON writes it: type id and value (strings and bytes base64). */
function officialForm(headers: EventStreamHeaders) {
  const typeIds: Record<string, number> = { byte: 2, short: 3, integer: 4, long: 5, binary: 6, string: 7, timestamp: 8, uuid: 9 };
  return Object.entries(headers).map(([name, header]) => {
    switch (header.type) {
      case 'boolean':
        return { name, type: header.value ? 0 : 1, value: header.value };
      case 'long':
        return { name, type: 5, value: Number(header.value.valueOf()) };
      case 'binary':
        return { name, type: 6, value: Buffer.from(header.value).toString('base64') };
      case 'string':
        return { name, type: 7, value: Buffer.from(header.value).toString('base64') };
      case 'timestamp':
        return { name, type: 8, value: header.value.getTime() };
      case 'uuid':
        return { name, type: 9, value: Buffer.from(header.value.replaceAll('-', ''), 'hex').toString('base64') };
      default:
        return { name, type: typeIds[header.type], value: header.value };
    }
  });
}

describe.skipIf(!shared)('AWS event-stream and Bedrock ConverseStream (official vectors, derived capture)', () => {
  const vectorDir = 'aws_eventstream_test_vectors';
  const names = shared?.names(vectorDir) ?? [];

  for (const name of names.filter((file) => file.startsWith('encoded__positive__'))) {
    const vector = name.slice('encoded__'.length);
    it(`decodes the official vector ${vector}, whole and byte by byte`, () => {
      const bytes = readFixtureBytes(`${vectorDir}/${name}`);
      const expected = recorded().readJson<{ headers: unknown[]; payload: string; total_length: number }>(`${vectorDir}/decoded__${vector}`);
      expect(bytes.length).toBe(expected.total_length);
      for (const pieces of [[bytes], [...bytes].map((byte) => Buffer.from([byte]))]) {
        const [message, end] = decodeAll(pieces);
        if (message.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(message)}`);
        expect(officialForm(message.headers)).toEqual(expected.headers);
        expect(message.payload.toString('base64')).toBe(expected.payload);
        expect(end).toEqual({ kind: 'end', pendingBytes: 0 });
      }
    });
  }

  for (const name of names.filter((file) => file.startsWith('encoded__negative__'))) {
    const vector = name.slice('encoded__'.length);
    it(`rejects the official vector ${vector} with the expected checksum error`, () => {
      const bytes = readFixtureBytes(`${vectorDir}/${name}`);
      const expected = readFixture(`${vectorDir}/decoded__${vector}`).trim();
      for (const pieces of [[bytes], [...bytes].map((byte) => Buffer.from([byte]))]) {
        expect(decodeAll(pieces)).toEqual([{ kind: 'corrupt', message: expected }]);
      }
    });
  }

  it('maps the derived ConverseStream capture field by field', async () => {
    const transform: Transform = converseStreamTransform({
      model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
      includeUsage: true,
      strict: true,
      onUsage: () => {},
    });
    let out = '';
    transform.on('data', (chunk: Buffer) => (out += chunk.toString()));
    transform.end(readFixtureBytes('bedrock_converse_stream_tool_use.DERIVED.eventstream'));
    await once(transform, 'end');
    const chunks = parseSse(out).map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data)));
    expect(chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('')).toBe(
      "Certainly! I can help you find out the weather in Berlin. To get this information, I'll use the weather tool available to me. Let me fetch that data for you.",
    );
    const calls = chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'tooluse_pLGRAmK7TNKoZQ_rntVN_Q', type: 'function', function: { name: 'weather_tool', arguments: '' } });
    expect(calls.map((call: any) => call.function.arguments).join('')).toBe('{"location": "Berlin"}');
    expect(chunks.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 } });
  });
});
