import { describe, expect, it } from 'vitest';
import { fromMessageResponse } from '../../../lib/providers/anthropic';
import { anthropicBodyFor, prepareAnthropic } from '../../support/fakes/anthropic';
import { readRecordingBytes, readRecordingJson, recordingsPresent } from '../../support/recordings';

// The recorded exchange is read inside the tests, so a clone without the recordings collects and skips them.
describe.skipIf(!recordingsPresent)('anthropic responses: recorded transcript', () => {
  const exchange = () => {
    const { body, response } = readRecordingJson<{ body: any; response: any }>('anthropic_messages_nonstream_tool_use_recording.json');
    return { request: body, response };
  };

  it('maps text and tool_use to content and tool_calls, tool_use to tool_calls, usage with cache fields', () => {
    const { body, usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(exchange().response)));
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
    // The cache fields are there and zero: zero cached tokens are still reported.
    expect(completion.usage).toEqual({ prompt_tokens: 415, completion_tokens: 76, total_tokens: 491, prompt_tokens_details: { cached_tokens: 0 } });
    expect(usage).toEqual(completion.usage);
  });

  it("sends the exchange's request shape for the equivalent OpenAI request", () => {
    const { request } = exchange();
    const sent = anthropicBodyFor({
      model: 'claude-opus-4-8',
      max_tokens: 1000,
      messages: [{ role: 'user', content: request.messages[0].content }],
      tools: request.tools.map((tool: any) => ({
        type: 'function',
        function: { name: tool.name, description: tool.description, parameters: tool.input_schema },
      })),
    });
    // `type: "custom"` is the default tool type; an SDK sends stream:false explicitly.
    const { stream: _stream, ...rest } = request;
    expect(sent).toEqual({ ...rest, tools: rest.tools.map(({ type: _type, ...tool }: any) => tool) });
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

  it('reports zero cached tokens when the cache fields are there and zero', () => {
    const reply = message([{ type: 'text', text: 'x' }], 'end_turn', {
      input_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 5,
    });
    const { usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(reply)));
    expect(usage).toEqual({ prompt_tokens: 10, completion_tokens: 5, total_tokens: 15, prompt_tokens_details: { cached_tokens: 0 } });
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
});

/** The recorded error bodies, the status each came with, and the type and start of the message the gateway must report. */
const recordedErrors: Array<[name: string, status: number, type: string, message: string]> = [
  ['anthropic_error_400_invalid_request_with_request_id.json', 400, 'invalid_request_error', 'prompt is too long: 205351 tokens > 200000 maximum'],
  ['anthropic_error_429_rate_limit.json', 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization'],
  ['anthropic_error_529_overloaded.json', 529, 'overloaded_error', 'Overloaded'],
];

describe.skipIf(!recordingsPresent)('anthropic errors: recorded bodies', () => {
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

  it.each(recordedErrors)('%s keeps status %i, type and message', (name, status, type, message) => {
    // The file name states the status too, so a row cannot drift from the body it names.
    expect(Number(/^anthropic_error_(\d{3})_/.exec(name)?.[1])).toBe(status);
    const error = prepared.readError(status, readRecordingBytes(name), { 'retry-after': '3' });
    expect(error.status).toBe(status);
    const body = error.toBody();
    expect(body.error).toMatchObject({ type, code: type, provider: 'anthropic' });
    expect(body.error.message.startsWith(message)).toBe(true);
    // The provider's raw headers stay out of the error; routed answers relay the ones they keep.
    expect(error.headers).toBeUndefined();
  });

  it('answers 502 for a recorded error body that came with a 200', () => {
    expect(() => prepared.readResponse(readRecordingBytes('anthropic_error_529_overloaded.json'))).toThrow(/without a message: Overloaded/);
  });
});

describe('anthropic errors: other envelopes', () => {
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

  it('reads the error of an envelope that also carries a top-level request_id', () => {
    const envelope = { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: too large' }, request_id: 'req_1' };
    const error = prepared.readError(400, Buffer.from(JSON.stringify(envelope)), { 'retry-after': '3' });
    expect(error.status).toBe(400);
    expect(error.toBody().error).toMatchObject({
      type: 'invalid_request_error',
      code: 'invalid_request_error',
      message: 'max_tokens: too large',
      provider: 'anthropic',
    });
    expect(error.headers).toBeUndefined();
  });

  it('answers 502 for a 200 body that is not a message', () => {
    expect(() => prepared.readResponse(Buffer.from('<html>'))).toThrow(expect.objectContaining({ status: 502, provider: 'anthropic' }));
    const errorBody = { type: 'error', error: { type: 'api_error', message: 'Internal server error' } };
    expect(() => prepared.readResponse(Buffer.from(JSON.stringify(errorBody)))).toThrow(/without a message: Internal server error/);
  });

  it('keeps a body that is not Anthropic JSON as the message', () => {
    const error = prepared.readError(502, Buffer.from('upstream connect error'), {});
    expect(error.toBody().error).toMatchObject({ message: 'upstream connect error', provider: 'anthropic' });
  });
});
