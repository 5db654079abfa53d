import { readdirSync } from 'node:fs';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Transform } from 'node:stream';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { eventStreamDecoder, type EventStreamHeaders, type EventStreamItem } from '../../../lib/providers/bedrock/event-stream';
import { converseStreamTransform } from '../../../lib/providers/bedrock/stream';
import {
  bedrockRedactedThinkingStream,
  bedrockThinkingToolUseEvents,
  bedrockToolUseEvents,
  bedrockToolUseFrames,
  bedrockToolUseStream,
  bedrockToolUseStreamPadded,
  type ConverseStreamEvent,
  encodeConverseStream,
  errorFrame,
  eventFrame,
  eventParts,
  exceptionFrame,
  negativeVectors,
  positiveVectors,
} from '../../fixtures/providers/bedrock';
import { encodeFrame } from '../../support/fakes/bedrock';
import { readRecording, readRecordingBytes, readRecordingJson, recordingsDir, recordingsPresent } from '../../support/recordings';
import { parseSse } from '../../support/sse';

const vectorDir = 'aws_eventstream_test_vectors';
const derived = 'bedrock_converse_stream_tool_use.DERIVED.eventstream';
type EventsFixture = Array<Record<string, Record<string, unknown>>>;
/** Named here rather than listed from the directory, so nothing is read unless the recordings are there. */
const recordedPositiveVectors = ['all_headers', 'empty_message', 'int32_header', 'payload_no_headers', 'payload_one_str_header'];
const recordedNegativeVectors = ['corrupted_header_len', 'corrupted_headers', 'corrupted_length', 'corrupted_payload'];

/** A deterministic PRNG (mulberry32), so a failing split can be replayed. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function splitRandomly(bytes: Buffer, next: () => number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < bytes.length; ) {
    const size = 1 + Math.floor(next() * 40);
    pieces.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return pieces;
}

const byteByByte = (bytes: Buffer) => [...bytes].map((byte) => Buffer.from([byte]));

/**
 * A frame whole and cut into pieces. Byte by byte costs quadratic copying in the decoder, so a large
 * frame is cut byte by byte only across its prelude and its message CRC, in large pieces between.
 */
function splitsOf(bytes: Buffer): Buffer[][] {
  if (bytes.length <= 4096) return [[bytes], byteByByte(bytes)];
  const pieces: Buffer[] = byteByByte(bytes.subarray(0, 16));
  for (let offset = 16; offset < bytes.length - 4; offset += 65_521) pieces.push(bytes.subarray(offset, Math.min(offset + 65_521, bytes.length - 4)));
  return [[bytes], [...pieces, ...byteByByte(bytes.subarray(-4))]];
}

function decodeAll(pieces: Buffer[]): EventStreamItem[] {
  const decoder = eventStreamDecoder();
  return [...pieces.flatMap((piece) => decoder.push(piece)), ...decoder.end()];
}

