import { describe, expect, it, vi } from 'vitest';
import { GatewayError } from '../../../lib/core/errors';
import { anthropicEventMapper, streamEnd } from '../../../lib/providers/anthropic';
import { ChatChunkEmitter } from '../../../lib/providers/openai-format/chunk-emitter';
import { anthropicErrorBody, chunkDeltas, replayAnthropicStream, streamedContent } from '../../support/fakes/anthropic';
import { readRecording, readRecordingBytes, recordingsPresent } from '../../support/recordings';

const messageStart =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}\n\n';
const partialText =
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}\n\n';
const textDelta = (text: string) =>
  `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })}\n\n`;
/** Closes the text block opened by `partialText` and the message. */
const messageEnd =
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\nevent: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';

/** The pieces of every delta of one kind, joined, read from the stream's own bytes. */
const deltaText = (wire: string, type: string, field: string): string =>
  [...wire.matchAll(new RegExp(`"${type}","${field}":"((?:[^"\\\\]|\\\\.)*)"`, 'g'))].map((match) => JSON.parse(`"${match[1]}"`)).join('');

/** An `error` event with this body after some text must end the stream with the provider's message and [DONE]. */
async function expectErrorEventRelayed(body: string, message: string) {
  const { events, usages } = await replayAnthropicStream(`${messageStart}${partialText}event: error\ndata: ${body}\n\n`);
  expect(streamedContent(events)).toBe('partial');
  expect(events.at(-2)).toEqual({ error: { message, type: 'overloaded_error', param: null, code: 'overloaded_error', provider: 'anthropic' } });
  expect(events.at(-1)).toBe('[DONE]');
  expect(usages[0].prompt_tokens).toBe(5);
}

