import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../lib/core/usage';
import { openAIStreamTransform } from '../../lib/providers/openai-compatible/stream';
import {
  openAITextSample,
  openAITextStreamSample,
  openAIToolCallSample,
  openAIToolCallStreamSample,
  usageEveryChunkSample,
  usageEveryChunkStreamSample,
  usageOnFinishSample,
  usageOnFinishStreamSample,
} from '../fixtures/providers/openai';
import { readRecordingBytes, recordingsPresent } from '../support/recordings';
import { parseSse } from '../support/sse';

async function run(input: Buffer, options: { dropUsageChunk: boolean; finishReasons?: Record<string, string> }, splitEvery = 13) {
  const usages: TokenUsage[] = [];
  const pieces: Buffer[] = [];
  for (let i = 0; i < input.length; i += splitEvery) pieces.push(input.subarray(i, i + splitEvery));
  const transform = openAIStreamTransform({ provider: 'openai', ...options, onUsage: (usage) => usages.push(usage) });
  let out = '';
  for await (const chunk of Readable.from(pieces).pipe(transform)) out += chunk.toString();
  return { out, usage: usages.at(-1) };
}

/** One read per event, as providers write them. */
const readsOf = (stream: Buffer) =>
  stream
    .toString()
    .split(/(?<=\n\n)/)
    .map((text) => Buffer.from(text));

describe('OpenAI stream transform on whole provider streams', () => {
  it('relays a stream event for event and reads its usage', async () => {
    const sent = Buffer.from(openAIToolCallStreamSample);
    const { out, usage } = await run(sent, { dropUsageChunk: false });
    expect(parseSse(out)).toEqual(parseSse(sent.toString()));
    // The role chunk with the call's id and name, ten argument fragments, the finish, the usage, [DONE].
    expect(parseSse(out)).toHaveLength(14);
    expect(usage).toMatchObject({ prompt_tokens: 88, completion_tokens: 21, total_tokens: 109 });
    expect(usage).toMatchObject(openAIToolCallSample.usage);
  });

  it('drops the usage-only chunk the gateway asked for, keeping [DONE] last', async () => {
    // Every chunk before the usage chunk carries `"usage": null`, as OpenAI documents.
    const sent = Buffer.from(openAITextStreamSample);
    expect(parseSse(sent.toString()).filter((event) => event.data.includes('"usage":null'))).toHaveLength(parseSse(sent.toString()).length - 2);
    const { out, usage } = await run(sent, { dropUsageChunk: true });
    const events = parseSse(out);
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(events.slice(0, -1).every((event) => JSON.parse(event.data).choices.length > 0)).toBe(true);
    expect(events.length).toBe(parseSse(sent.toString()).length - 1);
    expect(usage).toMatchObject({ prompt_tokens: 27, completion_tokens: 16, total_tokens: 43, completion_tokens_details: { reasoning_tokens: 0 } });
    expect(usage).toEqual(openAITextSample.usage);
  });

  it('keeps usage carried on content chunks (xAI sends it on every chunk) and takes the last', async () => {
    const sent = Buffer.from(usageEveryChunkStreamSample);
    const { out, usage } = await run(sent, { dropUsageChunk: true });
    expect(parseSse(out)).toEqual(parseSse(sent.toString()));
    const pieces = usageEveryChunkSample.pieces.length;
    expect(usage).toMatchObject({ prompt_tokens: 25, completion_tokens: pieces, total_tokens: 25 + pieces });
    expect(usage?.prompt_tokens_details).toMatchObject({ text_tokens: 25, cached_tokens: 0 });
  });

  it('reads usage from the final content chunk of a Mistral stream', async () => {
    const sent = Buffer.from(usageOnFinishStreamSample);
    const { out, usage } = await run(sent, { dropUsageChunk: true });
    expect(usage).toMatchObject({ prompt_tokens: 19, completion_tokens: 12, total_tokens: 31 });
    expect(usage).toMatchObject(usageOnFinishSample.usage);
    // The usage rides on a chunk with content: nothing is dropped.
    expect(parseSse(out)).toEqual(parseSse(sent.toString()));
  });

  it('relays reads of whole events as the same bytes, and rewrites only the reads that need it', async () => {
    const events = readsOf(Buffer.from(openAITextStreamSample));
    const transform = openAIStreamTransform({ provider: 'openai', dropUsageChunk: true, onUsage: () => undefined });
    const out: Buffer[] = [];
    for await (const chunk of Readable.from(events).pipe(transform)) out.push(Buffer.from(chunk));
    const usageRead = events.findIndex((event) => event.includes('"usage":{') && event.includes('"choices":[]'));
    expect(usageRead).toBe(events.length - 2);
    expect(Buffer.concat(out).equals(Buffer.concat(events.filter((_, index) => index !== usageRead)))).toBe(true);
  });

  it('maps provider finish reasons to OpenAI ones', async () => {
    const input = Buffer.from('data: {"choices":[{"index":0,"delta":{},"finish_reason":"eos"}]}\n\ndata: [DONE]\n\n');
    const { out } = await run(input, { dropUsageChunk: false, finishReasons: { eos: 'stop' } });
    expect(JSON.parse(parseSse(out)[0].data).choices[0].finish_reason).toBe('stop');
  });

  it('ends with [DONE] when the provider closes after its finish reason without one', async () => {
    const input = Buffer.from(
      'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason": "stop"}]}\n\n',
    );
    const { out } = await run(input, { dropUsageChunk: false });
    expect(out).toBe(`${input}data: [DONE]\n\n`);
  });

  it('ends a stream the provider cut before its finish reason with an error event, then [DONE]', async () => {
    for (const input of [
      'data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\n',
      'data: {"id":"x","choices":[{"delta":{"content":"x"\n\ndata: {not json}\n\n',
      '',
    ]) {
      const { out } = await run(Buffer.from(input), { dropUsageChunk: false });
      const events = parseSse(out);
      expect(out.startsWith(input), input).toBe(true);
      expect(events.at(-1)!.data, input).toBe('[DONE]');
      expect(JSON.parse(events.at(-2)!.data).error, input).toMatchObject({
        code: 'provider_stream_error',
        message: expect.stringContaining('openai closed its stream before the answer finished'),
      });
    }
  });

  it('adds nothing to a stream that ended with [DONE]', async () => {
    const input = Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"hi"},"finish_reason":null}]}\n\ndata: [DONE]\n\n');
    const { out } = await run(input, { dropUsageChunk: false });
    expect(out).toBe(input.toString());
  });
});

