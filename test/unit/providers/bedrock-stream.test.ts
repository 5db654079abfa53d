import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Transform } from 'node:stream';
import { EventStreamCodec, Int64, type MessageHeaderValue } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { describe, expect, it } from 'vitest';
import { eventStreamDecoder, type EventStreamHeaders, type EventStreamItem } from '../../../lib/providers/bedrock/event-stream';
import { converseStreamTransform } from '../../../lib/providers/bedrock/stream';
import { encodeFrame, type FakeStreamFrame } from '../../support/fakes/bedrock';
import { readFixtureBytes, readFixtureJson } from '../../support/fixtures';
import { parseSse } from '../../support/sse';

const derived = 'bedrock-converse-stream-tool-use.eventstream';
const derivedEvents = 'bedrock-converse-stream-tool-use.events.json';
type EventsFixture = Array<Record<string, Record<string, unknown>>>;

interface VectorHeader {
  name: string;
  type: EventStreamHeaders[string]['type'];
  value: string | number | boolean;
}
interface Vectors {
  positive: Array<{ name: string; headers: VectorHeader[]; payload: string; encoded: string }>;
  negative: Array<{ name: string; encoded: string; error: string }>;
}

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

function decodeAll(pieces: Buffer[]): EventStreamItem[] {
  const decoder = eventStreamDecoder();
  return [...pieces.flatMap((piece) => decoder.push(piece)), ...decoder.end()];
}

/** A decoded header as the vectors file writes it: binary as base64, long and timestamp as numbers. */
function vectorForm(headers: EventStreamHeaders): VectorHeader[] {
  return Object.entries(headers).map(([name, header]) => {
    switch (header.type) {
      case 'long':
        return { name, type: header.type, value: Number(header.value.valueOf()) };
      case 'binary':
        return { name, type: header.type, value: Buffer.from(header.value).toString('base64') };
      case 'timestamp':
        return { name, type: header.type, value: header.value.getTime() };
      default:
        return { name, type: header.type, value: header.value };
    }
  });
}

/** The vectors file's header in the form `@smithy/eventstream-codec` encodes. */
function smithyForm(header: VectorHeader): MessageHeaderValue {
  switch (header.type) {
    case 'long':
      return { type: 'long', value: Int64.fromNumber(header.value as number) };
    case 'binary':
      return { type: 'binary', value: Buffer.from(header.value as string, 'base64') };
    case 'timestamp':
      return { type: 'timestamp', value: new Date(header.value as number) };
    default:
      return { type: header.type, value: header.value } as MessageHeaderValue;
  }
}

const smithyCodec = new EventStreamCodec(toUtf8, fromUtf8);

/** The tool-use events encoded as Bedrock frames them: event type, JSON content type, event message type. */
function encodeEvents(events: EventsFixture): Buffer {
  return Buffer.concat(
    events.map((event) => {
      const [type, payload] = Object.entries(event)[0];
      const headers: Record<string, MessageHeaderValue> = {
        ':event-type': { type: 'string', value: type },
        ':content-type': { type: 'string', value: 'application/json' },
        ':message-type': { type: 'string', value: 'event' },
      };
      return Buffer.from(smithyCodec.encode({ headers, body: fromUtf8(JSON.stringify(payload)) }));
    }),
  );
}

/** The byte length of each frame in an event stream, read from the frames' prelude. */
function frameLengths(bytes: Buffer): number[] {
  const lengths: number[] = [];
  for (let offset = 0; offset < bytes.length; offset += lengths.at(-1)!) lengths.push(bytes.readUInt32BE(offset));
  return lengths;
}

