import { describe, expect, it, vi } from 'vitest';
import type { TokenUsage } from '../../../lib/core/usage';
import { GatewayError } from '../../../lib/core/errors';
import { anthropicEventMapper, streamEnd } from '../../../lib/providers/anthropic';
import { ChatChunkEmitter } from '../../../lib/providers/openai-format/chunk-emitter';
import {
  anthropicErrorSamples,
  anthropicPaddedSample,
  anthropicPaddedStream,
  anthropicTextStream,
  anthropicThinkingRefusalSample,
  anthropicThinkingRefusalStream,
  anthropicToolUseSample,
  anthropicToolUseStream,
  anthropicToolUseStreamText,
} from '../../fixtures/providers/anthropic';
import { chunkDeltas, replayAnthropicStream, streamedContent } from '../../support/fakes/anthropic';
import { readRecording, readRecordingBytes, recordingsPresent } from '../../support/recordings';

const messageStart =
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[],"usage":{"input_tokens":5,"output_tokens":1}}}\n\n';
const partialText =
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\nevent: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"partial"}}\n\n';

/** The pieces of every delta of one kind, joined, read from the stream's own bytes. */
const deltaText = (wire: string, type: string, field: string): string =>
  [...wire.matchAll(new RegExp(`"${type}","${field}":"((?:[^"\\\\]|\\\\.)*)"`, 'g'))].map((match) => JSON.parse(`"${match[1]}"`)).join('');

/**
 * One source of streams and what the gateway must make of them. Every stream is produced by a
 * function, so a recording is read only when its test runs, never while the tests are collected.
 */
interface StreamSource {
  text: { wire: () => string | Buffer; id: string; model: string; deltas: string[]; usage: TokenUsage };
  padded: {
    wire: () => string;
    lineEnd: '\n' | '\r\n';
    /** Whether the text has characters of several UTF-8 bytes, which a 7-byte read cuts apart. */
    multiByte: boolean;
    content: (wire: string) => string;
    opening: RegExp;
    contains: string[];
    model: string;
    usage: TokenUsage;
  };
  toolUse: { wire: () => string | Buffer; content: string; id: string; name: string; arguments: string; input: unknown; usage: TokenUsage };
  thinking: { wire: () => string; content: string; usage: TokenUsage; opening: RegExp; thinkingText: (wire: string) => string; signature: string };
  errorEvent: { body: () => string; before: string; content: string; message: string };
  forcedTool: { wire: () => string; toolName: string; content: string };
}

const samples: StreamSource = {
  text: {
    wire: () => anthropicTextStream,
    id: 'msg_gw_sample_01',
    model: 'claude-3-5-haiku-20241022',
    deltas: ['Your order', ' ships on', ' Tuesday.'],
    usage: { prompt_tokens: 19, completion_tokens: 9, total_tokens: 28 },
  },
  padded: {
    wire: () => anthropicPaddedStream,
    lineEnd: '\r\n',
    multiByte: true,
    content: () => anthropicPaddedSample.pieces.join(''),
    opening: /^Order A-1042 left our warehouse in Zürich/,
    contains: ['"hub"', '€4.90'],
    model: 'claude-3-7-sonnet-20250219',
    usage: { prompt_tokens: 64, completion_tokens: 118, total_tokens: 182 },
  },
  toolUse: {
    wire: () => anthropicToolUseStream,
    content: 'Let me look up that order.',
    id: 'toolu_gw_sample_03',
    name: 'lookup_order',
    arguments: '{"order_id": "A-1042"}',
    input: { order_id: 'A-1042' },
    usage: { prompt_tokens: 523, completion_tokens: 71, total_tokens: 594, prompt_tokens_details: { cached_tokens: 0 } },
  },
  thinking: {
    wire: () => anthropicThinkingRefusalStream,
    content: "I can't share another customer's payment details.",
    usage: {
      prompt_tokens: 41,
      completion_tokens: 88,
      total_tokens: 129,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 52 },
    },
    opening: /^The customer asks for the card number saved on another customer's account\..*must not reveal it\.$/s,
    thinkingText: () => anthropicThinkingRefusalSample.thinking.join(''),
    signature: 'b3JkZXIgYXNzaXN0YW50IHNhbXBsZSBzaWduYXR1cmUgMDQ=',
  },
  errorEvent: {
    body: () => JSON.stringify(anthropicErrorSamples.overloaded.body),
    before: partialText,
    content: 'partial',
    message: 'Overloaded, please retry shortly',
  },
  forcedTool: { wire: () => anthropicToolUseStreamText({ toolName: 'order_status' }), toolName: 'order_status', content: anthropicToolUseSample.arguments },
};

