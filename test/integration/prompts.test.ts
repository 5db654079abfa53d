/**
 * Prompt templates through the running gateway: the control routes (versions, patch, publish,
 * partials, workspaces), render golden cases, and runs through the chat-completions pipeline
 * against the fake upstream (whole and streamed, saved config, cache, logs).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch, openaiClient, waitForLogs } from '../support/gateway-client';
import { collectSse } from '../support/sse';

let upstream: FakeUpstream;
let counter = 0;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const unique = () => randomBytes(4).toString('hex');
const json = { 'content-type': 'application/json' };

async function as(method: string, path: string, body?: unknown, gatewayKey?: string, headers: Record<string, string> = {}) {
  const response = await gatewayFetch(path, {
    method,
    headers: { ...(body !== undefined ? json : {}), ...(gatewayKey ? { 'x-gateway-api-key': gatewayKey } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined,
  };
}

/** A catalog provider on a base path of its own of the fake upstream, so a test counts its own calls. */
async function catalogProvider(label: string) {
  const prefix = `/prompts/${label}-${++counter}-${Date.now()}`;
  const slug = `prm-${label}-${unique()}`;
  const created = await as('POST', '/providers', { slug, provider: 'openai', api_key: 'sk-prompt-test', custom_host: `${upstream.url}${prefix}/v1` });
  expect(created.status).toBe(200);
  return { slug, prefix, calls: () => upstream.requests.filter((request) => request.path.startsWith(prefix)) };
}

const messages = (system: string, user: string) =>
  JSON.stringify([
    { role: 'system', content: system },
    { role: 'user', content: user },
  ]);

async function createPrompt(body: Record<string, unknown>) {
  const created = await as('POST', '/prompts', { name: `Prompt ${unique()}`, model: 'gpt-4o-mini', ...body });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string; slug: string; version_id: string; object: string };
}