// Whole provider scenarios are replayed only from the recordings beside the repository (read inside
// each test, so a clone without them collects and skips these); the bare clone keeps the inline tests
// below and the end-to-end runs against the fake upstream.
describe.skipIf(!recordingsPresent)('anthropic stream: recorded transcripts', () => {
  it('maps a text stream: role first, text deltas, stop, usage chunk, [DONE]', async () => {
    const usage = { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 };
    const { events, usages } = await replayAnthropicStream(readRecordingBytes('anthropic_stream_basic_text.sse'), { includeUsage: true });
    for (const event of events.slice(0, -1)) {
      expect(event).toMatchObject({ id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK', object: 'chat.completion.chunk', model: 'claude-3-opus-latest' });
      expect(typeof event.created).toBe('number');
    }
    expect(events[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    expect(chunkDeltas(events).slice(1, 4)).toEqual(['Hello', ' there', '!'].map((content) => ({ content })));
    const finish = events.filter((event) => event !== '[DONE]' && event.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    expect(events.at(-2)).toMatchObject({ choices: [], usage });
    expect(events.at(-2).usage.prompt_tokens_details).toBeUndefined();
    expect(events.at(-1)).toBe('[DONE]');
    expect(usages).toEqual([usage]);
  });

  it('reads a stream with padded data lines and LF line ends, cut into 7-byte reads', async () => {
    const wire = readRecording('anthropic_stream_text_claude35_recorded.sse');
    // The stream has what the test is meant to exercise: JSON padded before its last brace, one kind of line end.
    expect(wire).toMatch(/\} {2,}\}\n/);
    expect(wire.replaceAll('\n', '')).not.toMatch(/[\r\n]/);
    // All ASCII: characters of several bytes cut apart by a read are the inline test's below.
    expect(Buffer.byteLength(wire)).toBe(wire.length);
    const expected = deltaText(wire, 'text_delta', 'text');
    const { events, usages } = await replayAnthropicStream(wire, { splitEvery: 7 });
    expect(streamedContent(events)).toBe(expected);
    expect(expected).toMatch(/^Coca-Cola is one of/);
    expect(events.at(-2).choices[0].finish_reason).toBe('stop');
    expect(events.at(-2).model).toBe('claude-3-5-sonnet-20241022');
    // No usage chunk unless the client asked; the usage is still reported for the log.
    expect(events.some((event) => event !== '[DONE]' && event.usage)).toBe(false);
    expect(usages).toEqual([{ prompt_tokens: 36, completion_tokens: 265, total_tokens: 301 }]);
  });

  it('maps a tool_use block to a tool call numbered by tool order, with argument fragments', async () => {
    const { events } = await replayAnthropicStream(readRecordingBytes('anthropic_stream_tool_use.sse'), { includeUsage: true, splitEvery: 13 });
    const deltas = chunkDeltas(events);
    expect(streamedContent(events)).toBe("I'll check the current weather in Paris for you.");
    const calls = deltas.filter((delta) => delta.tool_calls).map((delta) => delta.tool_calls[0]);
    // Anthropic's block index is 1; the OpenAI tool call index is 0 (the first tool_use block).
    expect(calls[0]).toEqual({ index: 0, id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.slice(1).every((call) => call.index === 0 && call.id === undefined)).toBe(true);
    // The input arrived in several pieces, so the arguments must too.
    expect(calls.length).toBeGreaterThan(2);
    const args = calls.map((call) => call.function.arguments).join('');
    expect(args).toBe('{"location": "Paris"}');
    expect(JSON.parse(args)).toEqual({ location: 'Paris' });
    expect(events.find((event) => event !== '[DONE]' && event.choices[0]?.finish_reason).choices[0].finish_reason).toBe('tool_calls');
    expect(events.at(-2).usage).toEqual({ prompt_tokens: 377, completion_tokens: 65, total_tokens: 442, prompt_tokens_details: { cached_tokens: 0 } });
  });

  const thinkingStream = () => readRecording('anthropic_stream_thinking_signature_refusal.SYNTHETIC.sse');

  it('leaves thinking out under strict API compliance and maps refusal to content_filter', async () => {
    const { events, usages } = await replayAnthropicStream(thinkingStream());
    const deltas = chunkDeltas(events);
    expect(deltas.some((delta) => delta.content_blocks)).toBe(false);
    expect(streamedContent(events)).toBe('Hi');
    expect(events.at(-2).choices[0].finish_reason).toBe('content_filter');
    expect(usages[0]).toEqual({
      prompt_tokens: 28,
      completion_tokens: 106,
      total_tokens: 134,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 67 },
    });
  });

  it('streams thinking and its signature as content_blocks deltas when strict compliance is off', async () => {
    const wire = thinkingStream();
    const { events } = await replayAnthropicStream(wire, { strict: false, splitEvery: 5 });
    const blocks = chunkDeltas(events)
      .filter((delta) => delta.content_blocks)
      .map((delta) => delta.content_blocks[0]);
    expect(blocks.every((block) => block.index === 0 && block.type === 'thinking')).toBe(true);
    const streamedThinking = blocks.map((block) => block.thinking ?? '').join('');
    expect(streamedThinking).toMatch(/^Simple educational question about what a solar eclipse is\..*politely\.$/s);
    expect(streamedThinking).toBe(deltaText(wire, 'thinking_delta', 'thinking'));
    expect(blocks.at(-1)).toEqual({ index: 0, type: 'thinking', signature: 'c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=' });
    expect(streamedContent(events)).toBe('Hi');
  });

  it('turns the recorded overloaded error event after the start into an error event and [DONE]', () =>
    expectErrorEventRelayed(readRecording('anthropic_error_529_overloaded.json'), 'Overloaded'));

  it('streams the forced response_format tool as content with finish_reason stop', async () => {
    const request = { response_format: { type: 'json_schema', json_schema: { name: 'weather_report', schema: { type: 'object' } } } };
    const wire = readRecording('anthropic_stream_tool_use.sse').replaceAll('"get_weather"', '"weather_report"');
    const { events } = await replayAnthropicStream(wire, { request });
    expect(chunkDeltas(events).some((delta) => delta.tool_calls)).toBe(false);
    // The text block before the tool is left out, as in a whole response: the content is the JSON.
    expect(streamedContent(events)).toBe('{"location": "Paris"}');
    expect(events.at(-2).choices[0].finish_reason).toBe('stop');
  });
});

describe('anthropic stream: errors and unusual streams', () => {
  it('gives an overloaded_error the status 529 and a rate_limit_error 429', () => {
    const mapper = anthropicEventMapper({ provider: 'anthropic', strictApiCompliance: true });
    const emitter = new ChatChunkEmitter({ id: 'x', model: 'm', includeUsage: false, onUsage: () => {}, push: () => {} });
    const spy = vi.spyOn(emitter, 'error');
    mapper({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }, emitter);
    expect(spy.mock.calls[0][0]).toBeInstanceOf(GatewayError);
    expect(spy.mock.calls[0][0]).toMatchObject({ status: 529, message: 'Overloaded', type: 'overloaded_error', provider: 'anthropic' });
    const other = new ChatChunkEmitter({ id: 'x', model: 'm', includeUsage: false, onUsage: () => {}, push: () => {} });
    const otherSpy = vi.spyOn(other, 'error');
    anthropicEventMapper({ provider: 'anthropic', strictApiCompliance: true })(
      { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } },
      other,
    );
    expect(otherSpy.mock.calls[0][0].status).toBe(429);
  });

  it('turns an error event after the start into an error event and [DONE], with the provider message', () =>
    expectErrorEventRelayed(JSON.stringify(anthropicErrorBody(529, 'Overloaded')), 'Overloaded'));

  it('reads CRLF line ends, whole and with a read between CR and LF', async () => {
    const wire = `${messageStart}${partialText}${messageEnd}`.replaceAll('\n', '\r\n');
    for (const splitEvery of [undefined, 1]) {
      const { events, usages } = await replayAnthropicStream(wire, { splitEvery, includeUsage: true });
      expect(streamedContent(events)).toBe('partial');
      expect(events.at(-3).choices[0].finish_reason).toBe('stop');
      expect(events.at(-1)).toBe('[DONE]');
      expect(usages).toEqual([{ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 }]);
    }
  });

  it('joins characters of two, three and four UTF-8 bytes that reads cut apart', async () => {
    const text = ' – Zürich 東京 🚚';
    const wire = `${messageStart}${partialText}${textDelta(text)}${messageEnd}`;
    expect(Buffer.byteLength(wire)).toBeGreaterThan(wire.length);
    const { events } = await replayAnthropicStream(wire, { splitEvery: 1 });
    expect(streamedContent(events)).toBe(`partial${text}`);
    expect(events.at(-2).choices[0].finish_reason).toBe('stop');
  });

  it('reports a stream that ends before message_stop as an error', async () => {
    const { events } = await replayAnthropicStream(messageStart + partialText);
    expect(streamedContent(events)).toBe('partial');
    expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'anthropic' });
    expect(events.at(-2).error.message).toMatch(/ended before the message was complete/);
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('reads the error event the gateway appends when the provider socket breaks', async () => {
    const broken = `\n\ndata: ${JSON.stringify({ error: { message: 'The anthropic stream broke off: socket hang up.', type: 'provider_error', code: 'provider_stream_error', provider: 'anthropic' } })}\n\ndata: [DONE]\n\n`;
    const { events } = await replayAnthropicStream(messageStart + partialText + broken);
    expect(events.at(-2).error).toMatchObject({ message: 'The anthropic stream broke off: socket hang up.', code: 'provider_stream_error' });
    expect(events.filter((event) => event === '[DONE]')).toHaveLength(1);
  });

  it('reports an unreadable event as a stream error instead of throwing', async () => {
    const { events } = await replayAnthropicStream(`${messageStart}event: content_block_delta\ndata: {"type":"content_bl\n\n`);
    expect(events.at(-2).error).toMatchObject({ code: 'provider_stream_error', provider: 'anthropic' });
    expect(events.at(-2).error.message).toMatch(/Could not read the anthropic stream/);
  });

  it('ignores unknown events and server-tool blocks, and numbers several tool calls 0, 1', async () => {
    const tool = (index: number, id: string, json: string) =>
      `event: content_block_start\ndata: {"type":"content_block_start","index":${index},"content_block":{"type":"tool_use","id":"${id}","name":"f${index}","input":{}}}\n\n` +
      (json
        ? `event: content_block_delta\ndata: {"type":"content_block_delta","index":${index},"delta":{"type":"input_json_delta","partial_json":${JSON.stringify(json)}}}\n\n`
        : '') +
      `event: content_block_stop\ndata: {"type":"content_block_stop","index":${index}}\n\n`;
    const body =
      messageStart +
      'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{}}}\n\n' +
      'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n' +
      'event: future_event\ndata: {"type":"future_event","x":1}\n\n' +
      tool(1, 'toolu_a', '{"a":1}') +
      tool(2, 'toolu_b', '') +
      'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":9}}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n';
    const { events } = await replayAnthropicStream(body);
    const calls = chunkDeltas(events)
      .filter((delta) => delta.tool_calls)
      .map((delta) => delta.tool_calls[0]);
    expect(calls.filter((call) => call.id).map((call) => [call.index, call.id, call.function.name])).toEqual([
      [0, 'toolu_a', 'f1'],
      [1, 'toolu_b', 'f2'],
    ]);
    // A tool call whose input arrived without fragments still gets parseable arguments.
    expect(
      calls
        .filter((call) => call.index === 1)
        .map((call) => call.function.arguments)
        .join(''),
    ).toBe('{}');
    expect(events.at(-2).choices[0].finish_reason).toBe('tool_calls');
  });

  it('can be driven with parsed events and the end marker (for Claude served by other hosts)', () => {
    let out = '';
    const emitter = new ChatChunkEmitter({ id: 'x', model: 'm', includeUsage: true, onUsage: () => {}, push: (piece) => (out += piece) });
    const mapper = anthropicEventMapper({ provider: 'vertex-ai', strictApiCompliance: true });
    mapper(
      {
        type: 'message_start',
        message: {
          id: 'msg_v',
          type: 'message',
          role: 'assistant',
          model: 'claude-v',
          content: [],
          stop_reason: null,
          usage: { input_tokens: 2, output_tokens: 1 },
        },
      },
      emitter,
    );
    mapper({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'ok' } }, emitter);
    expect(() => mapper(streamEnd, emitter)).toThrow(/vertex-ai stream ended/);
    mapper({ type: 'message_delta', delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 4 } }, emitter);
    expect(() => mapper(streamEnd, emitter)).not.toThrow();
    emitter.end();
    expect(out).toContain('"finish_reason":"length"');
    expect(out).toContain('"usage":{"prompt_tokens":2,"completion_tokens":4,"total_tokens":6}');
  });
});
