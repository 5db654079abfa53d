/*
 * Replaying a stored response as the Responses event stream a streamed request would have had: the
 * events of the gateway's own streams (events-from-chat.ts), text in small runs, and a last event
 * that carries the stored response, so that capturing the replay gives it back.
 */
import { Readable } from 'node:stream';
import OpenAI from 'openai';
import type { Response as OpenAIResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { describe, expect, it } from 'vitest';
import { replayResponseAsSse, replayResponseAsSseText } from '../../../lib/cache/responses-replay';
import { captureStream } from '../../../lib/cache/stream-capture';
import { chatChunk, chatDone, chatUsage, responseEvents, translated, type ResponseEvent } from '../../support/responses-streams';

type Json = Record<string, unknown>;

const deltaTypes = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
]);

/**
 * The events without their sequence numbers, each run of deltas to one place as one delta: how
 * text is cut is the one thing a replay and the stream it stands for may differ in.
 */
function merged(events: ResponseEvent[]): Json[] {
  const out: Json[] = [];
  for (const { sequence_number: _sequence, ...event } of events) {
    const last = out.at(-1);
    const samePlace = (other: Json) => ['type', 'item_id', 'content_index', 'summary_index'].every((key) => other[key] === event[key]);
    if (deltaTypes.has(event.type) && last && samePlace(last)) last.delta = `${last.delta as string}${event.delta as string}`;
    else out.push(event);
  }
  return out;
}

/** The replay's events, checking each frame is `event: <type>\ndata: <json>` with its own type. */
function replayed(response: Json): ResponseEvent[] {
  const wire = replayResponseAsSseText(response);
  for (const frame of wire.split('\n\n').filter(Boolean)) {
    const [eventLine, dataLine, ...rest] = frame.split('\n');
    expect(rest).toEqual([]);
    expect(JSON.parse(dataLine!.slice('data: '.length)).type).toBe(eventLine!.slice('event: '.length));
  }
  const events = responseEvents(wire);
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
  return events;
}

const types = (events: ResponseEvent[]) => events.map((event) => event.type);

/** The events of each output item, in the order they came, merged as `merged` merges them. */
const byItem = (events: ResponseEvent[]) => {
  const items = new Map<number, ResponseEvent[]>();
  for (const event of events) {
    if (typeof event.output_index !== 'number') continue;
    items.set(event.output_index, [...(items.get(event.output_index) ?? []), event]);
  }
  return [...items.values()].map(merged);
};

async function capture(stream: Readable): Promise<Json | undefined> {
  const captured = captureStream('responses', stream);
  captured.stream.resume();
  return captured.answer;
}

const role = chatChunk({ role: 'assistant', content: '' });
const longText = 'The quick brown fox jumps over the lazy dog, then naps: 😀 日本語のテキスト.';