describe('prompts: control routes', () => {
  it('creates, versions, patches, publishes, lists and deletes a prompt', async () => {
    const created = await createPrompt({
      name: 'Support Reply',
      string: messages('You are {{persona}}.', '{{question}}'),
      parameters: { temperature: 0.2, max_tokens: 100 },
      version_description: 'first',
    });
    expect(created).toMatchObject({ object: 'prompt', version_id: `${created.id}@1` });
    expect(created.id).toMatch(/^prompt_[0-9a-z]{26}$/);
    expect(created.slug).toMatch(/^support-reply/);

    const v1 = await as('GET', `/prompts/${created.slug}`);
    expect(v1.body).toMatchObject({
      id: created.id,
      version: 1,
      latest_version: 1,
      published_version: 1,
      model: 'gpt-4o-mini',
      parameters: { temperature: 0.2, max_tokens: 100 },
    });

    // A PUT without patch stores exactly what it is given.
    const v2 = await as('PUT', `/prompts/${created.id}`, { string: 'Plain {{question}}' });
    expect(v2.body).toMatchObject({ version: 2, latest_version: 2, published_version: 1, string: 'Plain {{question}}' });
    expect(v2.body.parameters).toBeUndefined();
    // With patch, what is left out comes from the latest version.
    const v3 = await as('PUT', `/prompts/${created.id}`, { patch: true, parameters: { temperature: 0.9 }, version_description: 'warmer' });
    expect(v3.body).toMatchObject({ version: 3, string: 'Plain {{question}}', parameters: { temperature: 0.9 }, version_description: 'warmer' });
    const v4 = await as('PUT', `/prompts/${created.id}`, { patch: true, model: 'gpt-4o' });
    expect(v4.body).toMatchObject({ version: 4, string: 'Plain {{question}}', parameters: { temperature: 0.9 }, model: 'gpt-4o' });

    expect((await as('GET', `/prompts/${created.id}`)).body.version).toBe(1);
    expect((await as('GET', `/prompts/${created.id}@latest`)).body.version).toBe(4);
    expect((await as('GET', `/prompts/${created.id}@3`)).body).toMatchObject({ version: 3, parameters: { temperature: 0.9 } });
    expect((await as('GET', `/prompts/${created.id}@9`)).status).toBe(404);

    const published = await as('PUT', `/prompts/${created.id}/makeDefault`, { version: 3 });
    expect(published.body).toMatchObject({ version: 3, published_version: 3 });
    expect((await as('GET', `/prompts/${created.slug}`)).body.version).toBe(3);
    expect((await as('PUT', `/prompts/${created.id}/makeDefault`, { version: 7 })).status).toBe(404);

    const versions = await as('GET', `/prompts/${created.id}/versions`);
    expect(versions.body.data.map((version: any) => [version.version, version.published])).toEqual([
      [4, false],
      [3, true],
      [2, false],
      [1, false],
    ]);

    const list = await as('GET', '/prompts?limit=100');
    expect(list.body.total).toBeGreaterThanOrEqual(1);
    expect(list.body.data.map((prompt: any) => prompt.id)).toContain(created.id);

    expect((await as('DELETE', `/prompts/${created.id}`)).body).toEqual({ id: created.id, object: 'prompt', deleted: true });
    expect((await as('GET', `/prompts/${created.id}`)).status).toBe(404);
    expect((await as('GET', `/prompts/${created.slug}`)).status).toBe(404);
  });

  it('refuses templates and bodies that cannot work, saying what to fix', async () => {
    const bad = async (body: Record<string, unknown>) => (await as('POST', '/prompts', { name: 'bad', ...body })).body.error;
    expect(await bad({ string: 'Hello {{#open}} never closed' })).toMatchObject({ code: 'invalid_prompt_template', param: 'string' });
    expect(await bad({ string: '{"role": "user"}' })).toMatchObject({
      code: 'invalid_prompt_template',
      message: expect.stringContaining('not a list of chat messages'),
    });
    expect(await bad({ string: '[{"content": "no role"}]' })).toMatchObject({ code: 'invalid_prompt_template' });
    expect(await bad({})).toMatchObject({ param: 'string' });
    expect(await bad({ string: 'x', colour: 'red' })).toMatchObject({ param: 'colour' });
    const created = await createPrompt({ string: 'x' });
    expect((await as('PUT', `/prompts/${created.id}`, { parameters: { temperature: 1 } })).body.error).toMatchObject({ param: 'string' });
    expect((await as('PUT', `/prompts/${created.id}@2`, { string: 'y' })).status).toBe(400);
  });

  it('lets members read and render but not write', async () => {
    const member = (await as('POST', '/api-keys', { name: 'prompt member', role: 'member' })).body.key as string;
    const created = await createPrompt({ string: 'Hi {{name}}' });
    expect((await as('GET', `/prompts/${created.id}`, undefined, member)).status).toBe(200);
    expect((await as('POST', `/prompts/${created.id}/render`, { variables: { name: 'Ann' } }, member)).status).toBe(200);
    expect((await as('POST', '/prompts', { name: 'no', string: 'x' }, member)).status).toBe(403);
    expect((await as('PUT', `/prompts/${created.id}`, { string: 'x' }, member)).status).toBe(403);
  });

  it('keeps prompts to their workspace: another workspace gets 404', async () => {
    const created = await createPrompt({ string: 'Secret {{x}}' });
    const workspace = (await as('POST', '/workspaces', { name: `Prompts ${Date.now()}` })).body;
    const key = (await as('POST', '/api-keys', { name: 'other', role: 'admin', workspace_id: workspace.id })).body.key as string;
    expect((await as('GET', `/prompts/${created.id}`, undefined, key)).status).toBe(404);
    expect((await as('GET', `/prompts/${created.slug}`, undefined, key)).status).toBe(404);
    expect((await as('POST', `/prompts/${created.id}/render`, { variables: { x: 1 } }, key)).status).toBe(404);
    expect((await as('POST', `/prompts/${created.id}/completions`, { variables: { x: 1 } }, key)).status).toBe(404);
    expect((await as('PUT', `/prompts/${created.id}`, { string: 'mine' }, key)).status).toBe(404);
    expect((await as('DELETE', `/prompts/${created.id}`, undefined, key)).status).toBe(404);
    expect((await as('GET', '/prompts', undefined, key)).body).toMatchObject({ data: [], total: 0 });
  });

  it('versions partials and includes the published one', async () => {
    const name = `tone_${unique()}`;
    const partial = await as('POST', '/prompts/partials', { name, string: 'Be {{style}}.' });
    expect(partial.body).toMatchObject({ object: 'partial', slug: name, version_id: `${partial.body.id}@1` });
    expect((await as('POST', '/prompts/partials', { name, string: 'again' })).status).toBe(409);
    const prompt = await createPrompt({ string: messages('{{>' + name + '}} Answer briefly.', '{{q}}') });
    const render = async () => (await as('POST', `/prompts/${prompt.id}/render`, { variables: { style: 'kind', q: 'why?' } })).body.data.messages[0].content;
    expect(await render()).toBe('Be kind. Answer briefly.');

    expect((await as('PUT', `/prompts/partials/${name}`, { string: 'Always be {{style}}!' })).body).toMatchObject({ version: 2, published_version: 1 });
    expect(await render()).toBe('Be kind. Answer briefly.');
    expect((await as('PUT', `/prompts/partials/${name}/makeDefault`, { version: 2 })).body.published_version).toBe(2);
    expect(await render()).toBe('Always be kind! Answer briefly.');
    expect((await as('GET', `/prompts/partials/${name}/versions`)).body.data).toHaveLength(2);
    expect((await as('GET', '/prompts/partials?limit=100')).body.data.map((p: any) => p.slug)).toContain(name);

    expect((await as('DELETE', `/prompts/partials/${name}`)).body).toMatchObject({ deleted: true });
    const missing = await as('POST', `/prompts/${prompt.id}/render`, { variables: { style: 'kind', q: 'why?' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'partial_not_found', message: expect.stringContaining(name) });
  });
});

describe('prompts: render', () => {
  const render = async (string: string, variables: Record<string, unknown>, extra: Record<string, unknown> = {}, prompt: Record<string, unknown> = {}) => {
    const created = await createPrompt({ string, ...prompt });
    return as('POST', `/prompts/${created.id}/render`, { variables, ...extra });
  };
  const user = async (string: string, variables: Record<string, unknown>) => {
    const rendered = await render(string, variables);
    expect(rendered.status, rendered.text).toBe(200);
    return rendered.body.data.messages.at(-1).content as string;
  };

  it('renders sections over lists and objects, inverted sections and comments', async () => {
    expect(await user('{{#items}}- {{name}}\n{{/items}}', { items: [{ name: 'a' }, { name: 'b' }] })).toBe('- a\n- b\n');
    expect(await user('{{#user}}{{first}} {{last}}{{/user}}', { user: { first: 'Ada', last: 'Lovelace' } })).toBe('Ada Lovelace');
    expect(await user('{{^items}}none{{/items}}{{! a comment }}', { items: [] })).toBe('none');
    expect(await user('{{#flag}}on{{/flag}}{{^flag}}off{{/flag}}', {})).toBe('off');
    expect(await user('{{#tags}}{{.}},{{/tags}}', { tags: ['x', 'y'] })).toBe('x,y,');
  });

  it('inserts values as given: quotes, newlines, braces and HTML stay intact and never break the message list', async () => {
    const value = 'He said "hi" & <b>left</b>\n{"a": [1]} {{not a tag}}';
    const rendered = await render(messages('sys', 'Q: {{q}}'), { q: value });
    expect(rendered.body).toEqual({
      success: true,
      data: {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: `Q: ${value}` },
        ],
      },
    });
  });

  it('renders content parts', async () => {
    const parts = JSON.stringify([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe {{thing}}' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
    ]);
    const rendered = await render(parts, { thing: 'the cat' });
    expect(rendered.body.data.messages[0].content).toEqual([
      { type: 'text', text: 'Describe the cat' },
      { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
    ]);
  });

  it('names every missing variable, and lets section-only names be absent', async () => {
    const rendered = await render(messages('You are {{persona}}', '{{question}} {{#extra}}{{detail}}{{/extra}}'), { question: 'why' });
    expect(rendered.status).toBe(400);
    expect(rendered.body.error).toMatchObject({ code: 'missing_variable', param: 'variables.persona' });
    expect(rendered.body.error.message).toContain('persona');
    expect(rendered.body.error.message).not.toContain('detail');
  });

  it('puts saved hyperparameters in data, the ones passed at the root over them, and refuses a hyperparameters key', async () => {
    const created = await createPrompt({
      string: 'Hi',
      parameters: { temperature: 0.2, max_tokens: 50 },
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
    });
    const rendered = await as('POST', `/prompts/${created.id}/render`, { variables: {}, temperature: 0.7, stream: true });
    expect(rendered.body.data).toEqual({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Hi' }],
      temperature: 0.7,
      max_tokens: 50,
      tools: [{ type: 'function', function: { name: 'f', parameters: {} } }],
      stream: true,
    });
    const nested = await as('POST', `/prompts/${created.id}/render`, { variables: {}, hyperparameters: { temperature: 1 } });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toMatchObject({ param: 'hyperparameters', message: expect.stringContaining('root') });
    expect((await as('POST', `/prompts/${created.id}/render`, { variables: 'x' })).body.error).toMatchObject({ param: 'variables' });
    expect((await as('POST', '/prompts/prompt_00000000000000000000000000/render', { variables: {} })).status).toBe(404);
  });

  it('renders a body the official client sends as is to /v1/chat/completions', async () => {
    const provider = await catalogProvider('roundtrip');
    const created = await createPrompt({ string: messages('Be brief.', 'Tell me about {{topic}}') });
    const { data } = (await as('POST', `/prompts/${created.id}/render`, { variables: { topic: 'tides' } })).body;
    const completion = await openaiClient({ provider: `@${provider.slug}` }).chat.completions.create(data);
    expect(completion.choices[0]!.message.content).toBe('echo: Tell me about tides');
    expect(provider.calls()).toHaveLength(1);
  });
});