describe('AWS event-stream decoder', () => {
  const vectors = readFixtureJson<Vectors>('aws-eventstream-vectors.json');

  it('has vectors for every header type, and for corrupted preludes and messages', () => {
    const types = new Set(vectors.positive.flatMap((vector) => vector.headers.map((header) => header.type)));
    expect([...types].sort()).toEqual(['binary', 'boolean', 'byte', 'integer', 'long', 'short', 'string', 'timestamp', 'uuid']);
    expect(new Set(vectors.negative.map((vector) => vector.error))).toEqual(new Set(['Prelude checksum mismatch', 'Message checksum mismatch']));
  });

  for (const vector of vectors.positive) {
    it(`decodes the vector ${vector.name}, whole and byte by byte`, () => {
      const bytes = Buffer.from(vector.encoded, 'hex');
      // The vectors are what the AWS SDK's own encoder writes for these headers and payload.
      const headers = Object.fromEntries(vector.headers.map((header) => [header.name, smithyForm(header)]));
      expect(Buffer.from(smithyCodec.encode({ headers, body: fromUtf8(vector.payload) })).toString('hex')).toBe(vector.encoded);
      expect(bytes.readUInt32BE(0)).toBe(bytes.length);
      for (const pieces of [[bytes], [...bytes].map((byte) => Buffer.from([byte]))]) {
        const items = decodeAll(pieces);
        expect(items).toHaveLength(2);
        const [message, end] = items;
        if (message.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(message)}`);
        expect(vectorForm(message.headers)).toEqual(vector.headers);
        expect(message.payload.toString('utf8')).toBe(vector.payload);
        expect(end).toEqual({ kind: 'end', pendingBytes: 0 });
      }
    });
  }

  it('reads the smallest frame: 16 bytes, no headers, no payload', () => {
    const empty = Buffer.from(vectors.positive.find((vector) => vector.name === 'empty_message')!.encoded, 'hex');
    expect(empty.length).toBe(16);
    expect(decodeAll([empty])).toEqual([
      { kind: 'message', headers: {}, payload: Buffer.alloc(0) },
      { kind: 'end', pendingBytes: 0 },
    ]);
  });

  for (const vector of vectors.negative) {
    it(`rejects the vector ${vector.name} with "${vector.error}"`, () => {
      const bytes = Buffer.from(vector.encoded, 'hex');
      for (const pieces of [[bytes], [...bytes].map((byte) => Buffer.from([byte]))]) {
        expect(decodeAll(pieces)).toEqual([{ kind: 'corrupt', message: vector.error }]);
      }
    });
  }

  it('holds the ConverseStream fixture as the AWS SDK encodes its events', () => {
    expect(encodeEvents(readFixtureJson<EventsFixture>(derivedEvents)).equals(readFixtureBytes(derived))).toBe(true);
  });

  it('decodes the ConverseStream fixture whole, byte by byte and in random splits, matching the decoded events', () => {
    const bytes = readFixtureBytes(derived);
    const events = readFixtureJson<EventsFixture>(derivedEvents);
    expect(events).toHaveLength(14);
    const expected = events.map((event) => {
      const [type, payload] = Object.entries(event)[0];
      return { type, payload };
    });
    const splits = [[bytes], [...bytes].map((byte) => Buffer.from([byte]))];
    const next = random(42);
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
  });

  it('reports a frame cut off at the end of the stream', () => {
    const bytes = readFixtureBytes(derived);
    const [first, second] = frameLengths(bytes);
    // messageStart is 118 bytes, the first text delta 164 (it carries a "p" field).
    expect([first, second]).toEqual([118, 164]);
    const items = decodeAll([bytes.subarray(0, first + 80)]);
    expect(items.map((item) => item.kind)).toEqual(['message', 'end']);
    expect(items.at(-1)).toEqual({ kind: 'end', pendingBytes: 80 });
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

function frames(list: FakeStreamFrame[]): Buffer {
  return Buffer.concat(list.map(encodeFrame));
}

describe('ConverseStream → OpenAI chunks', () => {
  it('maps the tool-use stream field by field, however the bytes are split', async () => {
    const bytes = readFixtureBytes(derived);
    const whole = transformFor();
    const chunks = chunksOf(await runTransform(whole.transform, [bytes]));
    expect(chunks[0]).toMatchObject({
      object: 'chat.completion.chunk',
      model: 'anthropic.claude-3-5-sonnet-20240620-v1:0',
      choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }],
    });
    expect(chunks[0].id).toMatch(/^chatcmpl-/);
    const text = chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Let me check the forecast for Lyon.');
    const calls = chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'tooluse_Qm3vX8kTr2NwZ5bYc7LdHa', type: 'function', function: { name: 'forecast', arguments: '' } });
    expect(calls.slice(1).every((call: any) => call.index === 0 && call.id === undefined)).toBe(true);
    expect(calls.map((call: any) => call.function.arguments).join('')).toBe('{"city": "Lyon", "days": 2}');
    const finish = chunks.filter((chunk) => chunk.choices?.[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 402, completion_tokens: 57, total_tokens: 459 } });
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(whole.usages).toEqual([{ prompt_tokens: 402, completion_tokens: 57, total_tokens: 459 }]);
    expect(new Set(chunks.slice(0, -1).map((chunk) => chunk.id)).size).toBe(1);

    const byteByByte = chunksOf(
      await runTransform(
        transformFor().transform,
        [...bytes].map((byte) => Buffer.from([byte])),
      ),
    );
    expect(stable(byteByByte)).toEqual(stable(chunks));
    const next = random(7);
    for (let trial = 0; trial < 20; trial++) {
      expect(stable(chunksOf(await runTransform(transformFor().transform, splitRandomly(bytes, next))))).toEqual(stable(chunks));
    }
  });

  it('sends no usage chunk when the client did not ask, but still reports usage', async () => {
    const { transform, usages } = transformFor({ includeUsage: false });
    const chunks = chunksOf(await runTransform(transform, [readFixtureBytes(derived)]));
    expect(chunks.some((chunk) => chunk !== '[DONE]' && chunk.usage)).toBe(false);
    expect(usages).toHaveLength(1);
  });

  it('maps a thinking stream to content_blocks only when strict API compliance is off', async () => {
    const events = readFixtureJson<EventsFixture>('bedrock-converse-stream-thinking-tool-use.events.json');
    const bytes = frames(
      events.map((event) => {
        const [type, payload] = Object.entries(event)[0];
        return { event: type, payload };
      }),
    );
    const loose = chunksOf(await runTransform(transformFor({ strict: false }).transform, [bytes]));
    const thinking = loose.flatMap((chunk) => chunk.choices?.[0]?.delta?.content_blocks ?? []);
    expect(thinking[0]).toEqual({ index: 0, type: 'thinking', thinking: 'The user wants the' });
    expect(
      thinking
        .filter((block: any) => block.thinking)
        .map((block: any) => block.thinking)
        .join(''),
    ).toBe('The user wants the weather in Porto. The weather tool takes a city, and Porto is given, so call it.');
    expect(thinking.at(-1)).toEqual({ index: 0, type: 'thinking', signature: 'c2lnbmVkLWJ5LXRoZS1maXh0dXJl' });
    const calls = loose.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, id: 'tooluse_Lr6pW2nDk9QxT4vBm8ZcJe', function: { name: 'weather' } });
    expect(JSON.parse(calls.map((call: any) => call.function.arguments).join(''))).toEqual({ city: 'Porto' });

    const strict = chunksOf(await runTransform(transformFor({ strict: true }).transform, [bytes]));
    expect(strict.some((chunk) => chunk !== '[DONE]' && chunk.choices?.[0]?.delta?.content_blocks)).toBe(false);
    expect(strict.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? [])).toHaveLength(calls.length);
  });

  const start: FakeStreamFrame[] = [
    { event: 'messageStart', payload: { role: 'assistant' } },
    { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: 'Hello' } } },
  ];
  const finish: FakeStreamFrame[] = [
    { event: 'contentBlockStop', payload: { contentBlockIndex: 0 } },
    { event: 'messageStop', payload: { stopReason: 'end_turn' } },
    { event: 'metadata', payload: { usage: { inputTokens: 3, outputTokens: 1, totalTokens: 4 } } },
  ];

  for (const [exception, status, type] of [
    ['throttlingException', 429, 'rate_limit_error'],
    ['validationException', 400, 'invalid_request_error'],
    ['modelStreamErrorException', 502, 'provider_error'],
    ['internalServerException', 500, 'server_error'],
    ['serviceUnavailableException', 503, 'server_error'],
  ] as const) {
    it(`ends the stream with an error event for a ${exception} frame (${status})`, async () => {
      const bytes = frames([...start, { exception, payload: { message: `boom: ${exception}` } }, ...finish]);
      const chunks = chunksOf(await runTransform(transformFor().transform, [bytes]));
      expect(chunks[1].choices[0].delta.content).toBe('Hello');
      expect(chunks.at(-2)).toEqual({ error: { message: `boom: ${exception}`, type, param: null, code: exception, provider: 'bedrock' } });
      expect(chunks.at(-1)).toBe('[DONE]');
      expect(chunks.filter((chunk) => chunk !== '[DONE]' && chunk.choices?.[0]?.finish_reason)).toHaveLength(0);
    });
  }

  it('turns a bad message CRC into an error event and decodes nothing after it', async () => {
    const good = frames(start);
    const bad = encodeFrame({ event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { text: ' world' } } });
    bad[bad.length - 6] ^= 0x01;
    const chunks = chunksOf(await runTransform(transformFor().transform, [good, bad, frames(finish)]));
    expect(chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('')).toBe('Hello');
    expect(chunks.at(-2).error).toMatchObject({
      code: 'provider_stream_error',
      provider: 'bedrock',
      message: expect.stringContaining('Message checksum mismatch'),
    });
    expect(chunks.at(-1)).toBe('[DONE]');
  });

  it('reports a stream that ends before messageStop, mid-frame or between frames', async () => {
    const cut = chunksOf(await runTransform(transformFor().transform, [frames(start), encodeFrame(finish[0]).subarray(0, 20)]));
    expect(cut.at(-2).error.message).toMatch(/ended before messageStop, inside a frame/);
    const early = chunksOf(await runTransform(transformFor().transform, [frames(start)]));
    expect(early.at(-2).error).toMatchObject({ code: 'provider_stream_error', message: 'The Bedrock stream ended before messageStop.' });
  });

  it('streams the forced response_format tool as content with finish_reason stop', async () => {
    const bytes = frames([
      { event: 'messageStart', payload: { role: 'assistant' } },
      { event: 'contentBlockStart', payload: { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_x', name: 'answer' } } } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input: '{"ok":' } } } },
      { event: 'contentBlockDelta', payload: { contentBlockIndex: 0, delta: { toolUse: { input: 'true}' } } } },
      { event: 'messageStop', payload: { stopReason: 'tool_use' } },
    ]);
    const chunks = chunksOf(await runTransform(transformFor({ responseTool: 'answer' }).transform, [bytes]));
    expect(chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('')).toBe('{"ok":true}');
    expect(chunks.some((chunk) => chunk.choices?.[0]?.delta?.tool_calls)).toBe(false);
    expect(chunks.find((chunk) => chunk.choices?.[0]?.finish_reason).choices[0].finish_reason).toBe('stop');
  });

  it('measures stream translation throughput and added time to first chunk', async () => {
    const bytes = readFixtureBytes(derived);
    const frameCount = readFixtureJson<EventsFixture>(derivedEvents).length;
    const [startFrame, firstDelta] = frameLengths(bytes);
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
      transform.write(bytes.subarray(0, startFrame + firstDelta)); // messageStart + the first text delta
      transform.end(bytes.subarray(startFrame + firstDelta));
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