const recordings: StreamSource = {
  text: {
    wire: () => readRecordingBytes('anthropic_stream_basic_text.sse'),
    id: 'msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK',
    model: 'claude-3-opus-latest',
    deltas: ['Hello', ' there', '!'],
    usage: { prompt_tokens: 11, completion_tokens: 6, total_tokens: 17 },
  },
  padded: {
    wire: () => readRecording('anthropic_stream_text_claude35_recorded.sse'),
    lineEnd: '\n',
    multiByte: false,
    content: (wire) => deltaText(wire, 'text_delta', 'text'),
    opening: /^Coca-Cola is one of/,
    contains: [],
    model: 'claude-3-5-sonnet-20241022',
    usage: { prompt_tokens: 36, completion_tokens: 265, total_tokens: 301 },
  },
  toolUse: {
    wire: () => readRecordingBytes('anthropic_stream_tool_use.sse'),
    content: "I'll check the current weather in Paris for you.",
    id: 'toolu_01NRLabsLyVHZPKxbKvkfSMn',
    name: 'get_weather',
    arguments: '{"location": "Paris"}',
    input: { location: 'Paris' },
    usage: { prompt_tokens: 377, completion_tokens: 65, total_tokens: 442, prompt_tokens_details: { cached_tokens: 0 } },
  },
  thinking: {
    wire: () => readRecording('anthropic_stream_thinking_signature_refusal.SYNTHETIC.sse'),
    content: 'Hi',
    usage: {
      prompt_tokens: 28,
      completion_tokens: 106,
      total_tokens: 134,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 67 },
    },
    opening: /^Simple educational question about what a solar eclipse is\..*politely\.$/s,
    thinkingText: (wire) => deltaText(wire, 'thinking_delta', 'thinking'),
    signature: 'c3ludGhldGljLXNpZ25hdHVyZS1maXh0dXJlLWEtbm90LWEtcmVhbC1zaWduYXR1cmU=',
  },
  errorEvent: { body: () => readRecording('anthropic_error_529_overloaded.json'), before: '', content: '', message: 'Overloaded' },
  forcedTool: {
    wire: () => readRecording('anthropic_stream_tool_use.sse').replaceAll('"get_weather"', '"weather_report"'),
    toolName: 'weather_report',
    content: '{"location": "Paris"}',
  },
};

