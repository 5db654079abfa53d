import { Readable } from 'node:stream';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { replayAsSse, replayAsSseText, textPieces } from '../../../lib/cache/sse-replay';
import { ChatChunkEmitter } from '../../../lib/providers/openai-format/chunk-emitter';
import { parseSse } from '../../support/sse';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Each push of the stream, as the HTTP layer would write it. */
function pushes(stream: Readable): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const out: string[] = [];
    stream.on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')));
    stream.on('end', () => resolve(out));
    stream.on('error', reject);
  });
}

/** The JSON chunks of a replay (checked to be one event per push), and whether it ended with [DONE]. */
async function replayed(answer: Json, operation: 'chat' | 'completions', includeUsage = true): Promise<{ chunks: Json[]; done: boolean }> {
  const events = await pushes(replayAsSse(answer, operation, { includeUsage }));
  for (const event of events) expect(parseSse(event)).toHaveLength(1);
  const data = events.map((event) => parseSse(event)[0].data);
  expect(data.slice(0, -1)).not.toContain('[DONE]');
  return { chunks: data.filter((item) => item !== '[DONE]').map((item) => JSON.parse(item)), done: data.at(-1) === '[DONE]' };
}

const longText =
  'The quick brown fox jumps over the lazy dog. Pack my box with five dozen liquor jugs! ' +
  'Zwölf Boxkämpfer jagen Viktor quer über den großen Sylter Deich — 日本語のテキストもあります 😀🎉.';

const chatAnswer = (message: Json, extra: Json = {}): Json => ({
  id: 'chatcmpl-replay1',
  object: 'chat.completion',
  created: 1727346168,
  model: 'gpt-4o-2024-08-06',
  choices: [{ index: 0, message, logprobs: null, finish_reason: message.tool_calls ? 'tool_calls' : 'stop' }],
  usage: { prompt_tokens: 14, completion_tokens: 37, total_tokens: 51 },
  service_tier: 'default',
  system_fingerprint: 'fp_5050236cbd',
  ...extra,
});

const deltas = (chunks: Json[], index = 0) =>
  chunks.flatMap((chunk) => chunk.choices.filter((choice: Json) => choice.index === index).map((choice: Json) => choice.delta));

