import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { TokenUsage } from '../../lib/core/usage';
import { openAIStreamTransform } from '../../lib/providers/openai-compatible/stream';
import { readRecordingBytes, recordingsPresent } from '../support/recordings';
import { parseSse } from '../support/sse';

/** A stream written inline: one `data:` event per chunk, then `data: [DONE]`. */
const sse = (chunks: unknown[]) => Buffer.from([...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'].map((data) => `data: ${data}\n\n`).join(''));
const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices,
  ...extra,
});
const delta = (content: Record<string, unknown>, finish_reason: string | null = null) => ({ index: 0, delta: content, finish_reason });

/** A tool call opened with the role, its arguments in two fragments, the finish, the usage chunk. */
const toolCallStream = sse([
  chunk([delta({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '' } }] })]),
  chunk([delta({ tool_calls: [{ index: 0, function: { arguments: '{"id":' } }] })]),
  chunk([delta({ tool_calls: [{ index: 0, function: { arguments: '"A-1"}' } }] })]),
  chunk([delta({}, 'tool_calls')]),
  chunk([], { usage: { prompt_tokens: 88, completion_tokens: 21, total_tokens: 109 } }),
]);
/** Text whose chunks carry `"usage": null` before the usage chunk, as OpenAI documents. */
const textUsage = { prompt_tokens: 27, completion_tokens: 16, total_tokens: 43, completion_tokens_details: { reasoning_tokens: 0 } };
const textStream = sse([
  chunk([delta({ role: 'assistant', content: '' })], { usage: null }),
  chunk([delta({ content: 'Your order' })], { usage: null }),
  chunk([delta({ content: ' ships.' })], { usage: null }),
  chunk([delta({}, 'stop')], { usage: null }),
  chunk([], { usage: textUsage }),
]);
/** xAI: the role and the usage so far on every chunk, no `finish_reason` key until the last. */
const everyChunkUsage = (completion: number) => ({
  prompt_tokens: 25,
  completion_tokens: completion,
  total_tokens: 25 + completion,
  prompt_tokens_details: { text_tokens: 25, audio_tokens: 0, image_tokens: 0, cached_tokens: 0 },
});
const everyChunkStream = sse([
  chunk([{ index: 0, delta: { role: 'assistant', content: 'Refunds' } }], { usage: everyChunkUsage(1) }),
  chunk([{ index: 0, delta: { role: 'assistant', content: ' arrive' } }], { usage: everyChunkUsage(2) }),
  chunk([{ index: 0, delta: { role: 'assistant', content: ' soon' }, finish_reason: 'length' }], { usage: everyChunkUsage(3) }),
]);
/** Mistral: the usage on the chunk that finishes, which still has text; no usage-only chunk. */
const finishUsage = { prompt_tokens: 19, total_tokens: 31, completion_tokens: 12 };
const finishStream = sse([
  chunk([delta({ role: 'assistant', content: '' })]),
  chunk([delta({ content: 'Returns are free' })]),
  chunk([delta({ content: ' within thirty days' }, 'length')], { usage: finishUsage }),
]);

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

type Usage = Record<string, unknown>;

// A test shared by the samples and the recordings has a case for each; the recording case is
// declared skipped where the recordings are absent and reads them only inside the test, so a
// clone without them collects and runs the rest untouched.
const itOnRecordings = it.skipIf(!recordingsPresent);

/** Relays `sent` event for event, and reads the usage its usage chunk (second to last) carries. */
async function relaysEventForEvent(sent: Buffer, expected: { events: number; usage: Usage }) {
  const { out, usage } = await run(sent, { dropUsageChunk: false });
  expect(parseSse(out)).toEqual(parseSse(sent.toString()));
  expect(parseSse(out)).toHaveLength(expected.events);
  const last = JSON.parse(parseSse(sent.toString()).at(-2)!.data);
  expect(usage).toMatchObject({
    prompt_tokens: last.usage.prompt_tokens,
    completion_tokens: last.usage.completion_tokens,
    total_tokens: last.usage.total_tokens,
  });
  expect(usage).toMatchObject(expected.usage);
  return usage;
}

async function dropsUsageChunk(sent: Buffer, expected: { usage: Usage }) {
  const { out, usage } = await run(sent, { dropUsageChunk: true });
  const events = parseSse(out);
  expect(events.at(-1)!.data).toBe('[DONE]');
  expect(events.slice(0, -1).every((event) => JSON.parse(event.data).choices.length > 0)).toBe(true);
  expect(events.length).toBe(parseSse(sent.toString()).length - 1);
  expect(usage?.total_tokens).toBeGreaterThan(0);
  expect(usage).toMatchObject(expected.usage);
  return usage;
}