describe.skipIf(!recordingsPresent)('OpenAI stream transform: recorded transcripts', () => {
  it('relays a recorded stream event for event and reads its usage', async () => {
    const recorded = readRecordingBytes('openai_chat_stream_tool_call_with_usage.sse');
    const { out, usage } = await run(recorded, { dropUsageChunk: false });
    expect(parseSse(out)).toEqual(parseSse(recorded.toString()));
    const last = JSON.parse(parseSse(recorded.toString()).at(-2)!.data);
    expect(usage).toMatchObject({
      prompt_tokens: last.usage.prompt_tokens,
      completion_tokens: last.usage.completion_tokens,
      total_tokens: last.usage.total_tokens,
    });
  });

  it('drops the usage-only chunk the gateway asked for, keeping [DONE] last', async () => {
    const recorded = readRecordingBytes('openai_chat_stream_text_with_usage.sse');
    const { out, usage } = await run(recorded, { dropUsageChunk: true });
    const events = parseSse(out);
    expect(events.at(-1)!.data).toBe('[DONE]');
    expect(events.slice(0, -1).every((event) => JSON.parse(event.data).choices.length > 0)).toBe(true);
    expect(events.length).toBe(parseSse(recorded.toString()).length - 1);
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it('keeps usage carried on content chunks (xAI sends it on every chunk) and takes the last', async () => {
    const recorded = readRecordingBytes('xai_grok_chat_stream_usage_every_chunk.sse');
    const { out, usage } = await run(recorded, { dropUsageChunk: true });
    expect(parseSse(out)).toEqual(parseSse(recorded.toString()));
    const chunks = parseSse(recorded.toString())
      .filter((event) => event.data !== '[DONE]')
      .map((event) => JSON.parse(event.data));
    expect(usage?.total_tokens).toBe(chunks.at(-1).usage.total_tokens);
  });

  it('reads usage from the final chunk of a recorded Mistral stream', async () => {
    const recorded = readRecordingBytes('mistral_chat_stream_text_usage_in_final_chunk.sse');
    const { usage } = await run(recorded, { dropUsageChunk: true });
    expect(usage?.total_tokens).toBeGreaterThan(0);
  });

  it('relays reads of whole events as the same bytes, and rewrites only the reads that need it', async () => {
    const events = readsOf(readRecordingBytes('openai_chat_stream_text_with_usage.sse'));
    const transform = openAIStreamTransform({ provider: 'openai', dropUsageChunk: true, onUsage: () => undefined });
    const out: Buffer[] = [];
    for await (const chunk of Readable.from(events).pipe(transform)) out.push(Buffer.from(chunk));
    const usageRead = events.findIndex((event) => event.includes('"usage"') && event.includes('"choices":[]'));
    expect(usageRead).toBeGreaterThan(0);
    expect(Buffer.concat(out).equals(Buffer.concat(events.filter((_, index) => index !== usageRead)))).toBe(true);
  });
});