describe('replayAsSse for chat', () => {
  it('gives the same text whole as pushed event by event', async () => {
    for (const includeUsage of [false, true]) {
      const answer = chatAnswer({ role: 'assistant', content: longText, refusal: null });
      expect(replayAsSseText(answer, 'chat', { includeUsage })).toBe((await pushes(replayAsSse(answer, 'chat', { includeUsage }))).join(''));
    }
  });

  it('streams a text answer as role, content runs, finish reason, usage and [DONE]', async () => {
    const { chunks, done } = await replayed(chatAnswer({ role: 'assistant', content: longText, refusal: null }), 'chat');
    expect(done).toBe(true);
    for (const chunk of chunks) {
      expect(Object.keys(chunk)).toEqual([
        'id',
        'object',
        'created',
        'model',
        'service_tier',
        'system_fingerprint',
        'choices',
        ...(chunk.usage ? ['usage'] : []),
      ]);
      expect(chunk).toMatchObject({ id: 'chatcmpl-replay1', object: 'chat.completion.chunk', created: 1727346168, model: 'gpt-4o-2024-08-06' });
    }
    const body = chunks.slice(0, -1);
    for (const chunk of body) {
      expect(chunk.choices).toHaveLength(1);
      expect(Object.keys(chunk.choices[0])).toEqual(['index', 'delta', 'logprobs', 'finish_reason']);
      expect(chunk.choices[0].logprobs).toBeNull();
    }
    expect(body[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    const content = body.slice(1, -1).map((chunk) => chunk.choices[0].delta);
    expect(content.length).toBeGreaterThan(8);
    for (const delta of content) {
      expect(Object.keys(delta)).toEqual(['content']);
      expect(delta.content.length).toBeGreaterThan(0);
    }
    expect(content.map((delta) => delta.content).join('')).toBe(longText);
    expect(body.slice(0, -1).every((chunk) => chunk.choices[0].finish_reason === null)).toBe(true);
    expect(body.at(-1)!.choices[0]).toEqual({ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 14, completion_tokens: 37, total_tokens: 51 } });
  });

  it('sends no usage chunk unless asked, and no usage field on other chunks', async () => {
    const { chunks, done } = await replayed(chatAnswer({ role: 'assistant', content: 'Hi there.' }), 'chat', false);
    expect(done).toBe(true);
    expect(chunks.some((chunk) => 'usage' in chunk)).toBe(false);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');
  });

  it('sends no usage chunk for an answer without usage, as the gateway streams do', async () => {
    const { usage: _usage, ...answer } = chatAnswer({ role: 'assistant', content: 'Hi.' });
    const { chunks } = await replayed(answer, 'chat', true);
    expect(chunks.every((chunk) => chunk.choices.length === 1)).toBe(true);
  });

  it('sends no content delta for empty content', async () => {
    const { chunks } = await replayed(
      chatAnswer(
        { role: 'assistant', content: '' },
        { choices: [{ index: 0, message: { role: 'assistant', content: '' }, logprobs: null, finish_reason: 'length' }] },
      ),
      'chat',
    );
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, {}]);
  });

  it('opens each tool call with its id and name, then streams its arguments in pieces', async () => {
    const args = JSON.stringify({ city: 'Edinburgh', country: 'UK', units: 'celsius', days: [1, 2, 3] });
    const message = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: args } },
        { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } },
      ],
      refusal: null,
    };
    const { chunks } = await replayed(chatAnswer(message), 'chat');
    const all = deltas(chunks);
    expect(all[0]).toEqual({ role: 'assistant', content: null, refusal: null });
    const calls = all.slice(1, -1).map((delta) => {
      expect(Object.keys(delta)).toEqual(['tool_calls']);
      expect(delta.tool_calls).toHaveLength(1);
      return delta.tool_calls[0];
    });
    expect(calls[0]).toEqual({ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } });
    const firstArgs = calls.filter((call) => call.index === 0).slice(1);
    expect(firstArgs.length).toBeGreaterThan(2);
    for (const call of firstArgs) expect(Object.keys(call)).toEqual(['index', 'function']);
    expect(firstArgs.map((call) => call.function.arguments).join('')).toBe(args);
    const second = calls.filter((call) => call.index === 1);
    expect(second).toEqual([
      { index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } },
      { index: 1, function: { arguments: '{}' } },
    ]);
    expect(all.at(-1)).toEqual({});
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
  });

  it('opens a refusal as OpenAI does (content null, refusal empty) and streams its text', async () => {
    const refusal = "I'm sorry, but I can't help with that request.";
    const { chunks } = await replayed(chatAnswer({ role: 'assistant', content: null, refusal }), 'chat');
    const all = deltas(chunks);
    expect(all[0]).toEqual({ role: 'assistant', content: null, refusal: '' });
    expect(all.slice(1, -1).every((delta) => Object.keys(delta).join() === 'refusal')).toBe(true);
    expect(
      all
        .slice(1, -1)
        .map((delta) => delta.refusal)
        .join(''),
    ).toBe(refusal);
  });

  it('replays every choice of an n>1 answer, taking turns, each with its finish reason', async () => {
    const answer = chatAnswer({ role: 'assistant', content: 'unused' });
    answer.choices = [
      { index: 0, message: { role: 'assistant', content: 'First answer, a little longer than the second one.' }, logprobs: null, finish_reason: 'stop' },
      { index: 1, message: { role: 'assistant', content: 'Second answer.' }, logprobs: null, finish_reason: 'length' },
    ];
    const { chunks } = await replayed(answer, 'chat');
    const indices = chunks.slice(0, -1).map((chunk) => chunk.choices[0].index);
    expect(indices.slice(0, 4)).toEqual([0, 1, 0, 1]);
    expect(
      deltas(chunks, 0)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe('First answer, a little longer than the second one.');
    expect(
      deltas(chunks, 1)
        .map((delta) => delta.content ?? '')
        .join(''),
    ).toBe('Second answer.');
    const finishes = chunks.flatMap((chunk) => chunk.choices).filter((choice) => choice.finish_reason !== null);
    expect(finishes.map((choice) => [choice.index, choice.finish_reason])).toEqual([
      [1, 'length'],
      [0, 'stop'],
    ]);
  });

  it('streams content blocks by index with their type, reasoning text before the content', async () => {
    const message = {
      role: 'assistant',
      content: 'Forty-two.',
      content_blocks: [
        { type: 'thinking', thinking: 'The user wants the answer to everything, which is well known.', signature: 'sig-abc' },
        { type: 'text', text: 'Forty-two.' },
      ],
      reasoning_content: 'Deep thought.',
    };
    const { chunks } = await replayed(chatAnswer(message), 'chat');
    const all = deltas(chunks);
    const blocks = all.filter((delta) => delta.content_blocks).map((delta) => delta.content_blocks[0]);
    expect(blocks.every((block) => typeof block.index === 'number' && typeof block.type === 'string')).toBe(true);
    expect(
      blocks
        .filter((block) => block.index === 0 && block.thinking)
        .map((block) => block.thinking)
        .join(''),
    ).toBe(message.content_blocks[0].thinking);
    expect(blocks.filter((block) => block.signature)).toEqual([{ index: 0, type: 'thinking', signature: 'sig-abc' }]);
    const firstContent = all.findIndex((delta) => typeof delta.content === 'string' && delta.content !== '');
    const lastReasoning = all.findLastIndex((delta) => delta.content_blocks || delta.reasoning_content);
    expect(lastReasoning).toBeLessThan(firstContent);
  });

  it('keeps the first chunk and the finish chunk in the shape of the gateway’s own streams', async () => {
    const emitted: string[] = [];
    const emitter = new ChatChunkEmitter({
      id: 'chatcmpl-x',
      model: 'm',
      created: 1,
      includeUsage: true,
      onUsage: () => {},
      push: (text) => emitted.push(text),
    });
    emitter.text('Hello there, world.');
    emitter.usage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
    emitter.finish('stop');
    emitter.end();
    const live = parseSse(emitted.join('')).map((event) => (event.data === '[DONE]' ? event.data : JSON.parse(event.data)));
    const answer = {
      id: 'chatcmpl-x',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there, world.' }, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
    };
    const events = await pushes(replayAsSse(answer, 'chat', { includeUsage: true }));
    const replay = events.map((event) => parseSse(event)[0].data).map((data) => (data === '[DONE]' ? data : JSON.parse(data)));
    const shape = (items: unknown[]) =>
      items.map((item) =>
        typeof item === 'string'
          ? item
          : {
              ...(item as Json),
              choices: (item as Json).choices.map(({ logprobs: _logprobs, delta, ...rest }: Json) => ({ ...rest, delta: Object.keys(delta) })),
            },
      );
    const [liveFirst, ...liveRest] = shape(live) as Json[];
    const [replayFirst, ...replayRest] = shape(replay) as Json[];
    expect(replayFirst).toEqual(liveFirst);
    expect(replayRest.slice(-3)).toEqual(liveRest.slice(-3));
  });

  it('is readable at once, without waiting for a timer or another turn', () => {
    const stream = replayAsSse(chatAnswer({ role: 'assistant', content: longText }), 'chat', { includeUsage: true });
    const text = stream.read()?.toString() ?? '';
    expect(parseSse(text).length).toBeGreaterThan(10);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});

describe('replayAsSse for completions', () => {
  it('streams text_completion chunks, a finish chunk, usage and [DONE]', async () => {
    const answer = {
      id: 'cmpl-1',
      object: 'text_completion',
      created: 5,
      model: 'gpt-3.5-turbo-instruct',
      choices: [
        { text: longText, index: 0, logprobs: null, finish_reason: 'length' },
        { text: '', index: 1, logprobs: null, finish_reason: 'stop' },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 40, total_tokens: 43 },
      system_fingerprint: 'fp_x',
    };
    const { chunks, done } = await replayed(answer, 'completions');
    expect(done).toBe(true);
    for (const chunk of chunks) {
      expect(Object.keys(chunk)).toEqual(['id', 'object', 'created', 'choices', 'model', 'system_fingerprint', ...(chunk.usage ? ['usage'] : [])]);
      expect(chunk.object).toBe('text_completion');
    }
    const choices = chunks.flatMap((chunk) => chunk.choices);
    for (const choice of choices) expect(Object.keys(choice)).toEqual(['text', 'index', 'logprobs', 'finish_reason']);
    const first = choices.filter((choice) => choice.index === 0);
    expect(first.length).toBeGreaterThan(8);
    expect(first.map((choice) => choice.text).join('')).toBe(longText);
    expect(first.at(-1)).toEqual({ text: '', index: 0, logprobs: null, finish_reason: 'length' });
    expect(choices.filter((choice) => choice.index === 1)).toEqual([{ text: '', index: 1, logprobs: null, finish_reason: 'stop' }]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: answer.usage });
  });
});

