/**
 * Anthropic's Messages API through the gateway with the official @anthropic-ai/sdk client, pointed at
 * the gateway's root (the client adds `/v1/messages`): translated to chat for an OpenAI upstream,
 * sent as it is to Anthropic; whole and streamed answers, tool use over two turns, token counting,
 * errors in Anthropic's shape, and logs another workspace cannot read.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { startFakeAnthropic, type FakeAnthropic } from '../support/fakes/anthropic';
import { env, gatewayFetch, readTrace, waitForLogs } from '../support/gateway-client';
import { connectToGatewayStore } from '../support/gateway-store';

const store = connectToGatewayStore();
const run = Date.now().toString(36);

const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};

/** The SDK pointed at the gateway: the gateway key and provider in its default headers, its own key the provider's. */
function anthropicClient(headers: Record<string, string>, options: { gatewayKey?: string | null } = {}): Anthropic {
  const { gatewayUrl, adminKey } = env();
  const gatewayKey = options.gatewayKey === null ? {} : { 'x-gateway-api-key': options.gatewayKey ?? adminKey };
  return new Anthropic({ baseURL: gatewayUrl.replace(/\/v1\/?$/, ''), apiKey: 'sk-provider', maxRetries: 0, defaultHeaders: { ...gatewayKey, ...headers } });
}

