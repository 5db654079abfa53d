/**
 * The Responses API through the gateway with the official openai client: a response made natively
 * by OpenAI or from any other provider's chat answer, stored, fetched, listed, deleted, chained at
 * the provider by its own id, across providers and through a fallback, streamed as OpenAI's events;
 * built-in tools, reasoning as thinking, store: false, refusals, another workspace, logs.
 */
import OpenAI, { NotFoundError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fakes/anthropic';
import { env, openaiClient, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore } from '../support/gateway-store';
import { pollUntil } from '../support/poll';

const store = connectToGatewayStore();
const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};

/** A whole Responses answer, as OpenAI sends it, for a scripted step. */
const lateResponse = {
  id: `resp_${'0'.repeat(48)}`,
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'gpt-4o-mini',
  output: [{ type: 'message', id: 'msg_late', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'too late', annotations: [] }] }],
  usage: { input_tokens: 3, input_tokens_details: { cached_tokens: 0 }, output_tokens: 2, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 5 },
};

/** A chat message's text, whether its content is a string or parts. */
const messageText = (message: { content: string | { text: string }[] }) =>
  typeof message.content === 'string' ? message.content : message.content.map((part) => part.text).join('');

describe('the Responses API', () => {
  let anthropic: FakeAnthropic;
  let upstream: FakeUpstream;
  /** OpenAI, which runs the Responses API itself. */
  let openai: OpenAI;
  /** An OpenAI-compatible provider without it: its requests are translated to chat. */
  let compat: OpenAI;
  let claude: OpenAI;
  beforeAll(async () => {
    anthropic = await startFakeAnthropic();
    upstream = await startFakeUpstream();
    openai = openaiClient({ provider: 'openai', headers: { 'x-gateway-custom-host': `${upstream.url}/v1` } });
    compat = openaiClient({ provider: 'groq', headers: { 'x-gateway-custom-host': `${upstream.url}/v1` } });
    claude = openaiClient({ provider: 'anthropic', apiKey: 'sk-ant-responses', headers: { 'x-gateway-custom-host': anthropic.url } });
  });
  afterAll(async () => {
    await anthropic.close();
    await upstream.close();
  });

  it('answers, stores, lists the input items of, and deletes a response', async () => {
    const response = await openai.responses.create({ model: 'gpt-4o-mini', input: 'hello there', instructions: 'Be brief.', metadata: { topic: 'greeting' } });
    expect(response).toMatchObject({ object: 'response', status: 'completed', instructions: 'Be brief.', metadata: { topic: 'greeting' }, error: null });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('echo: hello there (turn 1)');
    expect(response.output[0]).toMatchObject({
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'echo: hello there (turn 1)' }],
    });
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe((response.usage?.input_tokens ?? 0) + (response.usage?.output_tokens ?? 0));
    // OpenAI got the request as it was sent, at its Responses API; the id answered is the gateway's own.
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/responses');
    expect(sent.json).toMatchObject({ model: 'gpt-4o-mini', input: 'hello there', instructions: 'Be brief.', metadata: { topic: 'greeting' } });
    expect(response.id).toMatch(/^resp_[0-9a-z]{26}$/);

    const fetched = await openai.responses.retrieve(response.id);
    expect(fetched).toMatchObject({ id: response.id, status: 'completed', output_text: 'echo: hello there (turn 1)' });
    const items = await openai.responses.inputItems.list(response.id);
    expect(items.data).toEqual([expect.objectContaining({ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello there' }] })]);

    expect(await openai.responses.delete(response.id)).toMatchObject({ id: response.id, object: 'response.deleted', deleted: true });
    await expect(openai.responses.retrieve(response.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it('translates a request for a provider without the Responses API into its chat format', async () => {
    const response = await compat.responses.create({ model: 'llama-3.3-70b', input: 'hello there', instructions: 'Be brief.' });
    expect(response).toMatchObject({ object: 'response', status: 'completed', output_text: 'echo: hello there' });
    const sent = upstream.requests.at(-1)!;
    expect(sent.path).toBe('/v1/chat/completions');
    // The instructions went first, as a system message.
    expect((sent.json as any).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'hello there' },
    ]);
  });

  it("continues at OpenAI by OpenAI's own id, and sends the history to OpenAI under another key", async () => {
    const first = await openai.responses.create({ model: 'gpt-4o-mini', input: 'my name is Ada' });
    const second = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'what is my name?' });
    expect(second).toMatchObject({ output_text: 'echo: what is my name? (turn 2)', previous_response_id: first.id });
    const chained = upstream.requests.at(-1)!.json as any;
    // Only the new input went, with the id OpenAI gave the first response (not the gateway's).
    expect(chained.input).toEqual([{ type: 'message', role: 'user', content: 'what is my name?' }]);
    expect(chained.previous_response_id).toMatch(/^resp_[0-9a-f]{48}$/);
    expect(chained.previous_response_id).not.toBe(first.id);

    // Another key is another OpenAI account, which never saw the first response: it gets the conversation.
    const otherKey = openaiClient({ provider: 'openai', apiKey: 'sk-another-account', headers: { 'x-gateway-custom-host': `${upstream.url}/v1` } });
    const third = await otherKey.responses.create({ model: 'gpt-4o-mini', previous_response_id: second.id, input: 'and again?' });
    expect(third.output_text).toBe('echo: and again? (turn 3)');
    const rebuilt = upstream.requests.at(-1)!.json as any;
    expect(rebuilt.previous_response_id).toBeUndefined();
    expect(rebuilt.input.map((item: any) => item.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(rebuilt.input.some((item: any) => 'id' in item)).toBe(false);
  });

  it('runs built-in tools natively, and a conversation that used one goes on elsewhere', async () => {
    const searched = await openai.responses.create({ model: 'gpt-4o-mini', input: 'latest gateway news', tools: [{ type: 'web_search_preview' }] });
    expect(searched.output.map((item) => item.type)).toEqual(['web_search_call', 'message']);
    const next = await claude.responses.create({ model: 'claude-sonnet-4-20250514', previous_response_id: searched.id, input: 'summarise that' });
    expect(next.output_text).toBe('echo: summarise that');
    // The search call has no chat form: Anthropic got the question, the answer it led to, and the new turn.
    expect(anthropic.requests.at(-1)!.json.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'user']);
  });

  it('streams OpenAI’s own events with the gateway’s id on the response, and stores what they made', async () => {
    const stream = openai.responses.stream({ model: 'gpt-4o-mini', input: 'stream natively' });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const final = await stream.finalResponse();
    expect(final.id).toMatch(/^resp_[0-9a-z]{26}$/);
    expect(final.output_text).toBe('echo: stream natively (turn 1)');
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
    const stored = await pollUntil(
      () => openai.responses.retrieve(final.id),
      (response) => response.status === 'completed',
      5_000,
    );
    expect(stored.output_text).toBe(final.output_text);
    // Chained from the stream's response, OpenAI is named its own id again.
    const next = await openai.responses.create({ model: 'gpt-4o-mini', previous_response_id: final.id, input: 'more' });
    expect(next.output_text).toBe('echo: more (turn 2)');
    expect((upstream.requests.at(-1)!.json as any).previous_response_id).toMatch(/^resp_[0-9a-f]{48}$/);
  });

  it('asks Anthropic to think for reasoning.effort, and answers its thinking as a reasoning item', async () => {
    anthropic.script({
      status: 200,
      json: {
        id: 'msg_thinking',
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-20250514',
        content: [
          { type: 'thinking', thinking: 'The user wants a number; 7 will do.', signature: 'sig' },
          { type: 'text', text: 'Seven.' },
        ],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 12, output_tokens: 30 },
      },
    });
    const response = await claude.responses.create({
      model: 'claude-sonnet-4-20250514',
      input: 'pick a number',
      reasoning: { effort: 'low', summary: 'auto' },
    });
    expect(anthropic.requests.at(-1)!.json.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
    expect(response.output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: 'The user wants a number; 7 will do.' }] });
    expect(response.output_text).toBe('Seven.');
  });

  it('runs function tools over two turns at Anthropic, the second from the stored first', async () => {
    const first = await claude.responses.create({ model: 'claude-sonnet-4-20250514', input: 'What is the weather in Paris?', tools: [weatherTool] });
    const call = first.output.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(JSON.parse((call as any).arguments)).toHaveProperty('city');
    const second = await claude.responses.create({
      model: 'claude-sonnet-4-20250514',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: (call as any).call_id, output: '22 °C and sunny' }],
      tools: [weatherTool],
    });
    expect(second.output_text).toBe('The tool said: 22 °C and sunny');
    expect(second.previous_response_id).toBe(first.id);
    // Anthropic got the whole conversation: the question, its tool use, and the result under the same id.
    const sent = anthropic.requests.at(-1)!.json;
    expect(sent.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'user']);
    expect(sent.messages[1].content.find((block: any) => block.type === 'tool_use').id).toBe((call as any).call_id);
    expect(sent.messages[2].content[0]).toMatchObject({ type: 'tool_result', tool_use_id: (call as any).call_id });
  });

  it('continues a conversation started at one provider at another', async () => {
    const first = await openai.responses.create({ model: 'gpt-4o-mini', input: 'my name is Ada' });
    const second = await claude.responses.create({ model: 'claude-sonnet-4-20250514', previous_response_id: first.id, input: 'what is my name?' });
    expect(second.output_text).toBe('echo: what is my name?');
    expect(anthropic.requests.at(-1)!.json.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'my name is Ada' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'echo: my name is Ada (turn 1)' }] },
      { role: 'user', content: 'what is my name?' },
    ]);
  });

  it('keeps the history through a fallback in the middle of a conversation', async () => {
    const first = await openai.responses.create({ model: 'gpt-4o-mini', input: 'remember 42' });
    const config = {
      strategy: { mode: 'fallback' },
      targets: [
        { provider: 'openai', api_key: 'sk-down', custom_host: `${upstream.url}/v1`, override_params: { model: 'error-500' } },
        { provider: 'anthropic', api_key: 'sk-ant-fallback', custom_host: anthropic.url, override_params: { model: 'claude-sonnet-4-20250514' } },
      ],
    };
    const fallback = openaiClient({ provider: null, headers: { 'x-gateway-config': JSON.stringify(config) } });
    const second = await fallback.responses.create({ model: 'gpt-4o-mini', previous_response_id: first.id, input: 'which number?' });
    expect(second.status).toBe('completed');
    expect(second.output_text).toBe('echo: which number?');
    const texts = anthropic.requests
      .at(-1)!
      .json.messages.map((message: any) => (typeof message.content === 'string' ? message.content : message.content[0].text));
    expect(texts).toEqual(['remember 42', 'echo: remember 42 (turn 1)', 'which number?']);
  });

  it('streams OpenAI’s events from Anthropic’s stream, and the client’s final response matches the stored one', async () => {
    const stream = claude.responses.stream({ model: 'claude-sonnet-4-20250514', input: 'stream this please' });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const final = await stream.finalResponse();
    expect(text).toBe('echo: stream this please');
    expect(final.output_text).toBe(text);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(final.usage?.output_tokens).toBeGreaterThan(0);
    const stored = await claude.responses.retrieve(final.id);
    expect(stored).toMatchObject({ id: final.id, status: 'completed', output_text: text });
  });

  it('asks for JSON by the schema text.format names', async () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    await compat.responses.create({
      model: 'llama-3.3-70b',
      input: 'json please',
      text: { format: { type: 'json_schema', name: 'reply', schema, strict: true } },
    });
    expect((upstream.requests.at(-1)!.json as any).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'reply', schema, strict: true } });
  });

  it('keeps nothing of a store: false response, and says so when it is chained from', async () => {
    const response = await openai.responses.create({ model: 'gpt-4o-mini', input: 'forget me', store: false });
    expect((response as unknown as { store: boolean }).store).toBe(false);
    await expect(openai.responses.retrieve(response.id)).rejects.toBeInstanceOf(NotFoundError);
    const chained = await openai.responses.create({ model: 'gpt-4o-mini', input: 'and then?', previous_response_id: response.id }).catch((error) => error);
    expect(chained).toMatchObject({ status: 400, code: 'previous_response_not_stored', param: 'previous_response_id' });
    const unknown = await openai.responses
      .create({ model: 'gpt-4o-mini', input: 'x', previous_response_id: 'resp_0000000000000000000000zzzz' })
      .catch((error) => error);
    expect(unknown).toMatchObject({ status: 404, code: 'previous_response_not_found' });
  });

  it('refuses metadata beyond its limits, naming the key, and a built-in tool it cannot run', async () => {
    const longKey = 'k'.repeat(65);
    const refused = await openai.responses.create({ model: 'gpt-4o-mini', input: 'x', metadata: { [longKey]: 'v' } }).catch((error) => error);
    expect(refused).toMatchObject({ status: 400, param: 'metadata' });
    expect(refused.message).toContain(longKey);
    const tooMany = Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v']));
    expect(await openai.responses.create({ model: 'gpt-4o-mini', input: 'x', metadata: tooMany }).catch((error) => error)).toMatchObject({
      status: 400,
      param: 'metadata',
    });
    const builtIn = await claude.responses
      .create({ model: 'claude-sonnet-4-20250514', input: 'x', tools: [{ type: 'web_search_preview' }] })
      .catch((error) => error);
    expect(builtIn).toMatchObject({ status: 400, param: 'tools[0].type' });
  });

  it('is invisible to another workspace', async () => {
    const response = await openai.responses.create({ model: 'gpt-4o-mini', input: 'mine only' });
    const other = new OpenAI({ baseURL: env().gatewayUrl, apiKey: 'unused', maxRetries: 0, defaultHeaders: { 'x-gateway-api-key': store.otherWorkspaceKey } });
    await expect(other.responses.retrieve(response.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.responses.inputItems.list(response.id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.responses.delete(response.id)).rejects.toBeInstanceOf(NotFoundError);
    expect((await openai.responses.retrieve(response.id)).id).toBe(response.id);
  });

  it('runs a background response on the queue: answered queued, then completed, fetched by GET', async () => {
    const queued = await openai.responses.create({ model: 'gpt-4o-mini', input: 'in the background', background: true });
    expect(queued).toMatchObject({ status: 'queued', background: true, output: [] });
    const done = await pollUntil(
      () => openai.responses.retrieve(queued.id),
      (response) => !['queued', 'in_progress'].includes(response.status ?? ''),
      15_000,
    );
    expect(done).toMatchObject({ id: queued.id, status: 'completed', background: true, output_text: 'echo: in the background (turn 1)' });
    // The worker ran it at OpenAI as it is, the background run being the gateway's.
    expect(upstream.requests.some((request) => request.path === '/v1/responses' && (request.json as any)?.input === 'in the background')).toBe(true);
    expect(done.usage?.total_tokens).toBeGreaterThan(0);
    // Ended: a cancel is refused and leaves it as it was.
    expect(await openai.responses.cancel(queued.id).catch((error) => error)).toMatchObject({ status: 409, code: 'response_not_cancellable' });
    expect((await openai.responses.retrieve(queued.id)).status).toBe('completed');
  });

  it('cancels a background response that is still running; its late answer is dropped', async () => {
    upstream.script('/v1/responses', [{ status: 200, delayMs: 2_000, json: lateResponse }]);
    const queued = await openai.responses.create({ model: 'gpt-4o-mini', input: 'slow one', background: true });
    const cancelled = await openai.responses.cancel(queued.id);
    expect(cancelled).toMatchObject({ id: queued.id, status: 'cancelled' });
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(await openai.responses.retrieve(queued.id)).toMatchObject({ status: 'cancelled', output: [] });
    const live = await openai.responses.create({ model: 'gpt-4o-mini', input: 'not background' });
    expect(await openai.responses.cancel(live.id).catch((error) => error)).toMatchObject({ status: 400 });
  });

  it('refuses background with store: false or stream', async () => {
    expect(await openai.responses.create({ model: 'gpt-4o-mini', input: 'x', background: true, store: false }).catch((error) => error)).toMatchObject({
      status: 400,
      param: 'store',
    });
  });

  it('passes a provider’s context-length error on with truncation disabled, and with auto drops the oldest turn and asks again', async () => {
    const tooLong = {
      status: 400,
      json: {
        error: {
          message: "This model's maximum context length is 8192 tokens.",
          type: 'invalid_request_error',
          param: 'messages',
          code: 'context_length_exceeded',
        },
      },
    };
    const first = await compat.responses.create({ model: 'llama-3.3-70b', input: 'the oldest turn' });
    upstream.script('/v1/chat/completions', [tooLong]);
    const refused = await compat.responses.create({ model: 'llama-3.3-70b', previous_response_id: first.id, input: 'next' }).catch((error) => error);
    expect(refused).toMatchObject({ status: 400, code: 'context_length_exceeded' });

    upstream.script('/v1/chat/completions', [tooLong]);
    const truncated = await compat.responses.create({ model: 'llama-3.3-70b', previous_response_id: first.id, input: 'next', truncation: 'auto' });
    expect(truncated).toMatchObject({ status: 'completed', truncation: 'auto', output_text: 'echo: next' });
    const [tooMuch, fitted] = upstream.requests.slice(-2).map((request) => (request.json as any).messages.map(messageText));
    expect(tooMuch).toEqual(['the oldest turn', 'echo: the oldest turn', 'next']);
    expect(fitted).toEqual(['next']);
  });

  it('drops what does not fit a model’s known context window before the call, never the newest turn', async () => {
    // gpt-3.5-turbo's window is 16,385 tokens: a first turn of about 20,000 does not fit beside the next.
    const first = await compat.responses.create({ model: 'gpt-3.5-turbo', input: 'long '.repeat(16_000) });
    const calls = upstream.requests.length;
    const next = await compat.responses.create({ model: 'gpt-3.5-turbo', previous_response_id: first.id, input: 'short question', truncation: 'auto' });
    expect(next.status).toBe('completed');
    expect(upstream.requests.length).toBe(calls + 1);
    expect((upstream.requests.at(-1)!.json as any).messages.map(messageText)).toEqual(['short question']);
  });

  it('is cached and guarded like any request: a hit gets a new id, a redacted input reaches the provider redacted, a denied one nothing', async () => {
    const config = {
      provider: 'openai',
      api_key: 'sk-cached',
      custom_host: `${upstream.url}/v1`,
      cache: { mode: 'simple' },
      input_guardrails: [{ id: 'pii', 'default.pii': { categories: ['email'], redact: true } }],
    };
    const guarded = openaiClient({ provider: null, headers: { 'x-gateway-config': JSON.stringify(config) } });
    const ask = { model: 'gpt-4o-mini', input: `write to jane.doe@example.com about ${Date.now()}` };
    const first = await guarded.responses.create(ask).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(JSON.stringify(upstream.requests.at(-1)!.json)).not.toContain('jane.doe@example.com');
    const calls = upstream.requests.length;
    const second = await guarded.responses.create(ask).withResponse();
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(upstream.requests.length).toBe(calls);
    expect(second.data.id).not.toBe(first.data.id);
    expect(second.data.output_text).toBe(first.data.output_text);
    // A streamed request is served the stored answer as Responses events, under its own id.
    const stream = guarded.responses.stream(ask);
    for await (const _event of stream);
    const replayed = await stream.finalResponse();
    expect(upstream.requests.length).toBe(calls);
    expect(replayed.output_text).toBe(first.data.output_text);
    expect([first.data.id, second.data.id]).not.toContain(replayed.id);
    expect(
      (
        await pollUntil(
          () => guarded.responses.retrieve(replayed.id),
          (response) => response.status === 'completed',
          5_000,
        )
      ).id,
    ).toBe(replayed.id);

    const denying = { ...config, input_guardrails: [{ id: 'no-secrets', deny: true, 'default.contains': { words: ['secret'], operator: 'none' } }] };
    const denied = await openaiClient({ provider: null, headers: { 'x-gateway-config': JSON.stringify(denying) } })
      .responses.create({ model: 'gpt-4o-mini', input: 'the secret is 42' })
      .catch((error) => error);
    expect(denied.status).toBe(446);
    expect(upstream.requests.length).toBe(calls);
  });

  it('is logged like any request, with its usage', async () => {
    const traceId = `trace-responses-${Date.now()}`;
    await openai.responses.create({ model: 'gpt-4o-mini', input: 'log me' }, { headers: { 'x-gateway-trace-id': traceId } });
    const [log] = await waitForLogs(traceId);
    expect(log).toMatchObject({ status: 200, path: '/v1/responses' });
    expect(log.usage.total_tokens).toBeGreaterThan(0);
  });
});