describe('prompts: completions', () => {
  it('runs the published prompt on its saved provider and wraps the answer; the log names the prompt', async () => {
    const provider = await catalogProvider('run');
    const created = await createPrompt({
      string: messages('Be brief.', 'Tell me about {{topic}}'),
      provider: `@${provider.slug}`,
      parameters: { temperature: 0.1 },
    });
    const traceId = `prompt-run-${unique()}`;
    const run = await as('POST', `/prompts/${created.id}/completions`, { variables: { topic: 'tides' }, max_tokens: 20 }, undefined, {
      'x-gateway-trace-id': traceId,
      'x-gateway-metadata': '{"env":"test"}',
    });
    expect(run.status, run.text).toBe(200);
    expect(run.body).toMatchObject({
      status: 'success',
      headers: { 'x-gateway-trace-id': traceId, 'x-gateway-cache-status': 'DISABLED', 'x-gateway-retry-attempt-count': '0' },
    });
    expect(run.body.body).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'echo: Tell me about tides' } }] });
    expect(provider.calls()[0]!.json).toMatchObject({
      model: 'gpt-4o-mini',
      temperature: 0.1,
      max_tokens: 20,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Tell me about tides' },
      ],
    });

    const [record] = await waitForLogs(traceId);
    expect(record).toMatchObject({
      prompt_id: created.id,
      prompt_version: 1,
      metadata: { env: 'test', _prompt: created.id },
      path: `/v1/prompts/${created.id}/completions`,
      status: 200,
    });
  });

  it('streams the chat completion stream, and @latest runs the latest version', async () => {
    const provider = await catalogProvider('stream');
    const created = await createPrompt({ string: 'v1 {{x}}', provider: `@${provider.slug}` });
    await as('PUT', `/prompts/${created.id}`, { patch: true, string: 'v2 {{x}}' });
    const response = await gatewayFetch(`/prompts/${created.id}@latest/completions`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ variables: { x: 'go' }, stream: true }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const sse = await collectSse(response);
    const text = sse.json.map((event: any) => event?.choices?.[0]?.delta?.content ?? '').join('');
    expect(text).toBe('echo: v2 go');
    expect((sse.json[0] as any).choices[0].delta.role).toBe('assistant');
    expect(sse.doneLast).toBe(true);
  });

  it('follows x-gateway-config over the saved provider, and a cache config answers the second run from the cache', async () => {
    const saved = await catalogProvider('saved-provider');
    const routed = await catalogProvider('config');
    const created = await createPrompt({ string: 'cache {{x}}', provider: `@${saved.slug}` });
    const configId = (await as('POST', '/configs', { name: 'prompt cache', config: { provider: `@${routed.slug}`, cache: { mode: 'simple', max_age: 600 } } }))
      .body.id as string;
    const run = () => as('POST', `/prompts/${created.id}/completions`, { variables: { x: 'me' } }, undefined, { 'x-gateway-config': configId });
    const first = await run();
    const second = await run();
    expect(first.body.headers['x-gateway-cache-status']).toBe('MISS');
    expect(second.body.headers['x-gateway-cache-status']).toBe('HIT');
    expect(second.body.body).toEqual(first.body.body);
    expect(routed.calls()).toHaveLength(1);
    expect(saved.calls()).toHaveLength(0);
  });

  it('runs the input guardrails of the config on the rendered prompt', async () => {
    const provider = await catalogProvider('guarded');
    const created = await createPrompt({ string: 'tell me the password for {{system}}', provider: `@${provider.slug}` });
    const guarded = JSON.stringify({
      before_request_hooks: [{ id: 'no-passwords', deny: true, checks: [{ id: 'default.regexMatch', parameters: { rule: 'password', not: true } }] }],
    });
    const denied = await as('POST', `/prompts/${created.id}/completions`, { variables: { system: 'billing' } }, undefined, { 'x-gateway-config': guarded });
    expect(denied.status).toBe(446);
    expect(denied.body.hook_results.before_request_hooks[0]).toMatchObject({ id: 'no-passwords', verdict: false });
    expect(provider.calls()).toHaveLength(0);
  });

  it('answers errors in the gateway shape with the provider status', async () => {
    const provider = await catalogProvider('fail');
    upstream.script(provider.prefix, [{ status: 429, json: { error: { message: 'slow down', type: 'rate_limit_error' } } }]);
    const created = await createPrompt({ string: 'hi {{x}}', provider: `@${provider.slug}` });
    const failed = await as('POST', `/prompts/${created.id}/completions`, { variables: { x: 1 } });
    expect(failed.status).toBe(429);
    expect(failed.body.error).toMatchObject({ message: expect.stringContaining('slow down') });
    const missing = await as('POST', `/prompts/${created.id}/completions`, { variables: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'missing_variable', param: 'variables.x' });
    expect((await as('POST', `/prompts/${created.id}@5/completions`, { variables: { x: 1 } })).status).toBe(404);
    expect((await as('POST', `/prompts/${created.id}/completions`, { variables: { x: 1 }, hyperparameters: { top_p: 1 } })).status).toBe(400);
    expect(provider.calls()).toHaveLength(1);
  });

  it('refuses prompt_id in a config with a 400 that points at the prompt route', async () => {
    const response = await as('POST', '/chat/completions', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }, undefined, {
      'x-gateway-config': JSON.stringify({ provider: 'openai', api_key: 'sk', prompt_id: 'support-reply' }),
    });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatchObject({
      code: 'prompt_id_unsupported',
      param: 'config.prompt_id',
      message: expect.stringContaining('/v1/prompts/support-reply/completions'),
    });
  });
});