describe('replayResponseAsSse', () => {
  it("replays a text answer with the gateway's own events, the text in runs of a few tokens", async () => {
    const { wire, final } = await translated([role, chatChunk({ content: longText }), chatChunk({}, 'stop'), chatUsage, chatDone]);
    const events = replayed(final);
    expect(merged(events)).toEqual(merged(responseEvents(wire)));
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(events.length - 8).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(3);
    for (const delta of deltas) expect(delta.delta.length).toBeLessThanOrEqual(16);
    expect(deltas.map((delta) => delta.delta).join('')).toBe(longText);
    // The response as it starts, and as stored at the end.
    expect(events[0]!.response).toEqual({ ...final, status: 'in_progress', output: [], output_text: '', usage: null });
    expect(events.at(-1)!.response).toEqual(final);
  });

  it('replays reasoning, then the text, as the gateway streams them', async () => {
    const { wire, final } = await translated([
      role,
      chatChunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: 'First, the capital of France. ' }] }),
      chatChunk({ content_blocks: [{ index: 1, type: 'thinking', thinking: 'Then say it.' }] }),
      chatChunk({ content: 'Paris.' }),
      chatChunk({}, 'stop'),
      chatDone,
    ]);
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(merged(replayed(final))).toEqual(merged(responseEvents(wire)));
  });

  it('replays a refusal with the refusal events', async () => {
    const { wire, final } = await translated([role, chatChunk({ refusal: "I can't help with that." }), chatChunk({}, 'stop'), chatDone]);
    const events = replayed(final);
    expect(merged(events)).toEqual(merged(responseEvents(wire)));
    expect(types(events)).toContain('response.refusal.done');
  });

  it('replays tool calls item after item, each with the events the gateway streams for it', async () => {
    const { wire, final } = await translated([
      role,
      chatChunk({ content: 'Looking both up.' }),
      chatChunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":' } }] }),
      chatChunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'time', arguments: '{"tz":"Europe/Paris"}' } }] }),
      chatChunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris, France"}' } }] }),
      chatChunk({}, 'tool_calls'),
      chatDone,
    ]);
    const events = replayed(final);
    // The stream keeps every item open to the end, since chat deltas may interleave; a replay knows
    // each item whole and finishes it before the next.
    expect(byItem(events)).toEqual(byItem(responseEvents(wire)));
    const perItem = merged(events)
      .filter((event) => event.type === 'response.output_item.added' || event.type === 'response.output_item.done')
      .map((event) => `${event.type} ${event.output_index as number}`);
    expect(perItem).toEqual([0, 0, 1, 1, 2, 2].map((index, at) => `response.output_item.${at % 2 ? 'done' : 'added'} ${index}`));
    const args = events.filter((event) => event.type === 'response.function_call_arguments.delta' && event.output_index === 2);
    expect(args.length).toBeGreaterThan(1);
    expect(args.map((event) => event.delta).join('')).toBe('{"tz":"Europe/Paris"}');
  });

  it('ends an incomplete response with response.incomplete', async () => {
    const { wire, final } = await translated([role, chatChunk({ content: 'Cut sh' }), chatChunk({}, 'length'), chatDone]);
    const events = replayed(final);
    expect(merged(events)).toEqual(merged(responseEvents(wire)));
    expect(events.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } },
    });
  });

  it("replays what the gateway's translation never makes: built-in tool calls, annotations, log probabilities, reasoning text", () => {
    const citation = { type: 'url_citation', start_index: 0, end_index: 5, url: 'https://example.com', title: 'Example' };
    const logprobs = [{ token: 'Paris', logprob: -0.01, bytes: [80, 97, 114, 105, 115], top_logprobs: [] }];
    const search = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { type: 'search', query: 'capital of France' } };
    const thinking = {
      id: 'rs_1',
      type: 'reasoning',
      summary: [],
      content: [{ type: 'reasoning_text', text: 'Look it up.' }],
      encrypted_content: 'opaque',
    };
    const message = {
      id: 'msg_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Paris', annotations: [citation], logprobs }],
    };
    const response = {
      id: 'resp_9',
      object: 'response',
      status: 'completed',
      output: [thinking, search, message],
      output_text: 'Paris',
      usage: { input_tokens: 1 },
    };
    const events = merged(replayed(response));
    const at = (type: string) => events.filter((event) => event.type === type);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.annotation.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(at('response.output_item.added').map((event) => event.item)).toEqual([
      { ...thinking, content: [] },
      { ...search, status: 'in_progress' },
      { ...message, status: 'in_progress', content: [] },
    ]);
    expect(at('response.output_item.done').map((event) => event.item)).toEqual([thinking, search, message]);
    expect(at('response.content_part.added').map((event) => event.part)).toEqual([
      { type: 'reasoning_text', text: '' },
      { type: 'output_text', text: '', annotations: [], logprobs: [] },
    ]);
    expect(at('response.reasoning_text.delta')[0]).toEqual({
      type: 'response.reasoning_text.delta',
      item_id: 'rs_1',
      output_index: 0,
      content_index: 0,
      delta: 'Look it up.',
    });
    expect(at('response.output_text.annotation.added')[0]).toMatchObject({
      item_id: 'msg_1',
      output_index: 2,
      content_index: 0,
      annotation_index: 0,
      annotation: citation,
    });
    expect(at('response.output_text.done')[0]).toMatchObject({ text: 'Paris', logprobs });
    expect(events.at(-1)).toEqual({ type: 'response.completed', response });
  });

  it('pushes each event on its own as the stream is read, the same text as the whole replay', async () => {
    const { final } = await translated([role, chatChunk({ content: longText }), chatChunk({}, 'stop'), chatDone]);
    const pushes = await new Promise<string[]>((resolve, reject) => {
      const out: string[] = [];
      replayResponseAsSse(final)
        .on('data', (chunk: Buffer) => out.push(chunk.toString('utf8')))
        .on('end', () => resolve(out))
        .on('error', reject);
    });
    expect(pushes.join('')).toBe(replayResponseAsSseText(final));
    expect(pushes.every((push) => push.startsWith('event: ') && push.endsWith('\n\n') && push.split('\n\n').length === 2)).toBe(true);
  });
});

