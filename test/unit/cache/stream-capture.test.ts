import { request } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { Readable, type Duplex } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replayAsSse } from '../../../lib/cache/sse-replay';
import { captureStream } from '../../../lib/cache/stream-capture';
import { GatewayError } from '../../../lib/core/errors';
import { chatCompletion, ChatChunkEmitter } from '../../../lib/providers/openai-format/chunk-emitter';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { readRecording, recordingsPresent } from '../../support/recordings';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

// Streams and answers written inline, in OpenAI's documented wire format, with this file's own content.
const header = { id: 'chatcmpl-inline-1', created: 1767225600, model: 'gpt-4o-mini-2024-07-18', system_fingerprint: 'fp_inline01' };
const sseOf = (chunks: unknown[]) => [...chunks.map((chunk) => JSON.stringify(chunk)), '[DONE]'].map((data) => `data: ${data}\n\n`).join('');
const chunkOf = (choices: unknown[], extra: Json = {}, head: Json = header) => ({ ...head, object: 'chat.completion.chunk', choices, ...extra });
const choiceOf = (delta: Json, finish_reason: string | null = null) => ({ index: 0, delta, logprobs: null, finish_reason });
const completionOf = (message: Json, finish_reason: string, usage: Json) => ({
  id: header.id,
  object: 'chat.completion',
  created: header.created,
  model: header.model,
  choices: [{ index: 0, message: { role: 'assistant', ...message, refusal: null }, logprobs: null, finish_reason }],
  usage,
  system_fingerprint: header.system_fingerprint,
});

const textUsage = { prompt_tokens: 27, completion_tokens: 16, total_tokens: 43, completion_tokens_details: { reasoning_tokens: 0 } };
const textAnswer = 'Your order ships on Tuesday.';
/** Text with `"usage": null` on every chunk before the usage chunk. */
const textStream = sseOf([
  chunkOf([choiceOf({ role: 'assistant', content: '', refusal: null })], { usage: null }),
  ...['Your', ' order', ' ships', ' on', ' Tuesday', '.'].map((content) => chunkOf([choiceOf({ content })], { usage: null })),
  chunkOf([choiceOf({}, 'stop')], { usage: null }),
  chunkOf([], { usage: textUsage }),
]);
const textCompletion = completionOf({ content: textAnswer }, 'stop', textUsage);

const calls = [
  { id: 'call_inline_lookup', name: 'lookup_order', arguments: '{"order_id": "A-1042"}' },
  { id: 'call_inline_track', name: 'track_parcel', arguments: '{"carrier": "dhl", "parcel_id": "GW-7781-XK"}' },
];
const callsUsage = { prompt_tokens: 131, completion_tokens: 47, total_tokens: 178, completion_tokens_details: { reasoning_tokens: 0 } };
/** Two calls, index 0 then 1, after a delta with the role alone; arguments in two fragments each. */
const parallelCallsStream = sseOf([
  chunkOf([choiceOf({ role: 'assistant', content: null })]),
  ...calls.flatMap((call, index) => {
    const half = Math.floor(call.arguments.length / 2);
    return [
      chunkOf([choiceOf({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] })]),
      chunkOf([choiceOf({ tool_calls: [{ index, function: { arguments: call.arguments.slice(0, half) } }] })]),
      chunkOf([choiceOf({ tool_calls: [{ index, function: { arguments: call.arguments.slice(half) } }] })]),
    ];
  }),
  chunkOf([choiceOf({}, 'tool_calls')]),
  chunkOf([], { usage: callsUsage }),
]);
const callsCompletion = completionOf(
  { content: null, tool_calls: calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })) },
  'tool_calls',
  callsUsage,
);

