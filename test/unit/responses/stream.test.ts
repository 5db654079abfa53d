import OpenAI, { APIError } from 'openai';
import { describe, expect, it, vi } from 'vitest';
import type { Usage } from '../../../lib/providers/openai-format/types';
import { baseResponse } from '../../../lib/providers/responses-format/response-object';
import { responsesEventStream } from '../../../lib/providers/responses-format/events-from-chat';
import type { ResponseObject } from '../../../lib/providers/responses-format/types';
import { chatChunk, chatDone, type ResponseEvent } from '../../support/responses-streams';

type Event = ResponseEvent;

const sse = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
const chunk = chatChunk;
const usageChunk = (usage: Usage) => sse({ id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [], usage });
const done = chatDone;
const role = chunk({ role: 'assistant', content: '' });

const usage: Usage = {
  prompt_tokens: 12,
  completion_tokens: 7,
  total_tokens: 19,
  prompt_tokens_details: { cached_tokens: 4 },
  completion_tokens_details: { reasoning_tokens: 2 },
};
const mappedUsage = {
  input_tokens: 12,
  input_tokens_details: { cached_tokens: 4 },
  output_tokens: 7,
  output_tokens_details: { reasoning_tokens: 2 },
  total_tokens: 19,
};

const base = () => baseResponse({ model: 'm', input: 'hi' }, { id: 'resp_1', createdAt: 1700000000 });

/** Runs chat SSE (as these byte pieces) through the stream; returns the events, the bytes and every onEnd call. */
async function run(pieces: Array<string | Buffer>) {
  const onEnd = vi.fn<(response: ResponseObject) => void>();
  const stream = responsesEventStream(base(), onEnd);
  const out: Buffer[] = [];
  stream.on('data', (data: Buffer) => out.push(data));
  const ended = new Promise((resolve) => stream.on('end', resolve));
  for (const piece of pieces) stream.write(piece);
  stream.end();
  await ended;
  const wire = Buffer.concat(out).toString('utf8');
  return { events: parse(wire), wire, onEnd };
}

/** Reads `event: <type>\ndata: <json>\n\n` frames, checking each frame's name is its type. */
function parse(wire: string): Event[] {
  expect(wire.endsWith('\n\n')).toBe(true);
  return wire
    .slice(0, -2)
    .split('\n\n')
    .map((frame) => {
      const [eventLine, dataLine, ...rest] = frame.split('\n');
      expect(rest).toEqual([]);
      expect(eventLine.startsWith('event: ')).toBe(true);
      expect(dataLine.startsWith('data: ')).toBe(true);
      const event = JSON.parse(dataLine.slice(6)) as Event;
      expect(event.type).toBe(eventLine.slice(7));
      return event;
    });
}

const types = (events: Event[]) => events.map((event) => event.type);
const ofType = (events: Event[], type: string) => events.filter((event) => event.type === type);
const expectSequenced = (events: Event[]) => expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));

const textStream = [role, chunk({ content: 'Hel' }), chunk({ content: 'lo, ' }), chunk({ content: 'wörld 👋' }), chunk({}, 'stop'), usageChunk(usage), done];

