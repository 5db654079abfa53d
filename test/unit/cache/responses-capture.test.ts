/*
 * Capturing a streamed Responses answer for the cache: the bytes are relayed unchanged, and the
 * answer is the response of the last event (`response.completed` or `response.incomplete`); a
 * stream that fails, breaks or ends without that event has none.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { FinalResponseReader } from '../../../lib/cache/responses-capture';
import { captureStream } from '../../../lib/cache/stream-capture';
import { chatChunk, chatDone, chatError, chatUsage, translated } from '../../support/responses-streams';

type Json = Record<string, unknown>;

/** A Readable that hands out the given pieces, one per read, as a socket would. */
function upstreamOf(pieces: Array<string | Buffer>): Readable {
  const queue = pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece));
  return new Readable({
    read() {
      this.push(queue.length > 0 ? queue.shift()! : null);
    },
  });
}

/** Reads the relayed stream to its end (or failure) and settles the capture. */
async function run(upstream: Readable, limit?: number): Promise<{ relayed: Buffer[]; answer: Json | undefined; error?: Error }> {
  const { stream, answer } = captureStream('responses', upstream, { limit });
  const relayed: Buffer[] = [];
  const error = await new Promise<Error | undefined>((resolve) => {
    stream.on('data', (chunk: Buffer) => relayed.push(chunk));
    stream.on('end', () => resolve(undefined));
    stream.on('error', resolve);
  });
  return { relayed, answer: await answer, error };
}

/** The response the reader finds in these bytes, pushed in the given pieces. */
function readerAnswer(pieces: Buffer[], limit = 8 * 1024 * 1024): Json | undefined {
  const reader = new FinalResponseReader(limit);
  for (const piece of pieces) reader.push(piece);
  return reader.end();
}

const textAnswer = [chatChunk({ role: 'assistant', content: '' }), chatChunk({ content: 'Grüße 😀 ' }), chatChunk({ content: '日本\n— done' })];
const completedStream = () => translated([...textAnswer, chatChunk({}, 'stop'), chatUsage, chatDone]);

