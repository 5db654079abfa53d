import { describe, expect, it } from 'vitest';
import { fromMessageResponse } from '../../../lib/providers/anthropic';
import { anthropicBodyFor, prepareAnthropic } from '../../support/fakes/anthropic';
import { readFixtureBytes, readFixtureJson } from '../../support/fixtures';

const exchange = readFixtureJson<{ request: any; response: any }>('anthropic-messages-tool-use.json');

describe('anthropic responses: a whole exchange', () => {
  it('maps text and tool_use to content and tool_calls, tool_use to tool_calls, usage with cache fields', () => {
    const { body, usage } = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] }).readResponse(Buffer.from(JSON.stringify(exchange.response)));
    const completion = JSON.parse(body.toString());
    expect(completion).toMatchObject({ id: 'msg_01Kc3VxN7bRq2WtZ5mYh8LdF', object: 'chat.completion', model: 'claude-sonnet-4-20250514' });
    expect(typeof completion.created).toBe('number');
    expect(completion.choices).toEqual([
      {
        index: 0,
        message: {
          role: 'assistant',
          content: "I'll look up the current EUR to JPY rate.",
          tool_calls: [
            { id: 'toolu_01Ns4RbW8cXk6TqV3yLm9HpJ', type: 'function', function: { name: 'get_exchange_rate', arguments: '{"base":"EUR","quote":"JPY"}' } },
          ],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ]);
    expect(completion.usage).toEqual({ prompt_tokens: 402, completion_tokens: 71, total_tokens: 473, prompt_tokens_details: { cached_tokens: 0 } });
    expect(usage).toEqual(completion.usage);
  });

  it("sends the exchange's request for the equivalent OpenAI request", () => {
    const sent = anthropicBodyFor({
      model: 'claude-sonnet-4-20250514',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'How many yen is one euro today? Use the tool.' }],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_exchange_rate',
            description: 'The current exchange rate between two ISO 4217 currencies',
            parameters: { type: 'object', properties: { base: { type: 'string' }, quote: { type: 'string' } }, required: ['base', 'quote'] },
          },
        },
      ],
    });
    expect(sent).toEqual(exchange.request);
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
    expect(() => prepared.readResponse(readFixtureBytes('anthropic-error-529-overloaded.json'))).toThrow(/without a message: Overloaded/);
  });
});

describe('anthropic errors: documented bodies', () => {
  const prepared = prepareAnthropic({ messages: [{ role: 'user', content: 'x' }] });

  it.each([
    ['anthropic-error-400-invalid-request.json', 400, 'invalid_request_error', 'max_tokens: 100000 > 64000, which is the maximum'],
    ['anthropic-error-429-rate-limit.json', 429, 'rate_limit_error', "This request would exceed your organization's rate limit of 40,000 input tokens"],
    ['anthropic-error-529-overloaded.json', 529, 'overloaded_error', 'Overloaded'],
  ])('%s keeps status %i, type and message', (fixture, status, type, message) => {
    const error = prepared.readError(status, readFixtureBytes(fixture), { 'retry-after': '3' });
    expect(error.status).toBe(status);
    const body = error.toBody();
    expect(body.error).toMatchObject({ type, code: type, provider: 'anthropic' });
    expect(body.error.message.startsWith(message)).toBe(true);
    // The provider's raw headers stay out of the error; routed answers relay the ones they keep.
    expect(error.headers).toBeUndefined();
  });

  it('keeps a body that is not Anthropic JSON as the message', () => {
    const error = prepared.readError(502, Buffer.from('upstream connect error'), {});
    expect(error.toBody().error).toMatchObject({ message: 'upstream connect error', provider: 'anthropic' });
  });
});