describe('responsesEventStream', () => {
  it('streams text: created, in_progress, the message item and part, deltas, the dones, completed', async () => {
    const { events, onEnd } = await run(textStream);
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expectSequenced(events);
    for (const event of events.slice(0, 2))
      expect(event.response).toMatchObject({ id: 'resp_1', object: 'response', status: 'in_progress', output: [], usage: null });

    const added = events[2];
    expect(added.output_index).toBe(0);
    expect(added.item).toEqual({ id: expect.stringMatching(/^msg_/), type: 'message', status: 'in_progress', role: 'assistant', content: [] });
    const itemId = added.item.id;
    expect(events[3]).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    const deltas = ofType(events, 'response.output_text.delta');
    for (const delta of deltas) expect(delta).toEqual({ ...delta, item_id: itemId, output_index: 0, content_index: 0, logprobs: [] });
    const text = deltas.map((delta) => delta.delta).join('');
    expect(text).toBe('Hello, wörld 👋');
    expect(events[7]).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0, text, logprobs: [] });
    expect(events[8]).toMatchObject({ item_id: itemId, content_index: 0, part: { type: 'output_text', text, annotations: [] } });
    const item = { id: itemId, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] };
    expect(events[9]).toMatchObject({ output_index: 0, item });

    const final = events[10].response;
    expect(final).toMatchObject({
      id: 'resp_1',
      status: 'completed',
      output: [item],
      output_text: text,
      usage: mappedUsage,
      error: null,
      incomplete_details: null,
    });
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd.mock.calls[0][0]).toEqual(final);
  });

  it('decodes incrementally: the same events however the input bytes are cut', async () => {
    const bytes = Buffer.from(textStream.join(''));
    const summary = (events: Event[]) => ({
      types: types(events),
      text: ofType(events, 'response.output_text.delta')
        .map((event) => event.delta)
        .join(''),
      final: events.at(-1)!.response.output_text,
    });
    const whole = summary((await run([bytes])).events);
    for (let cut = 1; cut < bytes.length; cut++) {
      expect(summary((await run([bytes.subarray(0, cut), bytes.subarray(cut)])).events)).toEqual(whole);
    }
    const byteByByte = [...bytes].map((byte) => Buffer.from([byte]));
    expect(summary((await run(byteByByte)).events)).toEqual(whole);
  });

  it('streams two tool calls whose argument fragments interleave', async () => {
    const { events, onEnd } = await run([
      role,
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '{"tz":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"UTC"}' } }] }),
      chunk({}, 'tool_calls'),
      done,
    ]);
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expectSequenced(events);
    const [first, second] = ofType(events, 'response.output_item.added');
    expect(first).toMatchObject({
      output_index: 0,
      item: { type: 'function_call', status: 'in_progress', call_id: 'call_a', name: 'get_weather', arguments: '' },
    });
    expect(second).toMatchObject({
      output_index: 1,
      item: { type: 'function_call', status: 'in_progress', call_id: 'call_b', name: 'get_time', arguments: '' },
    });
    expect(first.item.id).toMatch(/^fc_/);
    expect(second.item.id).not.toBe(first.item.id);
    const deltas = ofType(events, 'response.function_call_arguments.delta');
    expect(deltas.map((delta) => [delta.output_index, delta.item_id, delta.delta])).toEqual([
      [0, first.item.id, '{"city":'],
      [1, second.item.id, '{"tz":'],
      [0, first.item.id, '"Paris"}'],
      [1, second.item.id, '"UTC"}'],
    ]);
    const argsDone = ofType(events, 'response.function_call_arguments.done');
    expect(argsDone[0]).toMatchObject({ item_id: first.item.id, output_index: 0, name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(argsDone[1]).toMatchObject({ item_id: second.item.id, output_index: 1, name: 'get_time', arguments: '{"tz":"UTC"}' });
    const final = events.at(-1)!.response;
    expect(final.output).toEqual([
      { id: first.item.id, type: 'function_call', status: 'completed', call_id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: second.item.id, type: 'function_call', status: 'completed', call_id: 'call_b', name: 'get_time', arguments: '{"tz":"UTC"}' },
    ]);
    expect(final).toMatchObject({ status: 'completed', output_text: '', usage: null });
    expect(onEnd).toHaveBeenCalledTimes(1);
  });

  it('streams thinking as a reasoning item before the message, done when the text begins', async () => {
    const { events } = await run([
      role,
      chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: 'Let me' }] }),
      chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: ' think.' }] }),
      chunk({ content_blocks: [{ index: 0, type: 'thinking', signature: 'c2ln' }] }),
      chunk({ content: 'Answer' }),
      chunk({}, 'stop'),
      done,
    ]);
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expectSequenced(events);
    const [reasoning, message] = ofType(events, 'response.output_item.added');
    expect(reasoning).toMatchObject({ output_index: 0, item: { type: 'reasoning', summary: [] } });
    expect(reasoning.item.id).toMatch(/^rs_/);
    expect(message).toMatchObject({ output_index: 1, item: { type: 'message' } });
    const at = { item_id: reasoning.item.id, output_index: 0, summary_index: 0 };
    expect(events[3]).toMatchObject({ ...at, part: { type: 'summary_text', text: '' } });
    expect(ofType(events, 'response.reasoning_summary_text.delta').map((event) => event.delta)).toEqual(['Let me', ' think.']);
    expect(events[4]).toMatchObject(at);
    expect(events[6]).toMatchObject({ ...at, text: 'Let me think.' });
    expect(events[7]).toMatchObject({ ...at, part: { type: 'summary_text', text: 'Let me think.' } });
    // As the whole answer shows it: no status, and the signature left out.
    const reasoningItem = { id: reasoning.item.id, type: 'reasoning', summary: [{ type: 'summary_text', text: 'Let me think.' }] };
    expect(events[8]).toEqual({ type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: reasoningItem });
    expect(events[11]).toMatchObject({ output_index: 1, delta: 'Answer' });
    const final = events.at(-1)!.response;
    expect(final.output).toMatchObject([reasoningItem, { type: 'message', status: 'completed', content: [{ type: 'output_text', text: 'Answer' }] }]);
    expect(final.output[0]).toEqual(reasoningItem);
    expect(final.output_text).toBe('Answer');
  });

  it('gives each thinking block a summary part, and thinking after the answer began a new item', async () => {
    const { events } = await run([
      role,
      chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: 'First.' }] }),
      chunk({ content_blocks: [{ index: 0, type: 'thinking', signature: 'c2ln' }] }),
      chunk({ content_blocks: [{ index: 1, type: 'redacted_thinking', data: 'b3BhcXVl' }] }),
      chunk({ content_blocks: [{ index: 2, type: 'thinking', thinking: 'Second.' }] }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
      chunk({ content_blocks: [{ index: 3, type: 'thinking', thinking: 'Third.' }] }),
      chunk({}, 'tool_calls'),
      done,
    ]);
    expectSequenced(events);
    expect(types(events).slice(2, 12)).toEqual([
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
    ]);
    expect(ofType(events, 'response.reasoning_summary_text.delta').map((event) => [event.output_index, event.summary_index, event.delta])).toEqual([
      [0, 0, 'First.'],
      [0, 1, 'Second.'],
      [2, 0, 'Third.'],
    ]);
    const final = events.at(-1)!.response;
    expect(final.output.map((item: { type: string }) => item.type)).toEqual(['reasoning', 'function_call', 'reasoning']);
    expect(final.output[0].summary).toEqual([
      { type: 'summary_text', text: 'First.' },
      { type: 'summary_text', text: 'Second.' },
    ]);
    expect(final.output[2].summary).toEqual([{ type: 'summary_text', text: 'Third.' }]);
    expect(ofType(events, 'response.output_item.done').map((event) => event.output_index)).toEqual([0, 1, 2]);
  });

  it('gives an answer with nothing in it an empty message, and names the model that answered', async () => {
    const { events } = await run([
      sse({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm-2025-01-01', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
      done,
    ]);
    expect(types(events).slice(2)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0].response.model).toBe('m');
    expect(events.at(-1)!.response).toMatchObject({
      model: 'm-2025-01-01',
      output: [{ type: 'message', status: 'completed', content: [{ type: 'output_text', text: '', annotations: [] }] }],
      output_text: '',
    });
  });

  it('ends a length finish with response.incomplete (max_output_tokens), the open items incomplete', async () => {
    const { events, onEnd } = await run([role, chunk({ content: 'Once upon' }), chunk({}, 'length'), usageChunk(usage), done]);
    expect(types(events).slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.incomplete']);
    expectSequenced(events);
    expect(events.at(-2)!.item.status).toBe('incomplete');
    const final = events.at(-1)!.response;
    expect(final).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, output_text: 'Once upon', usage: mappedUsage });
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd.mock.calls[0][0]).toEqual(final);
  });

  it('ends a content_filter finish with response.incomplete (content_filter)', async () => {
    const { events } = await run([role, chunk({ content: 'Hm' }), chunk({}, 'content_filter'), done]);
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'content_filter' } } });
  });

  it('streams a refusal as a refusal part', async () => {
    const { events } = await run([role, chunk({ refusal: "I can't" }), chunk({ refusal: ' help.' }), chunk({}, 'stop'), done]);
    expect(types(events).slice(2)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.delta',
      'response.refusal.delta',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[3].part).toEqual({ type: 'refusal', refusal: '' });
    expect(events[6]).toMatchObject({ content_index: 0, refusal: "I can't help." });
    expect(events.at(-1)!.response.output[0].content).toEqual([{ type: 'refusal', refusal: "I can't help." }]);
  });

  it('ends an error event with error then response.failed, keeping what was streamed', async () => {
    const errorEvent = sse({ error: { message: 'Overloaded', type: 'provider_error', param: null, code: 'overloaded_error' } });
    const { events, onEnd } = await run([role, chunk({ content: 'partial' }), errorEvent, done]);
    expect(types(events)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
      'response.failed',
    ]);
    expectSequenced(events);
    expect(events[5]).toEqual({
      type: 'error',
      sequence_number: 5,
      code: 'overloaded_error',
      message: 'Overloaded',
      param: null,
      error: { type: 'provider_error', code: 'overloaded_error', message: 'Overloaded', param: null },
    });
    const final = events[6].response;
    expect(final).toMatchObject({ status: 'failed', error: { code: 'overloaded_error', message: 'Overloaded' }, output_text: 'partial' });
    expect(final.output[0]).toMatchObject({ type: 'message', status: 'incomplete' });
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd.mock.calls[0][0]).toEqual(final);
  });

  it('takes the error code from its type when it has none', async () => {
    const { events } = await run([role, sse({ error: { message: 'Boom', type: 'server_error', param: null, code: null } }), done]);
    expect(events.at(-1)!.response.error).toEqual({ code: 'server_error', message: 'Boom' });
  });

  it('fails a stream whose bytes end with neither a finish reason nor [DONE]', async () => {
    const { events, onEnd } = await run([role, chunk({ content: 'cut' })]);
    expect(types(events).slice(-2)).toEqual(['error', 'response.failed']);
    expect(events.at(-1)!.response).toMatchObject({ status: 'failed', error: { code: 'server_error' } });
    expect(onEnd).toHaveBeenCalledTimes(1);
  });

  it('completes a stream that had its finish reason but lost [DONE]', async () => {
    const { events } = await run([role, chunk({ content: 'whole' }), chunk({}, 'stop')]);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { output_text: 'whole' } });
  });

  it('fails on an event it cannot read, and ignores whatever follows the end', async () => {
    const { events, onEnd } = await run([role, 'data: {not json\n\n', chunk({ content: 'late' }), done]);
    expect(types(events)).toEqual(['response.created', 'response.in_progress', 'error', 'response.failed']);
    expect(onEnd).toHaveBeenCalledTimes(1);
  });

  it('reports a stream destroyed before its end as failed, once; one destroyed after its end not again', async () => {
    const onEnd = vi.fn<(response: ResponseObject) => void>();
    const cut = responsesEventStream(base(), onEnd);
    cut.resume();
    cut.write(role + chunk({ content: 'so far' }));
    cut.destroy();
    await new Promise((resolve) => cut.on('close', resolve));
    expect(onEnd).toHaveBeenCalledTimes(1);
    expect(onEnd.mock.calls[0][0]).toMatchObject({ status: 'failed', output_text: 'so far', output: [{ status: 'incomplete' }] });

    const { onEnd: whole } = await run(textStream);
    expect(whole).toHaveBeenCalledTimes(1);
  });

  it('leaves the base response as it was', async () => {
    const response = base();
    const before = structuredClone(response);
    const stream = responsesEventStream(response, () => {});
    stream.resume();
    stream.end(textStream.join(''));
    await new Promise((resolve) => stream.on('end', resolve));
    expect(response).toEqual(before);
  });
});