/** A header as the vectors' decoded JSON writes it: type id and value (strings and bytes base64). */
function vectorForm(headers: EventStreamHeaders) {
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

/**
 * The names and type ids of a frame's headers, read by the documented layout (name length u8, name,
 * type u8, value), apart from the codec's own parser.
 */
function headerLayout(bytes: Buffer): Array<{ name: string; type: number }> {
  const fixedSizes: Record<number, number> = { 0: 0, 1: 0, 2: 1, 3: 2, 4: 4, 5: 8, 8: 8, 9: 16 };
  const headers: Array<{ name: string; type: number }> = [];
  for (let offset = 0; offset < bytes.length; ) {
    const nameLength = bytes[offset];
    const name = bytes.subarray(offset + 1, offset + 1 + nameLength).toString('utf8');
    const type = bytes[offset + 1 + nameLength];
    offset += 2 + nameLength;
    offset += type === 6 || type === 7 ? 2 + bytes.readUInt16BE(offset) : fixedSizes[type];
    headers.push({ name, type });
  }
  return headers;
}

/** Events as the decoder should hand them over: `:event-type` and parsed payload. */
const decodedForm = (events: Array<Record<string, Record<string, unknown>>>) => events.map((event) => eventParts(event as ConverseStreamEvent));

function expectDecodedEvents(bytes: Buffer, expected: Array<{ type: string; payload: unknown }>, seed: number) {
  const splits = [[bytes], byteByByte(bytes)];
  const next = random(seed);
  for (let trial = 0; trial < 50; trial++) splits.push(splitRandomly(bytes, next));
  for (const pieces of splits) {
    const items = decodeAll(pieces);
    expect(items.at(-1)).toEqual({ kind: 'end', pendingBytes: 0 });
    const decoded = items.slice(0, -1).map((item) => {
      if (item.kind !== 'message') throw new Error(JSON.stringify(item));
      expect(item.headers[':message-type']).toEqual({ type: 'string', value: 'event' });
      expect(item.headers[':content-type']).toEqual({ type: 'string', value: 'application/json' });
      return { type: item.headers[':event-type'].value, payload: JSON.parse(item.payload.toString('utf8')) };
    });
    expect(decoded).toEqual(expected);
  }
}

/** A frame that must decode, and what it must decode to. */
interface DecodedVector {
  bytes: Buffer;
  payload: Buffer;
  /** The header names and type ids in the order they are written. */
  layout: Array<{ name: string; type: number }>;
  /** The decoded headers as the case states them, and the form that turns the decoder's headers into it. */
  headers: unknown;
  form: (headers: EventStreamHeaders) => unknown;
  /** The frame length the vector states apart from its bytes, where it states one. */
  totalLength?: number;
}

type Usage = { prompt_tokens: number; completion_tokens: number; total_tokens: number };

/**
 * One source of Bedrock streams and what the gateway must make of them. Whatever a recording holds is
 * produced by a function, so a recording is read only when its test runs, never while tests are collected.
 */
interface StreamSource {
  positive: Array<{ name: string; vector: () => DecodedVector }>;
  /** Corrupt frames; each name says what the decoder must report. */
  negative: Array<{ name: string; vector: () => { bytes: Buffer; error: string } }>;
  toolUse: {
    bytes: () => Buffer;
    /** The events the stream was encoded from, as `:event-type` and payload. */
    events: () => Array<{ type: string; payload: unknown }>;
    firstFrameLengths: [number, number];
    text: string;
    toolCall: { id: string; name: string };
    arguments: string;
    usage: Usage;
  };
  thinking: {
    bytes: () => Buffer;
    opening: string;
    /** The whole reasoning text, or a matcher for it. */
    reasoning: unknown;
    signature: string;
    toolCall: { id: string; name: string };
    input: unknown;
  };
}

const samples: StreamSource = {
  positive: positiveVectors.map(({ name, bytes, message, headerTypes }) => ({
    name: `codec vector ${name}`,
    vector: () => ({
      bytes,
      payload: Buffer.from(message.body),
      layout: Object.keys(message.headers).map((header, index) => ({ name: header, type: headerTypes[index] })),
      headers: message.headers,
      form: (headers) => headers,
    }),
  })),
  negative: negativeVectors.map((vector) => ({ name: `corrupted vector ${vector.name} with ${vector.error}`, vector: () => vector })),
  toolUse: {
    bytes: () => bedrockToolUseStream,
    events: () => bedrockToolUseEvents.map(eventParts),
    firstFrameLengths: [bedrockToolUseFrames[0].length, bedrockToolUseFrames[1].length],
    text: 'Let me check on order A-1042 for you. One moment while I look up its shipping status.',
    toolCall: { id: 'tooluse_gw_sample_01', name: 'lookup_order' },
    arguments: '{"order_id": "A-1042"}',
    usage: { prompt_tokens: 287, completion_tokens: 58, total_tokens: 345 },
  },
  thinking: {
    bytes: () => encodeConverseStream(bedrockThinkingToolUseEvents, { pad: true }),
    opening: 'The customer wants',
    reasoning:
      'The customer wants to know when order A-1042 will ship. The lookup_order tool takes an order_id, and the id is given, so I can call it right away.',
    signature: 'Z3ctc2FtcGxlLXJlYXNvbmluZy1zaWduYXR1cmUtMDE=',
    toolCall: { id: 'tooluse_gw_sample_02', name: 'lookup_order' },
    input: { order_id: 'A-1042' },
  },
};

const recordings: StreamSource = {
  positive: recordedPositiveVectors.map((name) => ({
    name: `official vector positive__${name}`,
    vector: () => {
      const expected = readRecordingJson<{ headers: Array<{ name: string; type: number }>; payload: string; total_length: number }>(
        `${vectorDir}/decoded__positive__${name}`,
      );
      return {
        bytes: readRecordingBytes(`${vectorDir}/encoded__positive__${name}`),
        payload: Buffer.from(expected.payload, 'base64'),
        layout: expected.headers.map((header) => ({ name: header.name, type: header.type })),
        headers: expected.headers,
        form: vectorForm,
        totalLength: expected.total_length,
      };
    },
  })),
  negative: recordedNegativeVectors.map((name) => ({
    name: `official vector negative__${name} with the checksum error its decoded form names`,
    vector: () => ({
      bytes: readRecordingBytes(`${vectorDir}/encoded__negative__${name}`),
      error: readRecording(`${vectorDir}/decoded__negative__${name}`).trim(),
    }),
  })),
  toolUse: {
    bytes: () => readRecordingBytes(derived),
    events: () => decodedForm(readRecordingJson<EventsFixture>('bedrock_converse_stream_tool_use_events.json')),
    firstFrameLengths: [118, 162],
    text: "Certainly! I can help you find out the weather in Berlin. To get this information, I'll use the weather tool available to me. Let me fetch that data for you.",
    toolCall: { id: 'tooluse_pLGRAmK7TNKoZQ_rntVN_Q', name: 'weather_tool' },
    arguments: '{"location": "Berlin"}',
    usage: { prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 },
  },
  thinking: {
    bytes: () => {
      const events = readRecordingJson<EventsFixture>('bedrock_converse_stream_thinking_tool_use_events.json');
      return Buffer.concat(decodedForm(events).map(({ type, payload }) => encodeFrame({ event: type, payload })));
    },
    opening: 'The user is asking about the weather',
    reasoning: expect.stringMatching(/^The user is asking about the weather in Paris\..* function call\.$/s),
    signature: '...',
    toolCall: { id: 'tooluse_1gPhO4A1RNWgzKbt1PXWLg', name: 'weather' },
    input: { city: 'Paris' },
  },
};

const sources = [
  ['samples', samples, false],
  ['recorded transcripts', recordings, !recordingsPresent],
] as const;

describe.each(sources)('AWS event-stream decoder: %s', (_source, { positive, negative, toolUse }, skip) => {
  const run = it.skipIf(skip);

  for (const { name, vector } of positive) {
    run(`decodes the ${name}, whole and split`, () => {
      const { bytes, payload, layout, headers, form, totalLength } = vector();
      const headersLength = bytes.readUInt32BE(4);
      expect(bytes.readUInt32BE(0)).toBe(bytes.length);
      expect(bytes.length).toBe(16 + headersLength + payload.length);
      if (totalLength !== undefined) expect(bytes.length).toBe(totalLength);
      expect(bytes.readUInt32BE(8)).toBe(crc32(bytes.subarray(0, 8)));
      expect(bytes.readUInt32BE(bytes.length - 4)).toBe(crc32(bytes.subarray(0, -4)));
      expect(headerLayout(bytes.subarray(12, 12 + headersLength))).toEqual(layout);
      expect(bytes.subarray(12 + headersLength, -4).equals(payload)).toBe(true);
      for (const pieces of splitsOf(bytes)) {
        const items = decodeAll(pieces);
        expect(items).toHaveLength(2);
        const [decoded, end] = items;
        if (decoded.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(decoded)}`);
        expect(form(decoded.headers)).toEqual(headers);
        expect(vectorForm(decoded.headers).map((header) => ({ name: header.name, type: header.type }))).toEqual(layout);
        expect(decoded.payload.equals(payload)).toBe(true);
        expect(end).toEqual({ kind: 'end', pendingBytes: 0 });
      }
    });
  }

  for (const { name, vector } of negative) {
    run(`rejects the ${name}`, () => {
      const { bytes, error } = vector();
      for (const pieces of [[bytes], byteByByte(bytes)]) {
        expect(decodeAll(pieces)).toEqual([{ kind: 'corrupt', message: error }]);
      }
    });
  }

  run('decodes the tool-use stream whole, byte by byte and in random splits, matching the events it was encoded from', () => {
    expectDecodedEvents(toolUse.bytes(), toolUse.events(), 42);
  });

  run('reports a frame cut off at the end of the stream, inside its prelude or after it', () => {
    const bytes = toolUse.bytes();
    const [first, second] = toolUse.firstFrameLengths;
    expect(bytes.readUInt32BE(0)).toBe(first);
    expect(bytes.readUInt32BE(first)).toBe(second);
    expect(first + second).toBeLessThan(bytes.length);
    for (const leftOver of [5, 60, 82]) {
      const items = decodeAll([bytes.subarray(0, first + leftOver)]);
      expect(items.map((item) => item.kind)).toEqual(['message', 'end']);
      expect(items.at(-1)).toEqual({ kind: 'end', pendingBytes: leftOver });
    }
  });
});

describe('AWS event-stream decoder', () => {
  it('covers every header value type the framing defines', () => {
    expect(new Set(positiveVectors.flatMap((vector) => vector.headerTypes))).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
    expect(positiveVectors.find((vector) => vector.name === 'big_payload')!.bytes.length).toBeGreaterThan(1024 * 1024);
  });

  it('decodes nothing after a corrupt frame, even good frames', () => {
    const good = positiveVectors[0].bytes;
    const corrupt = negativeVectors.find((vector) => vector.name === 'message_crc_flipped')!.bytes;
    const items = decodeAll([good, corrupt, good]);
    expect(items.map((item) => item.kind)).toEqual(['message', 'corrupt']);
  });
});

describe.skipIf(!recordingsPresent)('AWS event-stream decoder: the official vector set', () => {
  it('knows every official vector there is', () => {
    const names = readdirSync(`${recordingsDir}/${vectorDir}`);
    const named = (prefix: string) =>
      names
        .filter((file) => file.startsWith(prefix))
        .map((file) => file.slice(prefix.length))
        .sort();
    expect(named('encoded__positive__')).toEqual([...recordedPositiveVectors].sort());
    expect(named('encoded__negative__')).toEqual([...recordedNegativeVectors].sort());
  });
});

async function runTransform(transform: Transform, pieces: Buffer[]): Promise<string> {
  const out: Buffer[] = [];
  transform.on('data', (chunk: Buffer) => out.push(Buffer.from(chunk)));
  for (const piece of pieces) transform.write(piece);
  transform.end();
  await once(transform, 'end');
  return Buffer.concat(out).toString('utf8');
}

function chunksOf(sse: string): any[] {
  return parseSse(sse).map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data)));
}

/** The chunks without the per-stream id and timestamp, to compare runs. */
const stable = (chunks: any[]) => chunks.map((chunk) => (chunk === '[DONE]' ? chunk : { ...chunk, id: undefined, created: undefined }));

function transformFor(options: Partial<Parameters<typeof converseStreamTransform>[0]> = {}) {
  const usages: unknown[] = [];
  const transform = converseStreamTransform({
    model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
    includeUsage: true,
    strict: true,
    onUsage: (usage) => usages.push(usage),
    ...options,
  });
  return { transform, usages };
}

const frames = (events: ConverseStreamEvent[]) => Buffer.concat(events.map((event) => eventFrame(event)));
const textOf = (chunks: any[]) => chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
const toolCallsOf = (chunks: any[]) => chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
const contentBlocksOf = (chunks: any[]) => chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.content_blocks ?? []);

/** Replays a stream whole, byte by byte and in random splits: every way must give the same chunks. */
async function expectSplitInvariant(bytes: Buffer, chunks: any[], seed: number) {
  expect(stable(chunksOf(await runTransform(transformFor().transform, byteByByte(bytes))))).toEqual(stable(chunks));
  const next = random(seed);
  for (let trial = 0; trial < 20; trial++) {
    expect(stable(chunksOf(await runTransform(transformFor().transform, splitRandomly(bytes, next))))).toEqual(stable(chunks));
  }
}

describe.each(sources)('ConverseStream → OpenAI chunks: %s', (_source, { toolUse, thinking }, skip) => {
  const run = it.skipIf(skip);

  run('maps the tool-use stream field by field, however the bytes are split', async () => {
    const bytes = toolUse.bytes();
    const whole = transformFor();
    const chunks = chunksOf(await runTransform(whole.transform, [bytes]));
    expect(chunks[0]).toMatchObject({
      object: 'chat.completion.chunk',
      model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(textOf(chunks)).toBe(toolUse.text);
    const calls = toolCallsOf(chunks);
    expect(calls[0]).toEqual({ index: 0, id: toolUse.toolCall.id, type: 'function', function: { name: toolUse.toolCall.name, arguments: '' } });
    expect(calls.slice(1).every((call: any) => call.index === 0 && call.id === undefined)).toBe(true);
    expect(calls.map((call: any) => call.function.arguments).join('')).toBe(toolUse.arguments);
    const finish = chunks.filter((chunk) => chunk.choices?.[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-2)).toMatchObject({ choices: [], usage: toolUse.usage });
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(whole.usages).toEqual([toolUse.usage]);
    expect(new Set(chunks.slice(0, -1).map((chunk) => chunk.id)).size).toBe(1);

    await expectSplitInvariant(bytes, chunks, 7);
  });

  run('sends no usage chunk when the client did not ask, but still reports usage', async () => {
    const { transform, usages } = transformFor({ includeUsage: false });
    const chunks = chunksOf(await runTransform(transform, [toolUse.bytes()]));
    expect(chunks.some((chunk) => chunk !== '[DONE]' && chunk.usage)).toBe(false);
    expect(usages).toEqual([toolUse.usage]);
  });

  run('maps the thinking stream to content_blocks only when strict API compliance is off', async () => {
    const bytes = thinking.bytes();
    const loose = chunksOf(await runTransform(transformFor({ strict: false }).transform, [bytes]));
    const blocks = contentBlocksOf(loose);
    expect(blocks[0]).toEqual({ index: 0, type: 'thinking', thinking: thinking.opening });
    expect(
      blocks
        .filter((block: any) => block.thinking)
        .map((block: any) => block.thinking)
        .join(''),
    ).toEqual(thinking.reasoning);
    expect(blocks.at(-1)).toEqual({ index: 0, type: 'thinking', signature: thinking.signature });
    const calls = toolCallsOf(loose);
    expect(calls[0]).toMatchObject({ index: 0, id: thinking.toolCall.id, function: { name: thinking.toolCall.name } });
    expect(JSON.parse(calls.map((call: any) => call.function.arguments).join(''))).toEqual(thinking.input);

    const strict = chunksOf(await runTransform(transformFor({ strict: true }).transform, [bytes]));
    expect(strict.some((chunk) => chunk !== '[DONE]' && chunk.choices?.[0]?.delta?.content_blocks)).toBe(false);
    expect(toolCallsOf(strict)).toHaveLength(calls.length);
  });
});

describe('ConverseStream → OpenAI chunks', () => {
  it('ignores the padding field Bedrock adds to every payload', async () => {
    const plain = chunksOf(await runTransform(transformFor().transform, [bedrockToolUseStream]));
    expect(bedrockToolUseStreamPadded.length).toBeGreaterThan(bedrockToolUseStream.length);
    const padded = chunksOf(await runTransform(transformFor().transform, [bedrockToolUseStreamPadded]));
    expect(stable(padded)).toEqual(stable(plain));
  });

  it('maps redacted reasoning to a redacted_thinking block only when strict API compliance is off', async () => {
    const loose = chunksOf(await runTransform(transformFor({ strict: false }).transform, [bedrockRedactedThinkingStream]));
    expect(contentBlocksOf(loose)).toEqual([{ index: 0, type: 'redacted_thinking', data: 'Z3ctc2FtcGxlLXJlZGFjdGVk' }]);
    expect(textOf(loose)).toBe('Your order ships on Tuesday.');
    expect(loose.find((chunk) => chunk.choices?.[0]?.finish_reason).choices[0].finish_reason).toBe('stop');
    const strict = chunksOf(await runTransform(transformFor({ strict: true }).transform, [bedrockRedactedThinkingStream]));
    expect(contentBlocksOf(strict)).toEqual([]);
    expect(textOf(strict)).toBe('Your order ships on Tuesday.');
  });

  const start = frames([{ messageStart: { role: 'assistant' } }, { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hello' } } }]);
  const finishEvents: ConverseStreamEvent[] = [
    { contentBlockStop: { contentBlockIndex: 0 } },
    { messageStop: { stopReason: 'end_turn' } },
    { metadata: { usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 }, metrics: { latencyMs: 90 } } },
  ];
  const finish = frames(finishEvents);

  for (const [exception, status, type] of [
    ['throttlingException', 429, 'rate_limit_error'],
    ['validationException', 400, 'invalid_request_error'],
    ['modelStreamErrorException', 502, 'provider_error'],
    ['internalServerException', 500, 'server_error'],
    ['serviceUnavailableException', 503, 'server_error'],
  ] as const) {
    it(`ends the stream with an error event for a ${exception} frame (${status})`, async () => {
      const bytes = Buffer.concat([start, exceptionFrame(exception, { message: `boom: ${exception}` }), finish]);
      const chunks = chunksOf(await runTransform(transformFor().transform, [bytes]));
      expect(chunks[1].choices[0].delta.content).toBe('Hello');
      expect(chunks.at(-2)).toEqual({ error: { message: `boom: ${exception}`, type, param: null, code: exception, provider: 'bedrock' } });
      expect(chunks.at(-1)).toBe('[DONE]');
      expect(chunks.filter((chunk) => chunk !== '[DONE]' && chunk.choices?.[0]?.finish_reason)).toHaveLength(0);
    });
  }

  it("adds the model's own message of a modelStreamErrorException to the error event", async () => {
    const exception = exceptionFrame('modelStreamErrorException', {
      message: 'The model stopped streaming',
      originalStatusCode: 500,
      originalMessage: 'order lookup context was too long',
    });
    const chunks = chunksOf(await runTransform(transformFor().transform, [start, exception]));
    expect(chunks.at(-2)).toEqual({
      error: {
        message: 'The model stopped streaming: order lookup context was too long',
        type: 'provider_error',
        param: null,
        code: 'modelStreamErrorException',
        provider: 'bedrock',
      },
    });
    expect(chunks.at(-1)).toBe('[DONE]');
  });

  it('ends the stream with an error event for an event-stream error frame', async () => {
    const chunks = chunksOf(await runTransform(transformFor().transform, [start, errorFrame('InternalFailure', 'The stream broke off upstream.'), finish]));
    expect(textOf(chunks)).toBe('Hello');
    expect(chunks.at(-2).error).toMatchObject({ message: 'The stream broke off upstream.', code: 'InternalFailure', provider: 'bedrock' });
    expect(chunks.at(-1)).toBe('[DONE]');
  });

  it('turns a bad message CRC into an error event and decodes nothing after it', async () => {
    const bad = eventFrame({ contentBlockDelta: { contentBlockIndex: 0, delta: { text: ' world' } } });
    bad[bad.length - 6] ^= 0x01;
    const chunks = chunksOf(await runTransform(transformFor().transform, [start, bad, finish]));
    expect(textOf(chunks)).toBe('Hello');
    expect(chunks.at(-2).error).toMatchObject({
      code: 'provider_stream_error',
      provider: 'bedrock',
      message: expect.stringContaining('Message checksum mismatch'),
    });
    expect(chunks.at(-1)).toBe('[DONE]');
  });

  it('reports a stream that ends before messageStop, mid-frame or between frames', async () => {
    const cut = chunksOf(await runTransform(transformFor().transform, [start, eventFrame(finishEvents[0]).subarray(0, 20)]));
    expect(cut.at(-2).error.message).toMatch(/ended before messageStop, inside a frame/);
    const early = chunksOf(await runTransform(transformFor().transform, [start]));
    expect(early.at(-2).error).toMatchObject({ code: 'provider_stream_error', message: 'The Bedrock stream ended before messageStop.' });
  });

  it('streams the forced response_format tool as content with finish_reason stop', async () => {
    const bytes = frames([
      { messageStart: { role: 'assistant' } },
      { contentBlockStart: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_x', name: 'answer' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { toolUse: { input: '{"ok":' } } } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { toolUse: { input: 'true}' } } } },
      { messageStop: { stopReason: 'tool_use' } },
    ]);
    const chunks = chunksOf(await runTransform(transformFor({ responseTool: 'answer' }).transform, [bytes]));
    expect(textOf(chunks)).toBe('{"ok":true}');
    expect(chunks.some((chunk) => chunk.choices?.[0]?.delta?.tool_calls)).toBe(false);
    expect(chunks.find((chunk) => chunk.choices?.[0]?.finish_reason).choices[0].finish_reason).toBe('stop');
  });

  it('measures stream translation throughput and added time to first chunk', async () => {
    const bytes = bedrockToolUseStream;
    const frameCount = bedrockToolUseEvents.length;
    // messageStart and the first text delta, so the first chunk can go out before the rest arrives.
    const firstWrite = bedrockToolUseFrames[0].length + bedrockToolUseFrames[1].length;
    const runs = 2000;
    let outputChunks = 0;
    let firstChunkMs = 0;
    const started = performance.now();
    for (let run = 0; run < runs; run++) {
      const { transform } = transformFor();
      let first = 0;
      const t0 = performance.now();
      transform.on('data', (chunk: Buffer) => {
        if (!first) first = performance.now() - t0;
        outputChunks += chunk.toString('utf8').split('\n\n').length - 1;
      });
      transform.write(bytes.subarray(0, firstWrite));
      transform.end(bytes.subarray(firstWrite));
      await once(transform, 'end');
      firstChunkMs += first;
    }
    const seconds = (performance.now() - started) / 1000;
    const chunksPerSecond = Math.round(outputChunks / seconds);
    const framesPerSecond = Math.round((frameCount * runs) / seconds);
    console.log(
      `bedrock stream: ${chunksPerSecond} OpenAI chunks/s (${framesPerSecond} Bedrock frames/s) over ${runs} replays; mean time to first chunk ${((firstChunkMs / runs) * 1000).toFixed(1)} µs`,
    );
    expect(chunksPerSecond).toBeGreaterThan(5_000);
  });
});
