import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Transform } from 'node:stream';
import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { type EventStreamHeaders, type EventStreamItem, eventStreamDecoder } from '../../../lib/providers/bedrock/event-stream';
import { converseStreamTransform } from '../../../lib/providers/bedrock/stream';
import {
  encodeMessage,
  encodeStream,
  errorFrame,
  eventFrame,
  eventParts,
  exceptionFrame,
  type StreamEvent,
  streamFrames,
} from '../../support/eventstream-frames';
import { readRecording, readRecordingBytes, readRecordingJson, recordingsDir, recordingsPresent } from '../../support/recordings';
import { parseSse } from '../../support/sse';

// Recordings beside the repository (SOURCES.md there says where each comes from). Only their names are
// here: they are read inside the tests, so a clone without them collects and skips those tests.
const vectorDir = 'aws_eventstream_test_vectors';
const toolUseEventsRecording = 'bedrock_converse_stream_tool_use_events.json';
/** The binary encoding of the tool-use events, made beside the recordings (no live binary capture is public). */
const toolUseStreamRecording = 'bedrock_converse_stream_tool_use.DERIVED.eventstream';
const thinkingEventsRecording = 'bedrock_converse_stream_thinking_tool_use_events.json';
/** Named here rather than listed from the directory, so nothing is read unless the recordings are there. */
const officialPositiveVectors = ['all_headers', 'empty_message', 'int32_header', 'payload_no_headers', 'payload_one_str_header'];
const officialNegativeVectors = ['corrupted_header_len', 'corrupted_headers', 'corrupted_length', 'corrupted_payload'];

/** What the recorded turns must become. */
const recordedToolUse = {
  firstFrameLengths: [118, 162],
  text: "Certainly! I can help you find out the weather in Berlin. To get this information, I'll use the weather tool available to me. Let me fetch that data for you.",
  toolCall: { id: 'tooluse_pLGRAmK7TNKoZQ_rntVN_Q', name: 'weather_tool' },
  arguments: '{"location": "Berlin"}',
  usage: { prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 },
};
const recordedThinking = {
  opening: 'The user is asking about the weather',
  reasoning: /^The user is asking about the weather in Paris\..* function call\.$/s,
  signature: '...',
  toolCall: { id: 'tooluse_1gPhO4A1RNWgzKbt1PXWLg', name: 'weather' },
  input: { city: 'Paris' },
};

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

/** A vector's decoded form as the official set writes it; the CRCs are signed 32-bit integers there. */
interface OfficialDecodedVector {
  total_length: number;
  headers_length: number;
  prelude_crc: number;
  headers: Array<{ name: string; type: number; value: unknown }>;
  payload: string;
  message_crc: number;
}

const officialVector = (name: string) => readRecordingBytes(`${vectorDir}/${name}`);