describe('Anthropic clients on /v1/messages', () => {
  let upstream: FakeUpstream;
  let anthropic: FakeAnthropic;
  /** OpenAI behind the gateway: every request translated to chat and back. */
  let overChat: Anthropic;
  /** Anthropic behind the gateway: every request sent as it is. */
  let native: Anthropic;
  beforeAll(async () => {
    upstream = await startFakeUpstream();
    anthropic = await startFakeAnthropic();
    overChat = anthropicClient({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${upstream.url}/v1` });
    native = anthropicClient({ 'x-gateway-provider': 'anthropic', 'x-gateway-custom-host': anthropic.url });
  });
  afterAll(async () => {
    await upstream.close();
    await anthropic.close();
  });

  const chatRequests = () => upstream.requests.filter((request) => request.path.endsWith('/chat/completions'));

  it('creates a message over chat: system, stop sequences and an image translated, the answer in Anthropic shape', async () => {
    const traceId = `messages-chat-${run}`;
    const image = Buffer.from('fake png bytes').toString('base64');
    const message = await overChat.messages.create(
      {
        model: 'gpt-4o-mini',
        max_tokens: 64,
        system: 'Be brief.',
        stop_sequences: ['END'],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Hello there' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: image } },
            ],
          },
        ],
      },
      { headers: { 'x-gateway-trace-id': traceId } },
    );
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: 'gpt-4o-mini', stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: 'text', text: 'echo: Hello there' }]);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);

    const sent = chatRequests().at(-1)!.json as any;
    expect(sent).toMatchObject({ model: 'gpt-4o-mini', max_completion_tokens: 64, stop: ['END'] });
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });
    expect(sent.messages[1].content[1]).toEqual({ type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } });

    const [record] = await waitForLogs(traceId);
    expect(record).toMatchObject({ status: 200 });
    expect(await readTrace(traceId, store.otherWorkspaceKey)).toEqual([]);
  });

  it('streams a message over chat with messages.stream(): Anthropic events, and finalMessage()', async () => {
    const stream = overChat.messages.stream({ model: 'gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Stream this' }] });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    let text = '';
    stream.on('text', (delta) => (text += delta));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'echo: Stream this' }]);
    expect(text).toBe('echo: Stream this');
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    expect(types[0]).toBe('message_start');
    expect(types).toContain('content_block_start');
    expect(types).toContain('content_block_delta');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('uses a tool over two turns over chat', async () => {
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const first = await overChat.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 64,
      tools: [weatherTool],
      tool_choice: { type: 'any' },
      messages: [question],
    });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block) => block.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    expect(typeof (use as Anthropic.ToolUseBlock).input).toBe('object');
    expect((chatRequests().at(-1)!.json as any).tool_choice).toBe('required');

    const second = await overChat.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 64,
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: (use as Anthropic.ToolUseBlock).id, content: 'Sunny, 21 °C' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]).toMatchObject({ type: 'text' });
    const sent = (chatRequests().at(-1)!.json as any).messages;
    expect(sent[1]).toMatchObject({ role: 'assistant', tool_calls: [{ id: (use as Anthropic.ToolUseBlock).id, function: { name: 'get_weather' } }] });
    expect(sent[2]).toEqual({ role: 'tool', tool_call_id: (use as Anthropic.ToolUseBlock).id, content: 'Sunny, 21 °C' });
  });

  it('sends a message to Anthropic as it is, with its version and beta headers, the provider key as x-api-key', async () => {
    const message = await native.messages.create(
      { model: 'claude-sonnet-4-6', max_tokens: 32, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello Claude' }] },
      { headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'fake-beta-2025-01-01' } },
    );
    expect(message.id).toMatch(/^msg_fake/);
    expect(message.content).toEqual([{ type: 'text', text: 'echo: Hello Claude' }]);
    expect(message.usage).toMatchObject({ output_tokens: 7, cache_read_input_tokens: 3 });
    const sent = anthropic.requests.at(-1)!;
    expect(sent.json).toEqual({ model: 'claude-sonnet-4-6', max_tokens: 32, system: 'Be brief.', messages: [{ role: 'user', content: 'Hello Claude' }] });
    expect(sent.headers).toMatchObject({ 'x-api-key': 'sk-provider', 'anthropic-version': '2023-06-01', 'anthropic-beta': 'fake-beta-2025-01-01' });
  });

  it('takes the model from a config target natively', async () => {
    const config = { provider: 'anthropic', api_key: 'sk-ant-config', custom_host: anthropic.url, override_params: { model: 'claude-opus-4-7' } };
    const client = anthropicClient({ 'x-gateway-config': JSON.stringify(config) });
    const message = await client.messages.create({ model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'Which model?' }] });
    expect(message.model).toBe('claude-opus-4-7');
    expect(anthropic.requests.at(-1)!.json.model).toBe('claude-opus-4-7');
    expect(anthropic.requests.at(-1)!.headers['x-api-key']).toBe('sk-ant-config');
  });

  it('falls back from Anthropic (native) to OpenAI (translated) within one request', async () => {
    const config = {
      strategy: { mode: 'fallback', on_status_codes: [529] },
      targets: [
        { provider: 'anthropic', api_key: 'sk-ant-config', custom_host: anthropic.url, override_params: { model: 'error-529' } },
        { provider: 'openai', custom_host: `${upstream.url}/v1`, override_params: { model: 'gpt-4o-mini' } },
      ],
    };
    const client = anthropicClient({ 'x-gateway-config': JSON.stringify(config) });
    const tried = anthropic.requests.length;
    const { data, response } = await client.messages
      .create({ model: 'claude-sonnet-4-6', max_tokens: 16, messages: [{ role: 'user', content: 'Fall back' }] })
      .withResponse();
    expect(anthropic.requests.length).toBe(tried + 1);
    expect(response.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(data).toMatchObject({ type: 'message', model: 'gpt-4o-mini', content: [{ type: 'text', text: 'echo: Fall back' }] });
  });

  it('streams natively and uses a tool over two turns at Anthropic', async () => {
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const stream = native.messages.stream({ model: 'claude-sonnet-4-6', max_tokens: 64, tools: [weatherTool], messages: [question] });
    const first = await stream.finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
    expect(use.input).toEqual({ city: 'example' });
    expect(anthropic.requests.at(-1)!.json.stream).toBe(true);

    const second = await native.messages.create({
      model: 'claude-sonnet-4-6',
      max_tokens: 64,
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny' }] },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'The tool said: Sunny' }]);
  });

  it('counts tokens at Anthropic, and says why it cannot elsewhere', async () => {
    const counted = await native.messages.countTokens({ model: 'claude-sonnet-4-6', messages: [{ role: 'user', content: 'Count me' }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(anthropic.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');

    const refused = await overChat.messages.countTokens({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Count me' }] }).catch((error) => error);
    expect(refused).toBeInstanceOf(Anthropic.NotFoundError);
    expect(refused.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(refused.error.error.message).toContain('openai has none');
  });

  it('caches a message under its own operation, and replays a hit as Anthropic events', async () => {
    const config = { provider: 'openai', custom_host: `${upstream.url}/v1`, cache: { mode: 'simple', max_age: 600 } };
    const cached = anthropicClient({ 'x-gateway-config': JSON.stringify(config) });
    const body = { model: 'gpt-4o-mini', max_tokens: 32, messages: [{ role: 'user' as const, content: `Cache me ${run}` }] };
    const first = await cached.messages.create(body).withResponse();
    expect(first.response.headers.get('x-gateway-cache-status')).toBe('MISS');
    const calls = chatRequests().length;
    const second = await cached.messages.create(body).withResponse();
    expect(second.response.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(second.data.content).toEqual(first.data.content);
    const replayed = await cached.messages.stream(body).finalMessage();
    expect(replayed.content).toEqual([{ type: 'text', text: `echo: Cache me ${run}` }]);
    expect(chatRequests().length).toBe(calls);
  });

  it('runs input guardrails on the last user text and refuses in Anthropic shape with the hook results', async () => {
    const config = {
      provider: 'openai',
      custom_host: `${upstream.url}/v1`,
      before_request_hooks: [{ id: 'short', deny: true, checks: [{ id: 'default.wordCount', parameters: { maxWords: 3 } }] }],
    };
    const guarded = anthropicClient({ 'x-gateway-config': JSON.stringify(config) });
    const refused = await guarded.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'Please tell me everything about Paris' }] })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(Anthropic.APIError);
    expect(refused.status).toBe(446);
    expect(refused.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, hook_results: { before_request_hooks: [{ id: 'short' }] } });
    const passed = await guarded.messages.create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'Hi there' }] });
    expect(passed.content).toEqual([{ type: 'text', text: 'echo: Hi there' }]);
  });

  it('judges answers with output guardrails: a held stream passes as Anthropic events, a failed one is refused in Anthropic shape', async () => {
    const judgedBy = (words: string[], deny: boolean) =>
      anthropicClient({
        'x-gateway-config': JSON.stringify({
          provider: 'openai',
          custom_host: `${upstream.url}/v1`,
          after_request_hooks: [{ id: 'words', deny, checks: [{ id: 'default.contains', parameters: { words, operator: 'none' } }] }],
        }),
      });
    const body = { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user' as const, content: 'Judge me' }] };

    const held = await judgedBy(['forbidden'], true).messages.stream(body).finalMessage();
    expect(held.content).toEqual([{ type: 'text', text: 'echo: Judge me' }]);

    const refused = await judgedBy(['echo'], true)
      .messages.stream(body)
      .finalMessage()
      .catch((error) => error);
    expect(refused.status).toBe(446);
    expect(refused.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, hook_results: { after_request_hooks: [{ id: 'words' }] } });

    const flagged = await judgedBy(['echo'], false).messages.create(body).withResponse();
    expect(flagged.response.status).toBe(246);
    expect(flagged.data.content).toEqual([{ type: 'text', text: 'echo: Judge me' }]);
  });

  it('answers errors in Anthropic shape: 401 without a gateway key, 400 for a bad body, a provider error', async () => {
    const keyless = anthropicClient({ 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${upstream.url}/v1` }, { gatewayKey: null });
    const unauthorized = await keyless.messages
      .create({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] })
      .catch((error) => error);
    expect(unauthorized).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(unauthorized.error).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    expect(unauthorized.error.error.message).toContain('x-gateway-api-key');

    const bad = await overChat.messages.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } as never).catch((error) => error);
    expect(bad).toBeInstanceOf(Anthropic.BadRequestError);
    expect(bad.error).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } });

    for (const body of [
      'not json',
      '[]',
      JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'document' }] }] }),
    ]) {
      const response = await gatewayFetch('/messages', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gateway-provider': 'openai', 'x-gateway-custom-host': `${upstream.url}/v1` },
        body,
      });
      expect(response.status, body).toBe(400);
      expect(await response.json(), body).toEqual({ type: 'error', error: { type: 'invalid_request_error', message: expect.any(String) } });
    }

    const limited = await native.messages.create({ model: 'error-429', max_tokens: 8, messages: [{ role: 'user', content: 'hi' }] }).catch((error) => error);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect(limited.error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error', message: 'Fake rate_limit_error for error-429.' } });
  });
});
