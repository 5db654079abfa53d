import { describe, expect, it } from 'vitest';
import { fromMessageResponse } from '../../../lib/providers/anthropic';
import { anthropicErrorBytes, anthropicErrorSamples, anthropicToolUseExchange } from '../../fixtures/providers/anthropic';
import { anthropicBodyFor, prepareAnthropic } from '../../support/fakes/anthropic';
import { readRecordingBytes, readRecordingJson, recordingsPresent } from '../../support/recordings';

describe('anthropic responses: sample exchange', () => {
  it('maps text and tool_use to content and tool_calls, tool_use to tool_calls, usage with cache fields', () => {
    const { body, usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(
      Buffer.from(JSON.stringify(anthropicToolUseExchange.response)),
    );
    const completion = JSON.parse(body.toString());
    expect(completion).toMatchObject({ id: 'msg_gw_sample_05', object: 'chat.completion', model: 'claude-opus-4-1-20250805' });
    expect(typeof completion.created).toBe('number');
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: "I'll look up order A-1042 now.",
          tool_calls: [{ id: 'toolu_gw_sample_05', type: 'function', function: { name: 'lookup_order', arguments: '{"order_id":"A-1042"}' } }],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    // Cache reads count towards the prompt and come back as cached_tokens.
    expect(completion.usage).toEqual({ prompt_tokens: 1822, completion_tokens: 58, total_tokens: 1880, prompt_tokens_details: { cached_tokens: 1536 } });
    expect(usage).toEqual(completion.usage);
  });

  it('reports zero cached tokens when the cache fields are there and zero', () => {
    const response = {
      ...anthropicToolUseExchange.response,
      usage: { ...anthropicToolUseExchange.response.usage, cache_read_input_tokens: 0 },
    };
    const { usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(response)));
    expect(usage).toEqual({ prompt_tokens: 286, completion_tokens: 58, total_tokens: 344, prompt_tokens_details: { cached_tokens: 0 } });
  });

  it('sends the sample request shape for the equivalent OpenAI request', () => {
    const { request } = anthropicToolUseExchange;
    const sent = anthropicBodyFor({
      model: 'claude-opus-4-1-20250805',
      max_tokens: 1024,
      messages: [{ role: 'user', content: request.messages[0].content }],
      tools: request.tools.map((tool) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    });
    // `type: "custom"` is the default tool type; an SDK sends stream:false explicitly.
    const { stream: _stream, ...expected } = request;
    expect(sent).toEqual({ ...expected, tools: expected.tools.map(({ type: _type, ...tool }) => tool) });
  });
});

describe.skipIf(!recordingsPresent)('anthropic responses: recorded transcript', () => {
  const recording = () =>
    readRecordingJson<{ body: any; response: any; rawHeaders: Record<string, string> }>('anthropic_messages_nonstream_tool_use_recording.json');

  it('maps text and tool_use to content and tool_calls, tool_use to tool_calls, usage with cache fields', () => {
    const { body, usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(recording().response)));
    const completion = JSON.parse(body.toString());
    expect(completion).toMatchObject({ id: 'msg_012foMGXNQ1eqhaq3QvA5dY6', object: 'chat.completion', model: 'claude-opus-4-8' });
    expect(typeof completion.created).toBe('number');
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'I\'ll use the test_tool with the value "test" as requested, then provide a final response.',
          tool_calls: [{ id: 'toolu_011LF2VkWpAfJnTKJcmh1PNf', type: 'function', function: { name: 'test_tool', arguments: '{"value":"test"}' } }],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 415, completion_tokens: 76, total_tokens: 491, prompt_tokens_details: { cached_tokens: 0 } });
    expect(usage).toEqual(completion.usage);
  });

  it('sends the recorded request shape for the equivalent OpenAI request', () => {
    const { body: recorded } = recording();
    const sent = anthropicBodyFor({
      model: 'claude-opus-4-8',
      max_tokens: 1000,
      messages: [{ role: 'user', content: recorded.messages[0].content }],
      tools: recorded.tools.map((tool: any) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    });
    // The recording's `type: "custom"` is the default tool type; the SDK sent stream:false explicitly.
    const { stream: _stream, ...expected } = recorded;
    expected.tools = expected.tools.map(({ type: _type, ...tool }: any) => tool);
    expect(sent).toEqual(expected);
  });
});