/** Mistral: usage on the finishing chunk, which still has text; no fingerprint, no usage-only chunk. */
const mistralHead = { id: 'mistral-inline', created: 1767225900, model: 'mistral-small-latest' };
const mistralText = 'Returns are free within thirty days of delivery, and';
const mistralStream = sseOf([
  chunkOf([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], {}, mistralHead),
  chunkOf([{ index: 0, delta: { content: 'Returns are free within thirty days' }, finish_reason: null }], {}, mistralHead),
  chunkOf(
    [{ index: 0, delta: { content: ' of delivery, and' }, finish_reason: 'length' }],
    { usage: { prompt_tokens: 19, total_tokens: 31, completion_tokens: 12 } },
    mistralHead,
  ),
]);
/** xAI: the role and the usage so far on every chunk, no `finish_reason` key until the last. */
const xaiPieces = ['Refunds', ' reach', ' your', ' card', ' within', ' five', ' working', ' days', ' of'];
const xaiStream = sseOf(
  xaiPieces.map((content, at) => {
    const choice: Json = { index: 0, delta: { content, role: 'assistant' } };
    if (at === xaiPieces.length - 1) choice.finish_reason = 'length';
    const usage = { prompt_tokens: 25, completion_tokens: at + 1, total_tokens: 26 + at, prompt_tokens_details: { text_tokens: 25, cached_tokens: 0 } };
    return chunkOf([choice], { usage }, { id: 'xai-inline', created: 1767225960, model: 'grok-3-mini' });
  }),
);

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
async function run(operation: 'chat' | 'completions', upstream: Readable): Promise<{ relayed: Buffer[]; answer: Json | undefined; error?: Error }> {
  const { stream, answer } = captureStream(operation, upstream);
  const relayed: Buffer[] = [];
  const error = await new Promise<Error | undefined>((resolve) => {
    stream.on('data', (chunk: Buffer) => relayed.push(chunk));
    stream.on('end', () => resolve(undefined));
    stream.on('error', resolve);
  });
  return { relayed, answer: await answer, error };
}

/** The bytes cut at the given fractions of their length (inside characters, inside CRLFs, anywhere). */
function cut(bytes: Buffer, fractions: number[]): Buffer[] {
  const points = [...new Set(fractions.map((fraction) => Math.floor(fraction * bytes.length)))]
    .filter((point) => point > 0 && point < bytes.length)
    .sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let start = 0;
  for (const point of [...points, bytes.length]) {
    pieces.push(bytes.subarray(start, point));
    start = point;
  }
  return pieces;
}

function replayBytes(answer: Json, operation: 'chat' | 'completions', includeUsage = true): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    replayAsSse(answer, operation, { includeUsage })
      .on('data', (chunk: Buffer) => chunks.push(chunk))
      .on('end', () => resolve(Buffer.concat(chunks)))
      .on('error', reject);
  });
}