describe('textPieces', () => {
  const splitText = (text: string) => [...textPieces(text)];

  it('cuts text into runs of whole words that join back to it', () => {
    const pieces = splitText(longText);
    expect(pieces.join('')).toBe(longText);
    expect(pieces.length).toBeGreaterThan(10);
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(32);
    expect(pieces[0]).toBe('The quick brown');
  });

  it('cuts a long word at code points, never inside a surrogate pair', () => {
    const word = '😀'.repeat(40) + 'x'.repeat(50);
    const pieces = splitText(word);
    expect(pieces.join('')).toBe(word);
    expect(pieces.length).toBeGreaterThan(3);
    for (const piece of pieces) expect(Buffer.from(piece, 'utf8').toString('utf8')).toBe(piece);
  });

  it('gives nothing for empty text and keeps whitespace', () => {
    expect(splitText('')).toEqual([]);
    expect(splitText('  \n ').join('')).toBe('  \n ');
    expect(splitText('a\n\nb ').join('')).toBe('a\n\nb ');
  });
});

describe('a replay read by the official OpenAI client', () => {
  const clientFor = (answer: Json) =>
    new OpenAI({
      apiKey: 'sk-test',
      baseURL: 'http://replay.invalid/v1',
      maxRetries: 0,
      fetch: async () =>
        new Response(Readable.toWeb(replayAsSse(answer, 'chat', { includeUsage: true })) as ReadableStream, {
          status: 200,
          headers: { 'content-type': 'text/event-stream; charset=utf-8' },
        }),
    });

  it('assembles the stored answer from the chunks', async () => {
    const answer = chatAnswer({
      role: 'assistant',
      content: 'Calling both tools for you.',
      tool_calls: [
        { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Edinburgh","units":"celsius"}' } },
        { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{"zone":"Europe/London"}' } },
      ],
      refusal: null,
    });
    answer.choices.push({ index: 1, message: { role: 'assistant', content: longText, refusal: null }, logprobs: null, finish_reason: 'stop' });
    const stream = clientFor(answer).chat.completions.stream({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
      stream_options: { include_usage: true },
    });
    const final = await stream.finalChatCompletion();
    expect(final).toMatchObject({
      id: answer.id,
      model: answer.model,
      created: answer.created,
      usage: answer.usage,
      system_fingerprint: answer.system_fingerprint,
    });
    expect(
      final.choices.map((choice) => ({
        index: choice.index,
        finish_reason: choice.finish_reason,
        content: choice.message.content,
        tool_calls: choice.message.tool_calls,
      })),
    ).toEqual([
      { index: 0, finish_reason: 'tool_calls', content: answer.choices[0].message.content, tool_calls: answer.choices[0].message.tool_calls },
      { index: 1, finish_reason: 'stop', content: longText, tool_calls: undefined },
    ]);
  });
});