describe('anthropic responses: mapping rules', () => {
  const message = (content: unknown[], stopReason = 'end_turn', usage: object = { input_tokens: 10, output_tokens: 5 }) => ({
    id: 'msg_1',
    type: 'message' as const,
    role: 'assistant' as const,
    model: 'claude-x',
    content: content as any,
    stop_reason: stopReason,
    usage,
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
  ])('maps stop_reason %s to finish_reason %s', (stopReason, finishReason) => {
    const { completion } = fromMessageResponse(message([{ type: 'text', text: 'x' }], stopReason), { provider: 'anthropic', strictApiCompliance: true });
    expect(completion.choices[0].finish_reason).toBe(finishReason);
  });

  it('adds cache writes and reads to prompt_tokens and reports reads as cached_tokens', () => {
    const { usage } = fromMessageResponse(
      message([], 'end_turn', { input_tokens: 10, cache_creation_input_tokens: 100, cache_read_input_tokens: 1000, output_tokens: 5 }),
      { provider: 'anthropic', strictApiCompliance: true },
    );
    expect(usage).toEqual({ prompt_tokens: 1110, completion_tokens: 5, total_tokens: 1115, prompt_tokens_details: { cached_tokens: 1000 } });
  });

  it('returns thinking blocks as content_blocks only with strict compliance off', () => {
    const content = [
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig==' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Answer.' },
      { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
    ];
    const strict = fromMessageResponse(message(content, 'tool_use'), { provider: 'anthropic', strictApiCompliance: true }).completion.choices[0].message;
    expect(strict.content_blocks).toBeUndefined();
    expect(strict.content).toBe('Answer.');
    const loose = fromMessageResponse(message(content, 'tool_use'), { provider: 'anthropic', strictApiCompliance: false }).completion.choices[0].message;
    expect(loose.content_blocks).toEqual([
      { type: 'thinking', thinking: 'Let me think.', signature: 'sig==' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Answer.' },
    ]);
    expect(loose.tool_calls).toEqual([{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } }]);
  });

  it('has null content when the answer is only tool calls, and skips server-tool blocks', () => {
    const { completion } = fromMessageResponse(
      message(
        [
          { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
          { type: 'tool_use', id: 'toolu_2', name: 'g', input: { a: [1] } },
        ],
        'tool_use',
      ),
      { provider: 'anthropic', strictApiCompliance: true },
    );
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'toolu_2', type: 'function', function: { name: 'g', arguments: '{"a":[1]}' } }],
    });
  });

  it('turns the forced response_format tool back into JSON content with finish_reason stop', () => {
    const prepared = prepareAnthropic({
      messages: [{ role: 'user', content: 'A city, please' }],
      response_format: { type: 'json_schema', json_schema: { name: 'city', schema: { type: 'object', properties: { name: { type: 'string' } } } } },
    });
    const reply = message([{ type: 'tool_use', id: 'toolu_3', name: 'city', input: { name: 'Paris' } }], 'tool_use');
    const completion = JSON.parse(prepared.readResponse(Buffer.from(JSON.stringify(reply))).body.toString());
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: '{"name":"Paris"}' });
    expect(completion.choices[0].finish_reason).toBe('stop');
  });

  it('answers 502 for a 200 body that is not a message', () => {
    const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });
    expect(() => prepared.readResponse(Buffer.from('<html>'))).toThrow(expect.objectContaining({ status: 502, provider: 'anthropic' }));
    expect(() => prepared.readResponse(anthropicErrorBytes('overloaded'))).toThrow(/without a message: Overloaded, please retry shortly/);
  });
});

describe('anthropic errors: sample bodies', () => {
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

  it.each([
    ['invalidRequest', 400, 'invalid_request_error', 'max_tokens: 90000 > 64000, the most this model allows'],
    ['rateLimited', 429, 'rate_limit_error', 'This request would exceed the output tokens per minute limit'],
    ['overloaded', 529, 'overloaded_error', 'Overloaded, please retry shortly'],
  ] as const)('%s keeps status %i, type and message', (sample, status, type, message) => {
    expect(anthropicErrorSamples[sample].status).toBe(status);
    const error = prepared.readError(status, anthropicErrorBytes(sample), { 'retry-after': '3' });
    expect(error.status).toBe(status);
    const body = error.toBody();
    expect(body.error).toMatchObject({ type, code: type, provider: 'anthropic' });
    expect(body.error.message.startsWith(message)).toBe(true);
    // The provider's raw headers stay out of the error; routed answers relay the ones they keep.
    expect(error.headers).toBeUndefined();
  });

  it('reads the error of an envelope that also carries a top-level request_id', () => {
    expect(anthropicErrorSamples.invalidRequest.body).toMatchObject({ request_id: 'req_gw_sample_400' });
    const error = prepared.readError(400, anthropicErrorBytes('invalidRequest'), {});
    expect(error.toBody().error).toMatchObject({ type: 'invalid_request_error', message: 'max_tokens: 90000 > 64000, the most this model allows' });
  });

  it('keeps a body that is not Anthropic JSON as the message', () => {
    const error = prepared.readError(502, Buffer.from('upstream connect error'), {});
    expect(error.toBody().error).toMatchObject({ message: 'upstream connect error', provider: 'anthropic' });
  });
});

describe.skipIf(!recordingsPresent)('anthropic errors: recorded bodies', () => {
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

  it.each([
    ['anthropic_error_400_invalid_request_with_request_id.json', 400, 'invalid_request_error', 'prompt is too long: 205351 tokens > 200000 maximum'],
    ['anthropic_error_429_rate_limit.json', 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization'],
    ['anthropic_error_529_overloaded.json', 529, 'overloaded_error', 'Overloaded'],
  ])('%s keeps status %i, type and message', (fixture, status, type, message) => {
    const error = prepared.readError(status, readRecordingBytes(fixture), { 'retry-after': '3' });
    expect(error.status).toBe(status);
    const body = error.toBody();
    expect(body.error).toMatchObject({ type, code: type, provider: 'anthropic' });
    expect(body.error.message.startsWith(message)).toBe(true);
    expect(error.headers).toBeUndefined();
  });

  it('answers 502 for a recorded error body received with a 200', () => {
    const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });
    expect(() => prepared.readResponse(readRecordingBytes('anthropic_error_529_overloaded.json'))).toThrow(/without a message: Overloaded/);
  });
});