const event = (data: unknown) => `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 7, model: 'gpt-4o' };
const chunk = (delta: Json, finish: string | null = null, index = 0) => event({ ...head, choices: [{ index, delta, logprobs: null, finish_reason: finish }] });
const simpleStream = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Hello' }),
  chunk({ content: ' world' }),
  chunk({}, 'stop'),
  'data: [DONE]\n\n',
];
const simpleAnswer = {
  ...head,
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello world' }, logprobs: null, finish_reason: 'stop' }],
};

describe('captureStream relaying', () => {
  it('relays every chunk unchanged and assembles the answer', async () => {
    const pieces = simpleStream.map((text) => Buffer.from(text));
    const { relayed, answer, error } = await run('chat', upstreamOf(pieces));
    expect(error).toBeUndefined();
    expect(relayed).toEqual(pieces);
    expect(answer).toEqual(simpleAnswer);
  });

  it('reads events cut at any byte, inside multi-byte characters and CRLF line ends', async () => {
    const text = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Grüße 😀 日本' }),
      chunk({ content: '\n— done' }),
      ': keep-alive\n\n',
      chunk({}, 'stop'),
      'data: [DONE]\n\n',
    ].join('');
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 40 }), async (crlf, fractions) => {
        const bytes = Buffer.from(crlf ? text.replace(/\n/g, '\r\n') : text);
        const { relayed, answer } = await run('chat', upstreamOf(cut(bytes, fractions)));
        expect(Buffer.concat(relayed).equals(bytes)).toBe(true);
        expect(answer?.choices[0].message.content).toBe('Grüße 😀 日本\n— done');
      }),
      { numRuns: 150 },
    );
  });

  it('holds the upstream back while the client does not read (backpressure)', async () => {
    const piece = chunk({ content: 'x'.repeat(200) });
    const total = 5000;
    let pulled = 0;
    const upstream = new Readable({
      read() {
        pulled++;
        this.push(pulled > total ? null : piece);
      },
    });
    const { stream, answer } = captureStream('chat', upstream);
    await new Promise((resolve) => setTimeout(resolve, 30));
    // What the buffers on the way may hold (their sizes differ between Node versions), and a few chunks in flight.
    const buffered = upstream.readableHighWaterMark + (stream as Duplex).writableHighWaterMark + stream.readableHighWaterMark;
    const bound = Math.ceil(buffered / Buffer.byteLength(piece)) + 8;
    expect(bound).toBeLessThan(total / 2);
    expect(pulled).toBeGreaterThan(0);
    expect(pulled).toBeLessThanOrEqual(bound);
    const relayed: Buffer[] = [];
    stream.on('data', (data: Buffer) => relayed.push(data));
    await new Promise((resolve) => stream.on('end', resolve));
    expect(relayed).toHaveLength(total);
    expect(await answer).toBeUndefined();
  });

  it('destroys the upstream when the client goes away, and gives no answer', async () => {
    const upstream = new Readable({ read() {} });
    upstream.push(simpleStream[0]);
    const { stream, answer } = captureStream('chat', upstream);
    stream.resume();
    await new Promise((resolve) => setImmediate(resolve));
    stream.destroy();
    await new Promise((resolve) => upstream.on('close', resolve));
    expect(upstream.destroyed).toBe(true);
    expect(await answer).toBeUndefined();
  });

  it('destroys the relayed stream with the upstream error, and gives no answer', async () => {
    const upstream = new Readable({ read() {} });
    const { stream, answer } = captureStream('chat', upstream);
    const failed = new Promise<Error>((resolve) => stream.on('error', resolve));
    stream.resume();
    for (const text of simpleStream.slice(0, 3)) upstream.push(text);
    upstream.destroy(new Error('socket hang up'));
    expect((await failed).message).toBe('socket hang up');
    expect(await answer).toBeUndefined();
  });

  it('keeps relaying but gives up on the answer past the size limit', async () => {
    const megabyte = 'y'.repeat(1024 * 1024);
    const pieces = [
      chunk({ role: 'assistant', content: '' }),
      ...Array.from({ length: 9 }, () => chunk({ content: megabyte })),
      chunk({}, 'stop'),
      'data: [DONE]\n\n',
    ];
    const { relayed, answer } = await run('chat', upstreamOf(pieces));
    expect(Buffer.concat(relayed).length).toBe(Buffer.byteLength(pieces.join('')));
    expect(answer).toBeUndefined();

    const small = captureStream('chat', upstreamOf(simpleStream), { limit: 8 });
    small.stream.resume();
    expect(await small.answer).toBeUndefined();
  });

  it('gives up on an event that never ends', async () => {
    const endless = [
      chunk({ role: 'assistant', content: '' }),
      `data: {"choices":[{"index":0,"delta":{"content":"`,
      ...Array.from({ length: 40 }, () => 'z'.repeat(1000)),
    ];
    const { stream, answer } = captureStream('chat', upstreamOf(endless), { limit: 16_000 });
    stream.resume();
    expect(await answer).toBeUndefined();
  });
});