describe.skipIf(!recordingsPresent)('AWS event-stream decoder: official vectors and the recorded tool-use stream', () => {
  for (const name of officialPositiveVectors) {
    it(`decodes the official vector positive__${name}, whole and split`, () => {
      const bytes = officialVector(`encoded__positive__${name}`);
      const expected = readRecordingJson<OfficialDecodedVector>(`${vectorDir}/decoded__positive__${name}`);
      const payload = Buffer.from(expected.payload, 'base64');
      const layout = expected.headers.map((header) => ({ name: header.name, type: header.type }));
      const headersLength = bytes.readUInt32BE(4);
      expect(bytes.length).toBe(expected.total_length);
      expect(bytes.readUInt32BE(0)).toBe(bytes.length);
      expect(headersLength).toBe(expected.headers_length);
      expect(bytes.length).toBe(16 + headersLength + payload.length);
      expect(bytes.readUInt32BE(8)).toBe(crc32(bytes.subarray(0, 8)));
      expect(bytes.readInt32BE(8)).toBe(expected.prelude_crc);
      expect(bytes.readUInt32BE(bytes.length - 4)).toBe(crc32(bytes.subarray(0, -4)));
      expect(bytes.readInt32BE(bytes.length - 4)).toBe(expected.message_crc);
      expect(headerLayout(bytes.subarray(12, 12 + headersLength))).toEqual(layout);
      expect(bytes.subarray(12 + headersLength, -4).equals(payload)).toBe(true);
      for (const pieces of splitsOf(bytes)) {
        const items = decodeAll(pieces);
        expect(items).toHaveLength(2);
        const [decoded, end] = items;
        if (decoded.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(decoded)}`);
        expect(vectorForm(decoded.headers)).toEqual(expected.headers);
        expect(decoded.payload.equals(payload)).toBe(true);
        expect(end).toEqual({ kind: 'end', pendingBytes: 0 });
      }
    });
  }

  for (const name of officialNegativeVectors) {
    it(`rejects the official vector negative__${name} with the checksum error its decoded form names`, () => {
      const bytes = officialVector(`encoded__negative__${name}`);
      const error = readRecording(`${vectorDir}/decoded__negative__${name}`).trim();
      for (const pieces of [[bytes], byteByByte(bytes)]) {
        expect(decodeAll(pieces)).toEqual([{ kind: 'corrupt', message: error }]);
      }
    });
  }

  it('knows every official vector there is', () => {
    const names = readdirSync(`${recordingsDir}/${vectorDir}`);
    const named = (prefix: string) =>
      names
        .filter((file) => file.startsWith(prefix))
        .map((file) => file.slice(prefix.length))
        .sort();
    expect(named('encoded__positive__')).toEqual([...officialPositiveVectors].sort());
    expect(named('encoded__negative__')).toEqual([...officialNegativeVectors].sort());
    expect(named('decoded__positive__')).toEqual([...officialPositiveVectors].sort());
    expect(named('decoded__negative__')).toEqual([...officialNegativeVectors].sort());
  });

  it('covers every header value type the framing defines', () => {
    const types = officialPositiveVectors.flatMap((name) =>
      readRecordingJson<OfficialDecodedVector>(`${vectorDir}/decoded__positive__${name}`).headers.map((header) => header.type),
    );
    expect(new Set(types)).toEqual(new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]));
  });

  it('decodes nothing after a corrupt frame, even good frames', () => {
    const good = officialVector('encoded__positive__payload_one_str_header');
    const corrupt = officialVector('encoded__negative__corrupted_payload');
    expect(decodeAll([good, corrupt, good]).map((item) => item.kind)).toEqual(['message', 'corrupt']);
  });

  it('decodes the tool-use stream whole, byte by byte and in random splits, matching the events it was encoded from', () => {
    const events = readRecordingJson<StreamEvent[]>(toolUseEventsRecording);
    expectDecodedEvents(readRecordingBytes(toolUseStreamRecording), events.map(eventParts), 42);
  });

  it('reports a frame cut off at the end of the stream, inside its prelude or after it', () => {
    const bytes = readRecordingBytes(toolUseStreamRecording);
    const [first, second] = recordedToolUse.firstFrameLengths;
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
  const messageStart = () => eventFrame('messageStart', { role: 'assistant' });

  it('decodes nothing after a frame whose message CRC fails, even good frames', () => {
    const good = messageStart();
    const corrupt = Buffer.from(good);
    corrupt[corrupt.length - 2] ^= 0x01;
    for (const pieces of [[good, corrupt, good], byteByByte(Buffer.concat([good, corrupt, good]))]) {
      expect(decodeAll(pieces)).toEqual([expect.objectContaining({ kind: 'message' }), { kind: 'corrupt', message: 'Message checksum mismatch' }]);
    }
  });

  it('reports a bad prelude CRC as soon as the prelude is in, without waiting for a length it cannot trust', () => {
    const frame = messageStart();
    frame[9] ^= 0x40;
    const decoder = eventStreamDecoder();
    expect(decoder.push(frame.subarray(0, 11))).toEqual([]);
    expect(decoder.push(frame.subarray(11, 12))).toEqual([{ kind: 'corrupt', message: 'Prelude checksum mismatch' }]);
    expect(decoder.push(frame.subarray(12))).toEqual([]);
    expect(decoder.end()).toEqual([]);
  });

  it('rejects lengths no frame can have, even under a matching prelude CRC', () => {
    // A prelude and message CRC that are both right, so only the lengths can be refused.
    const emptyFrame = (totalLength: number, headersLength: number) => {
      const bytes = Buffer.alloc(16);
      bytes.writeUInt32BE(totalLength, 0);
      bytes.writeUInt32BE(headersLength, 4);
      bytes.writeUInt32BE(crc32(bytes.subarray(0, 8)), 8);
      bytes.writeUInt32BE(crc32(bytes.subarray(0, 12)), 12);
      return bytes;
    };
    for (const [total, headers] of [
      [12, 0],
      [20, 8],
    ]) {
      for (const pieces of [[emptyFrame(total, headers)], byteByByte(emptyFrame(total, headers))]) {
        expect(decodeAll(pieces)).toEqual([{ kind: 'corrupt', message: `Invalid frame lengths (total ${total}, headers ${headers})` }]);
      }
    }
  });

  it('decodes a frame of over 1 MiB whole and cut byte by byte across its prelude and message CRC', () => {
    // Bytes no text encoding would produce, so a decoder that treats the payload as text is caught.
    const body = Buffer.alloc(1024 * 1024 + 3);
    for (let index = 0; index < body.length; index++) body[index] = (index * 31 + 7) & 0xff;
    const bytes = encodeMessage({ headers: { ':message-type': { type: 'string', value: 'event' } }, body });
    for (const pieces of splitsOf(bytes)) {
      const items = decodeAll(pieces);
      expect(items).toHaveLength(2);
      const [decoded, end] = items;
      if (decoded.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(decoded)}`);
      expect(decoded.headers).toEqual({ ':message-type': { type: 'string', value: 'event' } });
      expect(decoded.payload.equals(body)).toBe(true);
      expect(end).toEqual({ kind: 'end', pendingBytes: 0 });
    }
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

/**
 * The `"p"` field the live service adds to every event payload so that sizes do not give the content
 * away: a prefix of this alphabet whose length varies from frame to frame.
 */
const paddingAlphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

describe.skipIf(!recordingsPresent)('ConverseStream → OpenAI chunks: recorded transcripts', () => {
  it('maps the tool-use stream field by field, however the bytes are split', async () => {
    const bytes = readRecordingBytes(toolUseStreamRecording);
    const whole = transformFor();
    const chunks = chunksOf(await runTransform(whole.transform, [bytes]));
    expect(chunks[0]).toMatchObject({
      object: 'chat.completion.chunk',
      model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    expect(textOf(chunks)).toBe(recordedToolUse.text);
    const calls = toolCallsOf(chunks);
    const { id, name } = recordedToolUse.toolCall;
    expect(calls[0]).toEqual({ index: 0, id, type: 'function', function: { name, arguments: '' } });
    expect(calls.slice(1).every((call: any) => call.index === 0 && call.id === undefined)).toBe(true);
    expect(calls.map((call: any) => call.function.arguments).join('')).toBe(recordedToolUse.arguments);
    const finish = chunks.filter((chunk) => chunk.choices?.[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-2)).toMatchObject({ choices: [], usage: recordedToolUse.usage });
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(whole.usages).toEqual([recordedToolUse.usage]);
    expect(new Set(chunks.slice(0, -1).map((chunk) => chunk.id)).size).toBe(1);

    await expectSplitInvariant(bytes, chunks, 7);
  });

  it('sends no usage chunk when the client did not ask, but still reports usage', async () => {
    const { transform, usages } = transformFor({ includeUsage: false });
    const chunks = chunksOf(await runTransform(transform, [readRecordingBytes(toolUseStreamRecording)]));
    expect(chunks.some((chunk) => chunk !== '[DONE]' && chunk.usage)).toBe(false);
    expect(usages).toEqual([recordedToolUse.usage]);
  });

  it('ignores the padding field Bedrock adds to every payload', async () => {
    const plainBytes = readRecordingBytes(toolUseStreamRecording);
    const paddedBytes = Buffer.concat(
      readRecordingJson<StreamEvent[]>(toolUseEventsRecording).map((event, index) => {
        const { type, payload } = eventParts(event);
        return eventFrame(type, { ...payload, p: paddingAlphabet.slice(0, 1 + ((index * 7) % paddingAlphabet.length)) });
      }),
    );
    expect(paddedBytes.length).toBeGreaterThan(plainBytes.length);
    const plain = chunksOf(await runTransform(transformFor().transform, [plainBytes]));
    const padded = chunksOf(await runTransform(transformFor().transform, [paddedBytes]));
    expect(stable(padded)).toEqual(stable(plain));
  });

  it('maps the thinking stream to content_blocks only when strict API compliance is off', async () => {
    const events = readRecordingJson<any[]>(thinkingEventsRecording);
    const recordedReasoning = events.map((event) => event.contentBlockDelta?.delta?.reasoningContent?.text ?? '').join('');
    const bytes = encodeStream(events);
    const loose = chunksOf(await runTransform(transformFor({ strict: false }).transform, [bytes]));
    const blocks = contentBlocksOf(loose);
    expect(blocks[0]).toEqual({ index: 0, type: 'thinking', thinking: recordedThinking.opening });
    const reasoning = blocks
      .filter((block: any) => block.thinking)
      .map((block: any) => block.thinking)
      .join('');
    expect(reasoning).toMatch(recordedThinking.reasoning);
    expect(reasoning).toBe(recordedReasoning);
    expect(blocks.at(-1)).toEqual({ index: 0, type: 'thinking', signature: recordedThinking.signature });
    const calls = toolCallsOf(loose);
    expect(calls[0]).toMatchObject({ index: 0, id: recordedThinking.toolCall.id, function: { name: recordedThinking.toolCall.name } });
    expect(JSON.parse(calls.map((call: any) => call.function.arguments).join(''))).toEqual(recordedThinking.input);

    const strict = chunksOf(await runTransform(transformFor({ strict: true }).transform, [bytes]));
    expect(strict.some((chunk) => chunk !== '[DONE]' && chunk.choices?.[0]?.delta?.content_blocks)).toBe(false);
    expect(toolCallsOf(strict)).toHaveLength(calls.length);
  });

  it('measures stream translation throughput and added time to first chunk', async () => {
    const bytes = readRecordingBytes(toolUseStreamRecording);
    const frameCount = readRecordingJson<StreamEvent[]>(toolUseEventsRecording).length;
    // messageStart and the first text delta, so the first chunk can go out before the rest arrives.
    const firstWrite = bytes.readUInt32BE(0) + bytes.readUInt32BE(bytes.readUInt32BE(0));
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

describe('ConverseStream → OpenAI chunks', () => {
  it('maps redacted reasoning to a redacted_thinking block only when strict API compliance is off', async () => {
    // No recording holds redacted reasoning: one such block, then the answer.
    const bytes = encodeStream([
      { messageStart: { role: 'assistant' } },
      { contentBlockDelta: { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: 'AAEC' } } } },
      { contentBlockStop: { contentBlockIndex: 0 } },
      { contentBlockDelta: { contentBlockIndex: 1, delta: { text: 'Answer.' } } },
      { messageStop: { stopReason: 'end_turn' } },
    ]);
    const loose = chunksOf(await runTransform(transformFor({ strict: false }).transform, [bytes]));
    expect(contentBlocksOf(loose)).toEqual([{ index: 0, type: 'redacted_thinking', data: 'AAEC' }]);
    expect(textOf(loose)).toBe('Answer.');
    expect(loose.find((chunk) => chunk.choices?.[0]?.finish_reason).choices[0].finish_reason).toBe('stop');
    const strict = chunksOf(await runTransform(transformFor({ strict: true }).transform, [bytes]));
    expect(contentBlocksOf(strict)).toEqual([]);
    expect(textOf(strict)).toBe('Answer.');
  });

  const start = encodeStream([{ messageStart: { role: 'assistant' } }, { contentBlockDelta: { contentBlockIndex: 0, delta: { text: 'Hello' } } }]);
  const finishFrames = streamFrames([
    { contentBlockStop: { contentBlockIndex: 0 } },
    { messageStop: { stopReason: 'end_turn' } },
    { metadata: { usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 }, metrics: { latencyMs: 90 } } },
  ]);
  const finish = Buffer.concat(finishFrames);

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
    const bad = eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ' world' } });
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
    const cut = chunksOf(await runTransform(transformFor().transform, [start, finishFrames[0].subarray(0, 20)]));
    expect(cut.at(-2).error.message).toMatch(/ended before messageStop, inside a frame/);
    const early = chunksOf(await runTransform(transformFor().transform, [start]));
    expect(early.at(-2).error).toMatchObject({ code: 'provider_stream_error', message: 'The Bedrock stream ended before messageStop.' });
  });

  it('streams the forced response_format tool as content with finish_reason stop', async () => {
    const bytes = encodeStream([
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
});
