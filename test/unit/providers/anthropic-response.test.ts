import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../../lib/core/usage';
import { fromMessageResponse } from '../../../lib/providers/anthropic';
import { anthropicErrorBytes, anthropicErrorSamples, anthropicToolUseExchange } from '../../fixtures/providers/anthropic';
import { anthropicBodyFor, prepareAnthropic } from '../../support/fakes/anthropic';
import { readRecordingBytes, readRecordingJson, recordingsPresent } from '../../support/recordings';

/**
 * One non-streamed exchange (the Messages request an SDK sent and the Message it got back) and what the
 * gateway must make of it. The exchange comes from a function, so a recording is read only when its
 * test runs, never while the tests are collected.
 */
interface ExchangeSource {
  exchange: () => { request: any; response: any };
  /** The OpenAI request's model and max_tokens, which come out as the exchange's request. */
  model: string;
  maxTokens: number;
  completion: { id: string; model: string; content: string; toolCall: { id: string; name: string; arguments: string }; usage: TokenUsage };
}

const sampleExchange: ExchangeSource = {
  exchange: () => anthropicToolUseExchange,
  model: 'claude-opus-4-1-20250805',
  maxTokens: 1024,
  completion: {
    id: 'msg_gw_sample_05',
    model: 'claude-opus-4-1-20250805',
    content: "I'll look up order A-1042 now.",
    toolCall: { id: 'toolu_gw_sample_05', name: 'lookup_order', arguments: '{"order_id":"A-1042"}' },
    // Cache reads count towards the prompt and come back as cached_tokens.
    usage: { prompt_tokens: 1822, completion_tokens: 58, total_tokens: 1880, prompt_tokens_details: { cached_tokens: 1536 } },
  },
};

const recordedExchange: ExchangeSource = {
  exchange: () => {
    const { body, response } = readRecordingJson<{ body: any; response: any }>('anthropic_messages_nonstream_tool_use_recording.json');
    return { request: body, response };
  },
  model: 'claude-opus-4-8',
  maxTokens: 1000,
  completion: {
    id: 'msg_012foMGXNQ1eqhaq3QvA5dY6',
    model: 'claude-opus-4-8',
    content: 'I\'ll use the test_tool with the value "test" as requested, then provide a final response.',
    toolCall: { id: 'toolu_011LF2VkWpAfJnTKJcmh1PNf', name: 'test_tool', arguments: '{"value":"test"}' },
    usage: { prompt_tokens: 415, completion_tokens: 76, total_tokens: 491, prompt_tokens_details: { cached_tokens: 0 } },
  },
};

describe.each([
  ['sample exchange', sampleExchange, false],
  ['recorded transcript', recordedExchange, !recordingsPresent],
] as const)('anthropic responses: %s', (_source, { exchange, model, maxTokens, completion: expected }, skip) => {
  const run = it.skipIf(skip);

  run('maps text and tool_use to content and tool_calls, tool_use to tool_calls, usage with cache fields', () => {
    const { body, usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(exchange().response)));
    const completion = JSON.parse(body.toString());
    expect(completion).toMatchObject({ id: expected.id, object: 'chat.completion', model: expected.model });
    expect(typeof completion.created).toBe('number');
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: expected.content,
          tool_calls: [{ id: expected.toolCall.id, type: 'function', function: { name: expected.toolCall.name, arguments: expected.toolCall.arguments } }],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual(expected.usage);
    expect(usage).toEqual(completion.usage);
  });

  run("sends the exchange's request shape for the equivalent OpenAI request", () => {
    const { request } = exchange();
    const sent = anthropicBodyFor({
      model,
      max_tokens: maxTokens,
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
    const response = {
      ...anthropicToolUseExchange.response,
      usage: { ...anthropicToolUseExchange.response.usage, cache_read_input_tokens: 0 },
    };
    const { usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(response)));
    expect(usage).toEqual({ prompt_tokens: 286, completion_tokens: 58, total_tokens: 344, prompt_tokens_details: { cached_tokens: 0 } });
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

/**
 * Error bodies of one source: each with the status it came with, the type and the start of the message
 * the gateway must report. A source states each status itself too (a sample in its `status`, a
 * recording in its file name), so a row cannot drift from the body it names.
 */
interface ErrorSource {
  bodies: Array<[name: string, status: number, type: string, message: string]>;
  bytes: (name: string) => Buffer;
  statedStatus: (name: string) => number;
  /** An error body that came back with a 200, and what the gateway must say of it. */
  okError: { bytes: () => Buffer; message: RegExp };
}

type SampleName = keyof typeof anthropicErrorSamples;

const sampleErrors: ErrorSource = {
  bodies: [
    ['invalidRequest', 400, 'invalid_request_error', 'max_tokens: 90000 > 64000, the most this model allows'],
    ['rateLimited', 429, 'rate_limit_error', 'This request would exceed the output tokens per minute limit'],
    ['overloaded', 529, 'overloaded_error', 'Overloaded, please retry shortly'],
  ],
  bytes: (name) => anthropicErrorBytes(name as SampleName),
  statedStatus: (name) => anthropicErrorSamples[name as SampleName].status,
  okError: { bytes: () => anthropicErrorBytes('overloaded'), message: /without a message: Overloaded, please retry shortly/ },
};

const recordedErrors: ErrorSource = {
  bodies: [
    ['anthropic_error_400_invalid_request_with_request_id.json', 400, 'invalid_request_error', 'prompt is too long: 205351 tokens > 200000 maximum'],
    ['anthropic_error_429_rate_limit.json', 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization'],
    ['anthropic_error_529_overloaded.json', 529, 'overloaded_error', 'Overloaded'],
  ],
  bytes: readRecordingBytes,
  statedStatus: (name) => Number(/^anthropic_error_(\d{3})_/.exec(name)?.[1]),
  okError: { bytes: () => readRecordingBytes('anthropic_error_529_overloaded.json'), message: /without a message: Overloaded/ },
};

describe.each([
  ['sample bodies', sampleErrors, false],
  ['recorded bodies', recordedErrors, !recordingsPresent],
] as const)('anthropic errors: %s', (_source, { bodies, bytes, statedStatus, okError }, skip) => {
  const run = it.skipIf(skip);
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

  run.each(bodies)('%s keeps status %i, type and message', (name, status, type, message) => {
    expect(statedStatus(name)).toBe(status);
    const error = prepared.readError(status, bytes(name), { 'retry-after': '3' });
    expect(error.status).toBe(status);
    const body = error.toBody();
    expect(body.error).toMatchObject({ type, code: type, provider: 'anthropic' });
    expect(body.error.message.startsWith(message)).toBe(true);
    // The provider's raw headers stay out of the error; routed answers relay the ones they keep.
    expect(error.headers).toBeUndefined();
  });

  run('answers 502 for a 200 body that is not a message', () => {
    expect(() => prepared.readResponse(Buffer.from('<html>'))).toThrow(expect.objectContaining({ status: 502, provider: 'anthropic' }));
    expect(() => prepared.readResponse(okError.bytes())).toThrow(okError.message);
  });
});

describe('anthropic errors: other envelopes', () => {
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

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