describe('responsesEventStream read by the official SDK', () => {
  /** A client whose every request is answered with these chat chunks, through the stream. */
  const clientAnswering = (pieces: string[]) =>
    new OpenAI({
      apiKey: 'test',
      baseURL: 'http://gateway.invalid/v1',
      maxRetries: 0,
      fetch: async () => {
        const { wire } = await run(pieces);
        return new Response(wire, { headers: { 'content-type': 'text/event-stream' } });
      },
    });

  it('accumulates the same final response from the events as response.completed carries', async () => {
    const stream = clientAnswering([
      role,
      chunk({ content_blocks: [{ index: 0, type: 'thinking', thinking: 'Hmm.' }] }),
      chunk({ content: 'Calling.' }),
      chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'f', arguments: '{"a":' } }] }),
      chunk({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'g', arguments: '{}' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '1}' } }] }),
      chunk({}, 'tool_calls'),
      usageChunk(usage),
      done,
    ]).responses.stream({ model: 'm', input: 'hi' });
    const seen: string[] = [];
    let completed: unknown;
    for await (const event of stream) {
      seen.push(event.type);
      if (event.type === 'response.completed') completed = event.response;
    }
    const final = await stream.finalResponse();
    expect(seen.at(-1)).toBe('response.completed');
    expect(final.output_text).toBe('Calling.');
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(final.output[2]).toMatchObject({ call_id: 'call_a', name: 'f', arguments: '{"a":1}' });
    expect(final.usage).toEqual(mappedUsage);
    expect(final).toMatchObject(completed as object);
  });

  it('raises the error as the SDK does for OpenAI', async () => {
    const stream = clientAnswering([
      role,
      chunk({ content: 'x' }),
      sse({ error: { message: 'Overloaded', type: 'provider_error', param: null, code: 'overloaded_error' } }),
      done,
    ]).responses.stream({ model: 'm', input: 'hi' });
    const error = await stream.finalResponse().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).message).toContain('Overloaded');
    expect((error as APIError).code).toBe('overloaded_error');
  });
});