describe('captureStream answers', () => {
  const cases: Array<[string, string[]]> = [
    ['no [DONE]', simpleStream.slice(0, -1)],
    ['cut before the finish reason', [...simpleStream.slice(0, 3), 'data: [DONE]\n\n']],
    [
      'an error event, then [DONE]',
      [...simpleStream.slice(0, 3), event({ error: { message: 'overloaded', type: 'server_error', param: null, code: null } }), 'data: [DONE]\n\n'],
    ],
    ['an error event after the finish reason', [...simpleStream.slice(0, 4), event({ error: { message: 'late', type: 'server_error' } }), 'data: [DONE]\n\n']],
    ['an event that is not JSON', [...simpleStream.slice(0, 3), 'data: {"broken\n\n', ...simpleStream.slice(3)]],
    ['no choices at all', ['data: [DONE]\n\n']],
    ['an empty finish reason', [...simpleStream.slice(0, 3), chunk({}, ''), 'data: [DONE]\n\n']],
    ['one of two choices unfinished', [...simpleStream.slice(0, 4), chunk({ role: 'assistant', content: 'b' }, null, 1), 'data: [DONE]\n\n']],
  ];
  it.each(cases)('is undefined for a stream with %s', async (_name, pieces) => {
    const { answer, relayed } = await run('chat', upstreamOf(pieces));
    expect(Buffer.concat(relayed).toString()).toBe(pieces.join(''));
    expect(answer).toBeUndefined();
  });

  it('takes the answer as complete at [DONE], whatever follows', async () => {
    const { answer } = await run('chat', upstreamOf([...simpleStream, 'data: {"error":{"message":"ignored"}}\n\n']));
    expect(answer).toEqual(simpleAnswer);
  });

  it('accepts a last [DONE] without a blank line after it', async () => {
    const { answer } = await run('chat', upstreamOf([...simpleStream.slice(0, -1), 'data: [DONE]']));
    expect(answer).toEqual(simpleAnswer);
  });

  it('merges tool calls by index, names replaced and arguments appended; content null beside them', async () => {
    const pieces = [
      chunk({ role: 'assistant', content: '' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"zone":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"UTC"}' } }] }),
      chunk({}, 'tool_calls'),
      'data: [DONE]\n\n',
    ];
    const { answer } = await run('chat', upstreamOf(pieces));
    expect(answer!.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"zone":"UTC"}' } },
      ],
    });
  });

  it('assembles what the gateway’s own converted streams send as their non-streamed answer would be', async () => {
    const emitted: string[] = [];
    const emitter = new ChatChunkEmitter({
      id: 'msg_1',
      model: 'claude',
      created: 3,
      includeUsage: true,
      onUsage: () => {},
      push: (text) => emitted.push(text),
    });
    emitter.toolCallStart(0, 'toolu_1', 'lookup');
    emitter.toolCallArguments(0, '{"q":');
    emitter.toolCallArguments(0, '"x"}');
    emitter.usage({ prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 });
    emitter.finish('tool_calls');
    emitter.end();
    const { answer } = await run('chat', upstreamOf(emitted));
    const expected = chatCompletion({
      id: 'msg_1',
      model: 'claude',
      created: 3,
      message: { role: 'assistant', content: null, tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }] },
      finishReason: 'tool_calls',
      usage: { prompt_tokens: 4, completion_tokens: 5, total_tokens: 9 },
    });
    expect(answer).toEqual(expected);

    const failing: string[] = [];
    const broken = new ChatChunkEmitter({ id: 'msg_2', model: 'claude', includeUsage: false, onUsage: () => {}, push: (text) => failing.push(text) });
    broken.text('partial');
    broken.error(new GatewayError(502, 'The anthropic stream broke off.', { code: 'provider_stream_error', provider: 'anthropic' }));
    expect((await run('chat', upstreamOf(failing))).answer).toBeUndefined();
  });
});