describe.each([
  ['samples', samples, false],
  ['recorded transcripts', recordings, !recordingsPresent],
] as const)('anthropic stream: %s', (_source, { text, padded, toolUse, thinking, errorEvent, forcedTool }, skip) => {
  const run = it.skipIf(skip);

  run('maps a text stream: role first, text deltas, stop, usage chunk, [DONE]', async () => {
    const { events, usages } = await replayAnthropicStream(text.wire(), { includeUsage: true });
    for (const event of events.slice(0, -1)) {
      expect(event).toMatchObject({ id: text.id, object: 'chat.completion.chunk', model: text.model });
      expect(typeof event.created).toBe('number');
    }
    expect(events[0].choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null });
    expect(chunkDeltas(events).slice(1, 4)).toEqual(text.deltas.map((content) => ({ content })));
    const finish = events.filter((event) => event !== '[DONE]' && event.choices[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'stop' });
    expect(events.at(-2)).toMatchObject({ choices: [], usage: text.usage });
    expect(events.at(-2).usage.prompt_tokens_details).toBeUndefined();
    expect(events.at(-1)).toBe('[DONE]');
    expect(usages).toEqual([text.usage]);
  });

  run(`reads a stream with padded data lines and ${padded.lineEnd === '\r\n' ? 'CRLF' : 'LF'} line ends, cut into 7-byte reads`, async () => {
    const wire = padded.wire();
    // The stream has what the test is meant to exercise: JSON padded before its last brace, one kind of line end.
    expect(wire).toMatch(new RegExp(`\\} {2,}\\}${padded.lineEnd}`));
    expect(wire.replaceAll(padded.lineEnd, '')).not.toMatch(/[\r\n]/);
    expect(Buffer.byteLength(wire) > wire.length).toBe(padded.multiByte);
    const expected = padded.content(wire);
    const { events, usages } = await replayAnthropicStream(wire, { splitEvery: 7 });
    expect(streamedContent(events)).toBe(expected);
    expect(expected).toMatch(padded.opening);
    for (const part of padded.contains) expect(expected).toContain(part);
    expect(events.at(-2).choices[0].finish_reason).toBe('stop');
    expect(events.at(-2).model).toBe(padded.model);
    // No usage chunk unless the client asked; the usage is still reported for the log.
    expect(events.some((event) => event !== '[DONE]' && event.usage)).toBe(false);
    expect(usages).toEqual([padded.usage]);
  });

  run('maps a tool_use block to a tool call numbered by tool order, with argument fragments', async () => {
    const { events } = await replayAnthropicStream(toolUse.wire(), { includeUsage: true, splitEvery: 13 });
    const deltas = chunkDeltas(events);
    expect(streamedContent(events)).toBe(toolUse.content);
    const calls = deltas.filter((delta) => delta.tool_calls).map((delta) => delta.tool_calls[0]);
    // Anthropic's block index is 1; the OpenAI tool call index is 0 (the first tool_use block).
    expect(calls[0]).toEqual({ index: 0, id: toolUse.id, type: 'function', function: { name: toolUse.name, arguments: '' } });
    expect(calls.slice(1).every((call) => call.index === 0 && call.id === undefined)).toBe(true);
    // The input arrived in several pieces, so the arguments must too.
    expect(calls.length).toBeGreaterThan(2);
    const args = calls.map((call) => call.function.arguments).join('');
    expect(args).toBe(toolUse.arguments);
    expect(JSON.parse(args)).toEqual(toolUse.input);
    expect(events.find((event) => event !== '[DONE]' && event.choices[0]?.finish_reason).choices[0].finish_reason).toBe('tool_calls');
    expect(events.at(-2).usage).toEqual(toolUse.usage);
  });

  run('leaves thinking out under strict API compliance and maps refusal to content_filter', async () => {
    const { events, usages } = await replayAnthropicStream(thinking.wire());
    const deltas = chunkDeltas(events);
    expect(deltas.some((delta) => delta.content_blocks)).toBe(false);
    expect(streamedContent(events)).toBe(thinking.content);
    expect(events.at(-2).choices[0].finish_reason).toBe('content_filter');
    expect(usages[0]).toEqual(thinking.usage);
  });

  run('streams thinking and its signature as content_blocks deltas when strict compliance is off', async () => {
    const wire = thinking.wire();
    const { events } = await replayAnthropicStream(wire, { strict: false, splitEvery: 5 });
    const blocks = chunkDeltas(events)
      .filter((delta) => delta.content_blocks)
      .map((delta) => delta.content_blocks[0]);
    expect(blocks.every((block) => block.index === 0 && block.type === 'thinking')).toBe(true);
    const streamedThinking = blocks.map((block) => block.thinking ?? '').join('');
    expect(streamedThinking).toMatch(thinking.opening);
    expect(streamedThinking).toBe(thinking.thinkingText(wire));
    expect(blocks.at(-1)).toEqual({ index: 0, type: 'thinking', signature: thinking.signature });
    expect(streamedContent(events)).toBe(thinking.content);
  });

  run('turns an error event after the start into an error event and [DONE], with the provider message', async () => {
    const { events, usages } = await replayAnthropicStream(`${messageStart}${errorEvent.before}event: error\ndata: ${errorEvent.body()}\n\n`);
    expect(streamedContent(events)).toBe(errorEvent.content);
    expect(events.at(-2)).toEqual({
      error: { message: errorEvent.message, type: 'overloaded_error', param: null, code: 'overloaded_error', provider: 'anthropic' },
    });
    expect(events.at(-1)).toBe('[DONE]');
    expect(usages[0].prompt_tokens).toBe(5);
  });

  run('streams the forced response_format tool as content with finish_reason stop', async () => {
    const request = { response_format: { type: 'json_schema', json_schema: { name: forcedTool.toolName, schema: { type: 'object' } } } };
    const { events } = await replayAnthropicStream(forcedTool.wire(), { request });
    expect(chunkDeltas(events).some((delta) => delta.tool_calls)).toBe(false);
    // The text block before the tool is left out, as in a whole response: the content is the JSON.
    expect(streamedContent(events)).toBe(forcedTool.content);
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