describe('a replayed response read back', () => {
  const stored = async () => [
    (await translated([role, chatChunk({ content: longText }), chatChunk({}, 'stop'), chatUsage, chatDone])).final,
    (
      await translated([
        role,
        chatChunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: 'Hmm, which tool.' }] }),
        chatChunk({ content: 'Calling.' }),
        chatChunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"query":"a rather long argument"}' } }] }),
        chatChunk({}, 'tool_calls'),
        chatUsage,
        chatDone,
      ])
    ).final,
    (await translated([role, chatChunk({ content: 'Cut sh' }), chatChunk({}, 'length'), chatDone])).final,
    (await translated([role, chatChunk({}, 'stop'), chatDone])).final,
    {
      id: 'resp_2',
      object: 'response',
      status: 'completed',
      output: [
        { id: 'ws_1', type: 'web_search_call', status: 'completed' },
        {
          id: 'msg_1',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Found it.', annotations: [{ type: 'url_citation' }] }],
        },
      ],
      output_text: 'Found it.',
      usage: { input_tokens: 3, output_tokens: 4, total_tokens: 7 },
      provider_extra: { kept: true },
    },
  ];

  it('is captured as the stored response, deep-equal', async () => {
    for (const response of await stored()) {
      expect(await capture(replayResponseAsSse(response as unknown as Json))).toEqual(response);
      // Cut anywhere on the way, too.
      const bytes = Buffer.from(replayResponseAsSseText(response as unknown as Json));
      const cut = Readable.from([bytes.subarray(0, 101), bytes.subarray(101, 999), bytes.subarray(999)]);
      expect(await capture(cut)).toEqual(response);
    }
  });

  it("builds the stored output in OpenAI's SDK from its events alone, without an event the SDK rejects", async () => {
    for (const response of await stored()) {
      const events = responseEvents(replayResponseAsSseText(response as unknown as Json)) as unknown as ResponseStreamEvent[];
      let snapshot: OpenAIResponse | undefined;
      // Everything but the last event, which would replace the snapshot with the stored response.
      for (const event of events.slice(0, -1)) snapshot = accumulateResponse(event, snapshot);
      expect(snapshot!.output).toEqual(response.output);
      expect(snapshot!.output_text).toBe(response.output_text);
    }
  });

  it("is read by OpenAI's SDK as the stored response", async () => {
    const [response] = await stored();
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://gateway.invalid/v1',
      maxRetries: 0,
      fetch: async () => new Response(replayResponseAsSseText(response as unknown as Json), { headers: { 'content-type': 'text/event-stream' } }),
    });
    const stream = client.responses.stream({ model: 'm', input: 'hi' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe(longText);
    expect(final).toMatchObject(response as object);
  });
});