describe('captureStream on whole provider streams', () => {
  const capture = async (stream: string) => (await run('chat', upstreamOf([stream]))).answer;
  // A test shared by the samples and the recordings has a case for each; the recording case is
  // declared skipped where the recordings are absent and reads them only inside the test.
  const itOnRecordings = it.skipIf(!recordingsPresent);

  /** `content` may be an asymmetric matcher where only the start of a long answer is pinned. */
  const capturesText = async (stream: string, expected: { header: Json; content: unknown; usage: Json }) => {
    const answer = await capture(stream);
    expect(answer).toMatchObject({ ...expected.header, object: 'chat.completion' });
    expect(answer!.choices).toHaveLength(1);
    expect(answer!.choices[0]).toMatchObject({ index: 0, logprobs: null, finish_reason: 'stop', message: { role: 'assistant', refusal: null } });
    expect(answer!.choices[0].message.content).toEqual(expected.content);
    expect(answer!.usage).toEqual(expected.usage);
    return answer;
  };

  it('OpenAI text with usage (written inline)', async () => {
    const answer = await capturesText(textStream, { header, content: textAnswer, usage: textUsage });
    // The very answer the request would have had unstreamed; `"usage": null` on the chunks leaves no trace.
    expect(answer).toEqual(textCompletion);
  });

  itOnRecordings('OpenAI text with usage (recordings)', async () => {
    await capturesText(readRecording('openai_chat_stream_text_with_usage.sse'), {
      header: { id: 'chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL', created: 1727346168, model: 'gpt-4o-2024-08-06', system_fingerprint: 'fp_5050236cbd' },
      content: expect.stringMatching(/^I'm unable to provide real-time weather updates/),
      usage: { prompt_tokens: 14, completion_tokens: 30, total_tokens: 44, completion_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  /** `calls` lists each call as [id, name, parsed arguments]. */
  const capturesParallelCalls = async (stream: string, expected: { calls: unknown[]; usage: Json }) => {
    const answer = await capture(stream);
    const message = answer!.choices[0].message;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toHaveLength(2);
    for (const call of message.tool_calls) {
      expect(Object.keys(call).sort()).toEqual(['function', 'id', 'type']);
      expect(call.id).toMatch(/^call_/);
      expect(JSON.parse(call.function.arguments)).toBeTypeOf('object');
    }
    expect(message.tool_calls.map((call: Json) => [call.id, call.function.name, JSON.parse(call.function.arguments)])).toEqual(expected.calls);
    expect(answer!.choices[0].finish_reason).toBe('tool_calls');
    expect(answer!.usage).toEqual(expected.usage);
    return answer;
  };

  it('OpenAI parallel tool calls with usage (written inline)', async () => {
    const answer = await capturesParallelCalls(parallelCallsStream, {
      calls: [
        ['call_inline_lookup', 'lookup_order', { order_id: 'A-1042' }],
        ['call_inline_track', 'track_parcel', { carrier: 'dhl', parcel_id: 'GW-7781-XK' }],
      ],
      usage: callsUsage,
    });
    expect(answer!.choices[0].message.tool_calls).toEqual((callsCompletion.choices[0].message as Json).tool_calls);
  });

  itOnRecordings('OpenAI parallel tool calls with usage (recordings)', async () => {
    await capturesParallelCalls(readRecording('openai_chat_stream_parallel_tool_calls_with_usage.sse'), {
      calls: [
        ['call_JMW1whyEaYG438VE1OIflxA2', 'GetWeatherArgs', { city: 'Edinburgh', country: 'GB', units: 'c' }],
        ['call_DNYTawLBoN8fj3KN6qU9N1Ou', 'get_stock_price', { ticker: 'AAPL', exchange: 'NASDAQ' }],
      ],
      usage: { prompt_tokens: 149, completion_tokens: 60, total_tokens: 209, completion_tokens_details: { reasoning_tokens: 0 } },
    });
  });

  itOnRecordings('Azure OpenAI with a leading prompt-filter chunk and content filter results (recordings)', async () => {
    const stream = readRecording('azure_openai_chat_stream_with_content_filter.sse');
    const answer = await capture(stream);
    expect(answer).toMatchObject({ id: 'chatcmpl-BleatwEUn3D8iXsgXpDqeOPEMuW3j', created: 1750697159, model: 'gpt-4o-2024-08-06', object: 'chat.completion' });
    expect(answer!.prompt_filter_results).toHaveLength(1);
    // The leading chunk's results, whole: the id-less chunk is read, not dropped, by the capture.
    expect(answer!.prompt_filter_results).toEqual(JSON.parse(stream.slice('data: '.length, stream.indexOf('\n'))).prompt_filter_results);
    expect(answer!.choices[0].message.content).toBe('Hallo Welt!');
    // The finish chunk's empty results leave those of the text chunks in place.
    expect(answer!.choices[0].content_filter_results.hate).toEqual({ filtered: false, severity: 'safe' });
  });

  const capturesUsageOnFinishAndEveryChunk = async (
    streams: { mistral: string; xai: string },
    expected: { mistralUsage: Json; xaiContent: RegExp; xaiUsage: Json },
  ) => {
    const mistral = await capture(streams.mistral);
    expect(mistral).toMatchObject({ choices: [{ finish_reason: 'length', message: { role: 'assistant' } }], usage: expected.mistralUsage });
    const xai = await capture(streams.xai);
    expect(xai!.choices[0].message.role).toBe('assistant');
    expect(xai!.choices[0].message.content).toMatch(expected.xaiContent);
    expect(xai).toMatchObject({ choices: [{ finish_reason: 'length' }], usage: expected.xaiUsage });
    return { mistral, xai };
  };

  it('Mistral with usage in the finish chunk, and xAI with cumulative usage and the role on every chunk (written inline)', async () => {
    const { mistral, xai } = await capturesUsageOnFinishAndEveryChunk(
      { mistral: mistralStream, xai: xaiStream },
      {
        mistralUsage: { prompt_tokens: 19, total_tokens: 31, completion_tokens: 12 },
        xaiContent: /^Refunds reach your card/,
        xaiUsage: { prompt_tokens: 25, completion_tokens: 9, total_tokens: 34 },
      },
    );
    expect(mistral!.choices[0].message.content).toBe(mistralText);
    expect(xai!.choices[0].message.content).toBe(xaiPieces.join(''));
  });

  itOnRecordings('Mistral with usage in the finish chunk, and xAI with cumulative usage and the role on every chunk (recordings)', async () => {
    await capturesUsageOnFinishAndEveryChunk(
      { mistral: readRecording('mistral_chat_stream_text_usage_in_final_chunk.sse'), xai: readRecording('xai_grok_chat_stream_usage_every_chunk.sse') },
      {
        mistralUsage: { prompt_tokens: 34, total_tokens: 134, completion_tokens: 100 },
        xaiContent: /^Coca-Cola is a/,
        xaiUsage: { prompt_tokens: 38, completion_tokens: 200, total_tokens: 238 },
      },
    );
  });

  it('OpenAI non-streamed answers, replayed as a stream with LF or CRLF line ends, capture back unchanged', async () => {
    for (const answer of [textCompletion, callsCompletion]) {
      for (const crlf of [false, true]) {
        let bytes = await replayBytes(answer, 'chat');
        if (crlf) bytes = Buffer.from(bytes.toString('utf8').replace(/\n/g, '\r\n'));
        const { answer: captured, relayed } = await run('chat', upstreamOf(cut(bytes, [0.13, 0.5, 0.77])));
        expect(Buffer.concat(relayed).equals(bytes)).toBe(true);
        expect(captured).toEqual(answer);
      }
    }
  });
});

describe('captureStream against the fake upstream', () => {
  let upstream: FakeUpstream;
  beforeAll(async () => {
    upstream = await startFakeUpstream({ chunkCount: 6 });
  });
  afterAll(() => upstream.close());

  const post = (path: string, body: Json) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      const req = request(`${upstream.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, resolve);
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  const json = async (response: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const piece of response) chunks.push(piece);
    return JSON.parse(Buffer.concat(chunks).toString());
  };
  /** Ids and timestamps differ between two calls to the fake; nothing else should. */
  const normalize = (answer: Json) =>
    JSON.parse(
      JSON.stringify(answer)
        .replace(/"(chatcmpl|cmpl)-fake\w+"/g, '"ID"')
        .replace(/"call_\w+"/g, '"CALL"')
        .replace(/"created":\d+/g, '"created":0'),
    );

  const chatBodies: Array<[string, Json]> = [
    ['text, n=2', { model: 'gpt-4o', n: 2, messages: [{ role: 'user', content: 'Tell me something longer than a few words, with ünïcödé 😀.' }] }],
    [
      'two tool calls',
      {
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'call all tools' }],
        tools: [
          {
            type: 'function',
            function: { name: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer' } } } },
          },
          { type: 'function', function: { name: 'time', parameters: { type: 'object', properties: { zone: { type: 'string' } } } } },
        ],
      },
    ],
  ];
  it.each(chatBodies)('assembles a chat stream (%s) as the non-streamed answer, less its empty annotations', async (_name, body) => {
    const whole = await json(await post('/v1/chat/completions', body));
    const { answer, relayed } = await run('chat', await post('/v1/chat/completions', { ...body, stream: true, stream_options: { include_usage: true } }));
    expect(relayed.length).toBeGreaterThan(5);
    for (const choice of whole.choices) delete choice.message.annotations;
    expect(normalize(answer!)).toEqual(normalize(whole));
  });

  it('assembles a completions stream as the non-streamed answer', async () => {
    const body = { model: 'gpt-3.5-turbo-instruct', prompt: ['first prompt', 'second, longer prompt with more words'] };
    const whole = await json(await post('/v1/completions', body));
    const { answer } = await run('completions', await post('/v1/completions', { ...body, stream: true, stream_options: { include_usage: true } }));
    expect(normalize(answer!)).toEqual(normalize(whole));
  });

  it('gives no answer for a stream that ends in an error event', async () => {
    const { answer, relayed } = await run(
      'chat',
      await post('/v1/chat/completions', { model: 'error-midstream', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(Buffer.concat(relayed).toString()).toContain('"error"');
    expect(answer).toBeUndefined();
  });

  it('gives no answer, and fails the relayed stream, when the connection drops mid-stream', async () => {
    upstream.script('/cut', [{ sse: simpleStream.map((text) => text.slice(6, -2)), failAfter: 2 }]);
    const { answer, error } = await run('chat', await post('/cut/v1/chat/completions', { model: 'gpt-4o', stream: true, messages: [] }));
    expect(error).toBeInstanceOf(Error);
    expect(answer).toBeUndefined();
  });
});

describe('a replayed answer captured again', () => {
  const text = fc.oneof(
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 14 }), { maxLength: 30 }).map((words) => words.join(' ')),
    fc.lorem({ maxCount: 40, mode: 'sentences' }),
  );
  const someText = text.filter((value) => value !== '');
  const toolCall = fc.record({
    id: fc.stringMatching(/^call_[A-Za-z0-9]{8,24}$/),
    type: fc.constant('function'),
    function: fc.record({ name: fc.stringMatching(/^[a-z_]{1,20}$/), arguments: fc.jsonValue().map((value) => JSON.stringify(value)) }),
  });
  const block = fc.oneof(
    fc.record({ type: fc.constant('thinking'), thinking: text, signature: fc.base64String({ maxLength: 60 }) }),
    fc.record({ type: fc.constant('redacted_thinking'), data: fc.base64String({ minLength: 4, maxLength: 40 }) }),
    fc.record({ type: fc.constant('text'), text }),
  );
  const tokenEntry = (token: string) => ({ token, logprob: -0.25, bytes: [...Buffer.from(token)], top_logprobs: [] });
  /** Content whose logprobs spell it (cut into tokens), or logprobs that do not match it. */
  const withLogprobs = fc.oneof(
    fc
      .array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 5 }), { maxLength: 30 })
      .map((tokens) => ({ content: tokens.join(''), logprobs: { content: tokens.map(tokenEntry), refusal: null } })),
    text.map((content) => ({ content, logprobs: { content: [tokenEntry('unrelated')], refusal: null } })),
  );

  const message = fc.oneof(
    fc
      .record({ role: fc.constant('assistant'), content: text, refusal: fc.constant(null) }, { requiredKeys: ['role', 'content'] })
      .map((m) => ({ message: m, logprobs: null })),
    fc
      .record({
        role: fc.constant('assistant'),
        content: fc.oneof(fc.constant(null), someText),
        tool_calls: fc.array(toolCall, { minLength: 1, maxLength: 3 }),
        refusal: fc.constant(null),
      })
      .map((m) => ({ message: m, logprobs: null })),
    fc.record({ role: fc.constant('assistant'), content: fc.constant(null), refusal: someText }).map((m) => ({ message: m, logprobs: null })),
    fc
      .record(
        {
          role: fc.constant('assistant'),
          content: text,
          content_blocks: fc.array(block, { minLength: 1, maxLength: 3 }),
          reasoning_content: text,
          annotations: fc.constantFrom([], [{ type: 'url_citation', url_citation: { url: 'https://example.com', start_index: 0, end_index: 3, title: 'x' } }]),
          audio: fc.constantFrom(null, { id: 'audio_1', data: 'AAAA', expires_at: 1, transcript: 'hi' }),
        },
        { requiredKeys: ['role', 'content'] },
      )
      .map((m) => ({ message: m, logprobs: null })),
    withLogprobs.map(({ content, logprobs }) => ({ message: { role: 'assistant', content, refusal: null }, logprobs })),
  );
  const finish = fc.constantFrom('stop', 'length', 'tool_calls', 'content_filter');
  const usage = fc.record(
    { prompt_tokens: fc.nat(), completion_tokens: fc.nat(), total_tokens: fc.nat(), completion_tokens_details: fc.record({ reasoning_tokens: fc.nat() }) },
    { requiredKeys: ['prompt_tokens', 'completion_tokens', 'total_tokens'] },
  );
  const envelope = fc.record(
    {
      id: fc.stringMatching(/^chatcmpl-[A-Za-z0-9]{6,30}$/),
      created: fc.nat(),
      model: fc.constantFrom('gpt-4o', 'claude-sonnet-4', 'mistral-large-latest'),
      usage,
      system_fingerprint: fc.oneof(fc.constant(null), fc.stringMatching(/^fp_[a-f0-9]{10}$/)),
      service_tier: fc.constant('default'),
      prompt_filter_results: fc.constant([{ prompt_index: 0, content_filter_results: {} }]),
    },
    { requiredKeys: ['id', 'created', 'model', 'usage'] },
  );
  const chatAnswer = fc
    .tuple(
      envelope,
      fc.array(fc.tuple(message, finish, fc.option(fc.constant({ hate: { filtered: false, severity: 'safe' } }), { nil: undefined })), {
        minLength: 1,
        maxLength: 3,
      }),
    )
    .map(([top, choices]) => ({
      ...top,
      object: 'chat.completion',
      choices: choices.map(([{ message: m, logprobs }, reason, filter], index) => ({
        index,
        message: m,
        logprobs,
        finish_reason: reason,
        ...(filter ? { content_filter_results: filter } : {}),
      })),
    }));
  const completionLogprobs = fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 5 }), { maxLength: 20 }).map((tokens) => ({
    text: tokens.join(''),
    logprobs: {
      tokens,
      token_logprobs: tokens.map(() => -1),
      top_logprobs: tokens.map((token) => ({ [token]: -1 })),
      text_offset: tokens.map((_token, i) => i),
    },
  }));
  const completionAnswer = fc
    .tuple(
      envelope,
      fc.array(
        fc.tuple(
          fc.oneof(
            text.map((value) => ({ text: value, logprobs: null })),
            completionLogprobs,
          ),
          finish,
        ),
        { minLength: 1, maxLength: 3 },
      ),
    )
    .map(([top, choices]) => ({
      ...top,
      object: 'text_completion',
      choices: choices.map(([choice, reason], index) => ({ text: choice.text, index, logprobs: choice.logprobs, finish_reason: reason })),
    }));
  const splits = fc.tuple(fc.boolean(), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 30 }));

  const roundTrip = async (answer: Json, operation: 'chat' | 'completions', [crlf, fractions]: [boolean, number[]]) => {
    let bytes = await replayBytes(answer, operation);
    if (crlf) bytes = Buffer.from(bytes.toString('utf8').replace(/\n/g, '\r\n'));
    const { answer: captured, relayed } = await run(operation, upstreamOf(cut(bytes, fractions)));
    expect(Buffer.concat(relayed).equals(bytes)).toBe(true);
    expect(captured).toEqual(answer);
  };

  it('gives back the stored chat answer, however the bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(chatAnswer, splits, (answer, split) => roundTrip(answer, 'chat', split)),
      { numRuns: 300 },
    );
  });

  it('gives back the stored completions answer, however the bytes are cut', async () => {
    await fc.assert(
      fc.asyncProperty(completionAnswer, splits, (answer, split) => roundTrip(answer, 'completions', split)),
      { numRuns: 200 },
    );
  });

  it('leaves usage out when the replay had no usage chunk', async () => {
    const answer = { ...simpleAnswer, usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 } };
    const { answer: captured } = await run('chat', upstreamOf([await replayBytes(answer, 'chat', false)]));
    expect(captured).toEqual(simpleAnswer);
  });

  it('gives null content for an empty content beside tool calls, as a non-streamed answer has it', async () => {
    const message = { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] };
    const answer = { ...simpleAnswer, choices: [{ index: 0, message, logprobs: null, finish_reason: 'tool_calls' }] };
    const { answer: captured } = await run('chat', upstreamOf([await replayBytes(answer, 'chat')]));
    expect(captured!.choices[0].message).toEqual({ ...message, content: null });
  });
});