describe('captureStream for responses', () => {
  it('relays every chunk unchanged and answers with the response of response.completed', async () => {
    const { wire, final } = await completedStream();
    const pieces = wire.split(/(?<=\n\n)/).map((frame) => Buffer.from(frame));
    const { relayed, answer, error } = await run(upstreamOf(pieces));
    expect(error).toBeUndefined();
    expect(relayed).toEqual(pieces);
    expect(answer).toEqual(final);
    expect(answer).toMatchObject({ status: 'completed', output_text: 'Grüße 😀 日本\n— done', usage: { input_tokens: 12, output_tokens: 7 } });
  });

  it('answers with the response of response.incomplete', async () => {
    const { wire, final } = await translated([...textAnswer, chatChunk({}, 'length'), chatDone]);
    expect(wire).toContain('event: response.incomplete\n');
    const { answer } = await run(upstreamOf([wire]));
    expect(answer).toEqual(final);
    expect(answer).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
  });

  it('has no answer for a stream that failed: error, then response.failed', async () => {
    const { wire } = await translated([...textAnswer, chatError, chatDone]);
    expect(wire).toContain('event: error\n');
    expect(wire).toContain('event: response.failed\n');
    const { relayed, answer } = await run(upstreamOf([wire]));
    expect(Buffer.concat(relayed).toString()).toBe(wire);
    expect(answer).toBeUndefined();
    // An error event alone is enough, whatever follows it.
    const { wire: completed } = await completedStream();
    const errorEvent = 'event: error\ndata: {"type":"error","sequence_number":3,"code":"server_error","message":"x","param":null}\n\n';
    const cut = completed.indexOf('event: response.output_item.added');
    expect((await run(upstreamOf([completed.slice(0, cut), errorEvent, completed.slice(cut)]))).answer).toBeUndefined();
  });

  it('has no answer for a stream that ends without its last event', async () => {
    const { wire } = await completedStream();
    const withoutLast = wire.slice(0, wire.indexOf('event: response.completed'));
    const { relayed, answer, error } = await run(upstreamOf([withoutLast]));
    expect([Buffer.concat(relayed).toString(), error]).toEqual([withoutLast, undefined]);
    expect(answer).toBeUndefined();
    // Nor for one cut inside its last event.
    expect((await run(upstreamOf([wire.slice(0, -40)]))).answer).toBeUndefined();
  });

  it('destroys the relayed stream with the upstream error, and has no answer', async () => {
    const { wire } = await completedStream();
    const upstream = new Readable({ read() {} });
    const { stream, answer } = captureStream('responses', upstream);
    const failed = new Promise<Error>((resolve) => stream.on('error', resolve));
    stream.resume();
    upstream.push(wire.slice(0, wire.length / 2));
    upstream.destroy(new Error('socket hang up'));
    expect((await failed).message).toBe('socket hang up');
    expect(await answer).toBeUndefined();
  });

  it('reads an OpenAI stream without event lines, with keep-alives, and data spaced as any JSON writer spaces it', async () => {
    const { wire, final } = await completedStream();
    const frames = wire.split('\n\n').filter(Boolean);
    const dataOnly = frames.map((frame) => `${frame.split('\n')[1]}\n\n`);
    expect((await run(upstreamOf([': keep-alive\n\n', ...dataOnly]))).answer).toEqual(final);
    const spaced = frames.map((frame) => `data: ${JSON.stringify(JSON.parse(frame.split('\n')[1]!.slice(6)), null, 1).replace(/\n/g, '')}\n\n`);
    expect((await run(upstreamOf(spaced))).answer).toEqual(final);
    // The event line may come after the data, and events after the last one change nothing.
    const swapped = frames.map((frame) => `${frame.split('\n').reverse().join('\n')}\n\n`);
    expect((await run(upstreamOf([...swapped, ...frames.slice(2, 4).map((frame) => `${frame}\n\n`)]))).answer).toEqual(final);
  });

  it('finds the same answer however the bytes are cut, inside characters and CRLF line ends', async () => {
    const { wire, final } = await completedStream();
    for (const text of [wire, wire.replace(/\n/g, '\r\n')]) {
      const bytes = Buffer.from(text);
      for (let cut = 1; cut < bytes.length; cut++) expect(readerAnswer([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(final);
      expect(readerAnswer([...bytes].map((byte) => Buffer.from([byte])))).toEqual(final);
    }
    // Through the stream too, at a few cuts.
    const bytes = Buffer.from(wire);
    for (const cut of [1, 7, bytes.length >> 1, bytes.length - 3]) {
      expect((await run(upstreamOf([bytes.subarray(0, cut), bytes.subarray(cut)]))).answer).toEqual(final);
    }
  });

  it('keeps relaying but gives up on the answer past the size limit', async () => {
    const long = 'y'.repeat(64 * 1024);
    const { wire, final } = await translated([chatChunk({ role: 'assistant', content: '' }), chatChunk({ content: long }), chatChunk({}, 'stop'), chatDone]);
    expect((await run(upstreamOf([wire]), 256 * 1024)).answer).toEqual(final);
    // The last event holds the text twice (in its part and in output_text): a limit below that is
    // no answer, though every other event fits.
    const { relayed, answer } = await run(upstreamOf([wire]), 100 * 1024);
    expect(Buffer.concat(relayed).toString()).toBe(wire);
    expect(answer).toBeUndefined();
    // An event that never ends is let go of as it grows.
    const endless = new FinalResponseReader(16_000);
    endless.push(Buffer.from('event: response.completed\ndata: {"type":"response.completed","response":{"output_text":"'));
    for (let piece = 0; piece < 40; piece++) endless.push(Buffer.from('z'.repeat(1000)));
    endless.push(Buffer.from('"}}\n\n'));
    expect(endless.end()).toBeUndefined();
  });
});
