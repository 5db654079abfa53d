/*
 * The fake upstream's Responses API (test/support/fakes/openai-responses.ts), which the native
 * Responses tests read: what it answers, how it keeps a conversation, and its event stream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { parseSse } from '../support/sse';

let up: FakeUpstream;

beforeAll(async () => {
  up = await startFakeUpstream({ chunkCount: 3 });
});
afterAll(async () => {
  await up?.close();
});

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

async function create(body: Record<string, unknown>, path = '/v1/responses'): Promise<{ status: number; json: Json; text: string; type: string | null }> {
  const response = await fetch(up.url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await response.text();
  let json: Json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, type: response.headers.get('content-type') };
}

const text = (response: Json) => response.output.find((item: Json) => item.type === 'message')?.content[0].text;
const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

describe('fake upstream: Responses API', () => {
  it("answers a response object in OpenAI's shape, the text counting the conversation's user turns", async () => {
    const { status, json } = await create({ model: 'gpt-4.1', input: 'Hello', instructions: 'Be brief.' }, '/any/base/responses');
    expect(status).toBe(200);
    expect(json).toMatchObject({
      object: 'response',
      status: 'completed',
      model: 'gpt-4.1',
      instructions: 'Be brief.',
      previous_response_id: null,
      store: true,
    });
    expect(json.id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(json.output).toEqual([
      {
        id: expect.stringMatching(/^msg_[0-9a-f]{48}$/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'echo: Hello (turn 1)' }],
      },
    ]);
    expect(json.usage).toEqual({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: json.usage.input_tokens + 5,
    });
  });

  it('continues a stored response by previous_response_id; an unknown one is a 404, a store: false one is not kept', async () => {
    const first = (await create({ model: 'm', input: [{ role: 'user', content: 'one' }] })).json;
    const second = (await create({ model: 'm', input: 'two', previous_response_id: first.id })).json;
    expect(text(second)).toBe('echo: two (turn 2)');
    expect(second.usage.input_tokens_details.cached_tokens).toBeGreaterThan(0);
    const third = (await create({ model: 'm', input: 'three', previous_response_id: second.id, store: false })).json;
    expect(text(third)).toBe('echo: three (turn 3)');
    const missing = await create({ model: 'm', input: 'four', previous_response_id: third.id });
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({
      error: {
        message: `Previous response with id '${third.id}' not found.`,
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: 'previous_response_not_found',
      },
    });
  });

  it('calls function tools as the chat fake does, and answers their output; an output without its call is a 400', async () => {
    const asked = (await create({ model: 'm', input: 'call a tool please', tools: [weather] })).json;
    const call = asked.output[0];
    expect(call).toMatchObject({ type: 'function_call', status: 'completed', name: 'get_weather', arguments: '{"city":"example"}' });
    expect(call.id).toMatch(/^fc_/);
    expect(call.call_id).toMatch(/^call_/);
    const answered = (
      await create({
        model: 'm',
        previous_response_id: asked.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
        tools: [weather],
      })
    ).json;
    expect(text(answered)).toBe('the tool said: sunny (turn 1)');
    const orphan = await create({
      model: 'm',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'function_call_output', call_id: 'call_nowhere', output: 'x' },
      ],
    });
    expect(orphan.status).toBe(400);
    expect(orphan.json.error.message).toBe('No tool call found for function call output with call_id call_nowhere.');
    const named = (await create({ model: 'm', input: 'hi', tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } })).json;
    expect(named.output[0].name).toBe('get_weather');
  });

  it('searches with web_search_preview, writes JSON from a json_schema, reasons with a summary, and stops at a small max_output_tokens', async () => {
    const searched = (await create({ model: 'm', input: 'news today', tools: [{ type: 'web_search_preview' }] })).json;
    expect(searched.output[0]).toEqual({
      id: expect.stringMatching(/^ws_/),
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'news today' },
    });
    expect(text(searched)).toBe('echo: news today (turn 1)');

    const schema = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } } };
    const structured = (await create({ model: 'm', input: 'x', text: { format: { type: 'json_schema', name: 'person', schema } } })).json;
    expect(JSON.parse(text(structured))).toEqual({ name: 'example', age: 1 });

    const reasoned = (await create({ model: 'o4-mini', input: 'why', reasoning: { effort: 'low', summary: 'auto' }, include: ['reasoning.encrypted_content'] }))
      .json;
    expect(reasoned.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'Thinking about: why' }] });
    expect(reasoned.output[0].encrypted_content).toMatch(/^gAAAAAB/);
    expect(reasoned.usage.output_tokens_details.reasoning_tokens).toBeGreaterThan(0);
    // Its encrypted reasoning comes back without an id (stateless); someone else's is refused.
    const back = await create({
      model: 'o4-mini',
      input: [
        { role: 'user', content: 'why' },
        { ...reasoned.output[0], id: undefined },
        { role: 'user', content: 'more' },
      ],
    });
    expect(back.status).toBe(200);
    const foreign = await create({
      model: 'o4-mini',
      input: [
        { type: 'reasoning', summary: [], encrypted_content: 'gAAAAABother' },
        { role: 'user', content: 'x' },
      ],
    });
    expect(foreign.json.error.code).toBe('invalid_encrypted_content');

    const cut = (await create({ model: 'm', input: 'a long question', max_output_tokens: 2 })).json;
    expect(cut).toMatchObject({ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } });
    expect(text(cut)).toBe('echo: a '); // two tokens of four characters
  });

  it('streams the whole event sequence, numbered from 0, ending in response.completed with the response', async () => {
    const { text: body, type } = await create({ model: 'm', input: 'Hello', stream: true });
    expect(type).toBe('text/event-stream; charset=utf-8');
    const events = parseSse(body);
    const data = events.map((event) => JSON.parse(event.data));
    expect(events.map((event) => event.event)).toEqual(data.map((event) => event.type));
    expect(data.map((event) => event.sequence_number)).toEqual(data.map((_, index) => index));
    expect(data.map((event) => event.type)).toEqual([
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
    const deltas = data.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta);
    expect(deltas.join('')).toBe('echo: Hello (turn 1)');
    expect(data[0].response).toMatchObject({ status: 'in_progress', output: [], usage: null });
    expect(text(data.at(-1).response)).toBe('echo: Hello (turn 1)');
  });

  it('streams function call arguments and an incomplete end; error-midstream fails after two deltas', async () => {
    const calls = parseSse((await create({ model: 'm', input: 'call a tool', tools: [weather], stream: true })).text).map((event) => JSON.parse(event.data));
    const args = calls.filter((event) => event.type === 'response.function_call_arguments.delta').map((event) => event.delta);
    expect(args.join('')).toBe('{"city":"example"}');
    expect(calls.find((event) => event.type === 'response.function_call_arguments.done').arguments).toBe('{"city":"example"}');

    const cut = parseSse((await create({ model: 'm', input: 'long', max_output_tokens: 1, stream: true })).text);
    expect(cut.at(-1)!.event).toBe('response.incomplete');

    const failing = parseSse((await create({ model: 'error-midstream', input: 'x', stream: true })).text);
    expect(failing.slice(-3).map((event) => event.event)).toEqual(['response.output_text.delta', 'error', 'response.failed']);
    expect((await create({ model: 'error-midstream', input: 'x' })).status).toBe(500);
    expect((await create({ model: 'error-503', input: 'x' })).status).toBe(503);
  });
});
