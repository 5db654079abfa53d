import { readdirSync } from 'node:fs';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { eventStreamDecoder, type EventStreamHeaders, type EventStreamItem } from '../../../lib/providers/bedrock/event-stream';
import { converseStreamTransform } from '../../../lib/providers/bedrock/stream';
import { encodeFrame, type FakeStreamFrame } from '../../support/fakes/bedrock';
import { fixturesDir, readFixture, readFixtureBytes, readFixtureJson } from '../../support/fixtures';
import { parseSse } from '../../support/sse';

const vectorDir = 'aws_eventstream_test_vectors';
const derived = 'bedrock_converse_stream_tool_use.DERIVED.eventstream';
type EventsFixture = Array<Record<string, Record<string, unknown>>>;

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

describe('AWS event-stream decoder', () => {
  const names = readdirSync(`${fixturesDir}/${vectorDir}`);

  for (const name of names.filter((file) => file.startsWith('encoded__positive__'))) {
    const vector = name.slice('encoded__'.length);
    it(`decodes the official vector ${vector}, whole and byte by byte`, () => {
      const bytes = readFixtureBytes(`${vectorDir}/${name}`);
      const expected = readFixtureJson<{ headers: unknown[]; payload: string; total_length: number }>(`${vectorDir}/decoded__${vector}`);
      expect(bytes.length).toBe(expected.total_length);
      for (const pieces of [[bytes], [...bytes].map((byte) => Buffer.from([byte]))]) {
        const items = decodeAll(pieces);
        expect(items).toHaveLength(2);
        const [message, end] = items;
        if (message.kind !== 'message') throw new Error(`expected a message, got ${JSON.stringify(message)}`);
        expect(vectorForm(message.headers)).toEqual(expected.headers);
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

  it('decodes the derived ConverseStream capture whole, byte by byte and in random splits, matching the decoded events', () => {
    const bytes = readFixtureBytes(derived);
    const events = readFixtureJson<EventsFixture>('bedrock_converse_stream_tool_use_events.json');
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
    // The first frame is 118 bytes long, the second 162: 82 bytes of the second are left over.
    const items = decodeAll([bytes.subarray(0, 200)]);
    expect(items.map((item) => item.kind)).toEqual(['message', 'end']);
    expect(items.at(-1)).toEqual({ kind: 'end', pendingBytes: 82 });
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
  it('maps the recorded tool-use stream field by field, however the bytes are split', async () => {
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
    expect(text).toBe(
      "Certainly! I can help you find out the weather in Berlin. To get this information, I'll use the weather tool available to me. Let me fetch that data for you.",
    );
    const calls = chunks.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: 'tooluse_pLGRAmK7TNKoZQ_rntVN_Q', type: 'function', function: { name: 'weather_tool', arguments: '' } });
    expect(calls.slice(1).every((call: any) => call.index === 0 && call.id === undefined)).toBe(true);
    expect(calls.map((call: any) => call.function.arguments).join('')).toBe('{"location": "Berlin"}');
    const finish = chunks.filter((chunk) => chunk.choices?.[0]?.finish_reason);
    expect(finish).toHaveLength(1);
    expect(finish[0].choices[0]).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    expect(chunks.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 } });
    expect(chunks.at(-1)).toBe('[DONE]');
    expect(whole.usages).toEqual([{ prompt_tokens: 364, completion_tokens: 71, total_tokens: 435 }]);
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

  it('maps the recorded thinking stream to content_blocks only when strict API compliance is off', async () => {
    const events = readFixtureJson<EventsFixture>('bedrock_converse_stream_thinking_tool_use_events.json');
    const bytes = frames(
      events.map((event) => {
        const [type, payload] = Object.entries(event)[0];
        return { event: type, payload };
      }),
    );
    const loose = chunksOf(await runTransform(transformFor({ strict: false }).transform, [bytes]));
    const thinking = loose.flatMap((chunk) => chunk.choices?.[0]?.delta?.content_blocks ?? []);
    expect(thinking[0]).toEqual({ index: 0, type: 'thinking', thinking: 'The user is asking about the weather' });
    expect(
      thinking
        .filter((block: any) => block.thinking)
        .map((block: any) => block.thinking)
        .join(''),
    ).toMatch(/^The user is asking about the weather in Paris\..* function call\.$/s);
    expect(thinking.at(-1)).toEqual({ index: 0, type: 'thinking', signature: '...' });
    const calls = loose.flatMap((chunk) => chunk.choices?.[0]?.delta?.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ index: 0, id: 'tooluse_1gPhO4A1RNWgzKbt1PXWLg', function: { name: 'weather' } });
    expect(JSON.parse(calls.map((call: any) => call.function.arguments).join(''))).toEqual({ city: 'Paris' });

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
    const frameCount = readFixtureJson<EventsFixture>('bedrock_converse_stream_tool_use_events.json').length;
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
      transform.write(bytes.subarray(0, 118 + 162)); // messageStart + the first text delta
      transform.end(bytes.subarray(118 + 162));
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