async function takesLastUsageOfEveryChunk(sent: Buffer, expected: { usage: Usage }) {
  const { out, usage } = await run(sent, { dropUsageChunk: true });
  expect(parseSse(out)).toEqual(parseSse(sent.toString()));
  const chunks = parseSse(sent.toString())
    .filter((event) => event.data !== '[DONE]')
    .map((event) => JSON.parse(event.data));
  expect(usage?.total_tokens).toBe(chunks.at(-1).usage.total_tokens);
  expect(usage).toMatchObject(expected.usage);
}

async function readsUsageOnFinish(sent: Buffer, expected: { usage: Usage }) {
  const { out, usage } = await run(sent, { dropUsageChunk: true });
  expect(usage?.total_tokens).toBeGreaterThan(0);
  expect(usage).toMatchObject(expected.usage);
  return { out, usage };
}

async function relaysWholeReads(sent: Buffer) {
  const events = readsOf(sent);
  const transform = openAIStreamTransform({ provider: 'openai', dropUsageChunk: true, onUsage: () => undefined });
  const out: Buffer[] = [];
  for await (const chunk of Readable.from(events).pipe(transform)) out.push(Buffer.from(chunk));
  const usageRead = events.findIndex((event) => event.includes('"usage":{') && event.includes('"choices":[]'));
  expect(usageRead).toBeGreaterThan(0);
  expect(usageRead).toBe(events.length - 2);
  expect(Buffer.concat(out).equals(Buffer.concat(events.filter((_, index) => index !== usageRead)))).toBe(true);
}

describe('OpenAI stream transform on whole provider streams', () => {
  it('relays a stream event for event and reads its usage (samples)', async () => {
    // The role chunk with the call's id and name, two argument fragments, the finish, the usage, [DONE].
    await relaysEventForEvent(toolCallStream, { events: 6, usage: { prompt_tokens: 88, completion_tokens: 21, total_tokens: 109 } });
  });
  itOnRecordings('relays a stream event for event and reads its usage (recordings)', async () => {
    await relaysEventForEvent(readRecordingBytes('openai_chat_stream_tool_call_with_usage.sse'), {
      events: 18,
      usage: { prompt_tokens: 76, completion_tokens: 24, total_tokens: 100 },
    });
  });

  it('drops the usage-only chunk the gateway asked for, keeping [DONE] last (samples)', async () => {
    // Every chunk before the usage chunk carries `"usage": null`, as OpenAI documents.
    const sent = textStream;
    expect(parseSse(sent.toString()).filter((event) => event.data.includes('"usage":null'))).toHaveLength(parseSse(sent.toString()).length - 2);
    const usage = await dropsUsageChunk(sent, {
      usage: { prompt_tokens: 27, completion_tokens: 16, total_tokens: 43, completion_tokens_details: { reasoning_tokens: 0 } },
    });
    expect(usage).toEqual(textUsage);
  });
  itOnRecordings('drops the usage-only chunk the gateway asked for, keeping [DONE] last (recordings)', async () => {
    await dropsUsageChunk(readRecordingBytes('openai_chat_stream_text_with_usage.sse'), {
      usage: { prompt_tokens: 14, completion_tokens: 30, total_tokens: 44, completion_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  it('keeps usage carried on content chunks (xAI sends it on every chunk) and takes the last (samples)', async () => {
    await takesLastUsageOfEveryChunk(everyChunkStream, {
      usage: { prompt_tokens: 25, completion_tokens: 3, total_tokens: 28, prompt_tokens_details: { text_tokens: 25, cached_tokens: 0 } },
    });
  });
  itOnRecordings('keeps usage carried on content chunks (xAI sends it on every chunk) and takes the last (recordings)', async () => {
    await takesLastUsageOfEveryChunk(readRecordingBytes('xai_grok_chat_stream_usage_every_chunk.sse'), {
      usage: { prompt_tokens: 38, completion_tokens: 200, total_tokens: 238, prompt_tokens_details: { text_tokens: 38, cached_tokens: 0 } },
    });
  });

  it('reads usage from the final content chunk of a Mistral stream (samples)', async () => {
    const sent = finishStream;
    const { out, usage } = await readsUsageOnFinish(sent, { usage: { prompt_tokens: 19, completion_tokens: 12, total_tokens: 31 } });
    expect(usage).toMatchObject(finishUsage);
    // The usage rides on a chunk with content: nothing is dropped.
    expect(parseSse(out)).toEqual(parseSse(sent.toString()));
  });
  itOnRecordings('reads usage from the final content chunk of a Mistral stream (recordings)', async () => {
    await readsUsageOnFinish(readRecordingBytes('mistral_chat_stream_text_usage_in_final_chunk.sse'), {
      usage: { prompt_tokens: 34, completion_tokens: 100, total_tokens: 134 },
    });
  });

  it('relays reads of whole events as the same bytes, and rewrites only the reads that need it (samples)', async () => {
    await relaysWholeReads(textStream);
  });
  itOnRecordings('relays reads of whole events as the same bytes, and rewrites only the reads that need it (recordings)', async () => {
    await relaysWholeReads(readRecordingBytes('openai_chat_stream_text_with_usage.sse'));
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
