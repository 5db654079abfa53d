/**
 * Prompt templates that would loop, nest too deep or blow up, and variables that are not plain text:
 * every one is a 400 that names the partial or the limit, when saved where it can be seen then, and
 * when rendered or run otherwise — never a 500, and never a call upstream.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch } from '../support/gateway-client';

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const unique = () => randomBytes(4).toString('hex');

async function as(method: string, path: string, body?: unknown, gatewayKey?: string) {
  const headers: Record<string, string> = {
    ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    ...(gatewayKey ? { 'x-gateway-api-key': gatewayKey } : {}),
  };
  const response = await gatewayFetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, text, body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined };
}

async function partial(name: string, string: string) {
  const created = await as('POST', '/prompts/partials', { name, string });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string };
}

/** A catalog provider on a path of its own of the fake upstream, so a test sees whether a run reached it. */
async function provider() {
  const prefix = `/prompt-limits/${unique()}`;
  const slug = `prm-limits-${unique()}`;
  expect((await as('POST', '/providers', { slug, provider: 'openai', api_key: 'sk-prompt-limits', custom_host: `${upstream.url}${prefix}/v1` })).status).toBe(
    200,
  );
  return { slug, calls: () => upstream.requests.filter((request) => request.path.startsWith(prefix)) };
}

async function prompt(string: string, extra: Record<string, unknown> = {}) {
  const created = await as('POST', '/prompts', { name: `Limits ${unique()}`, model: 'gpt-4o-mini', string, ...extra });
  expect(created.status, created.text).toBe(200);
  return created.body as { id: string };
}

/** Render and run answer the same 400 (not a 500), and the run never reaches the provider. */
async function expectRenderAndRunRefused(variables: Record<string, unknown>, string: string, error: Record<string, unknown>) {
  const target = await provider();
  const { id } = await prompt(string, { provider: `@${target.slug}` });
  const rendered = await as('POST', `/prompts/${id}/render`, { variables });
  expect(rendered.status, rendered.text).toBe(400);
  expect(rendered.body.error).toMatchObject(error);
  const run = await as('POST', `/prompts/${id}/completions`, { variables });
  expect(run.status, run.text).toBe(400);
  expect(run.body.error).toMatchObject(error);
  expect(target.calls()).toHaveLength(0);
}

describe('prompt limits: partials that include themselves', () => {
  it('refuses a partial that includes itself, naming it', async () => {
    const name = `self_${unique()}`;
    const saved = await as('POST', '/prompts/partials', { name, string: `Again: {{#more}}{{>${name}}}{{/more}}` });
    expect(saved.status, saved.text).toBe(400);
    expect(saved.body.error).toMatchObject({ code: 'partial_recursion', param: 'string', message: expect.stringContaining(`${name} → ${name}`) });
    expect((await as('GET', `/prompts/partials/${name}`)).status).toBe(404);
  });

  it('refuses the partial that closes a loop of two, on create and on a new version', async () => {
    const a = `loop_a_${unique()}`;
    const b = `loop_b_${unique()}`;
    await partial(a, `A then {{>${b}}}`);
    const closing = await as('POST', '/prompts/partials', { name: b, string: `B then {{>${a}}}` });
    expect(closing.status, closing.text).toBe(400);
    expect(closing.body.error).toMatchObject({ code: 'partial_recursion', message: expect.stringContaining(`${b} → ${a} → ${b}`) });

    const { id } = await partial(b, 'B alone');
    const version = await as('PUT', `/prompts/partials/${id}`, { string: `B then {{>${a}}}` });
    expect(version.status, version.text).toBe(400);
    expect(version.body.error).toMatchObject({ code: 'partial_recursion', message: expect.stringContaining(`${b} → ${a} → ${b}`) });
    expect((await as('GET', `/prompts/partials/${b}@latest`)).body.version).toBe(1);
  });

  it('refuses to publish a version that would close a loop', async () => {
    const c = `pub_c_${unique()}`;
    const e = `pub_e_${unique()}`;
    await partial(c, 'C alone');
    // Version 2 of c includes e, which does not exist yet: nothing loops while it is unpublished.
    expect((await as('PUT', `/prompts/partials/${c}`, { string: `C then {{>${e}}}` })).body).toMatchObject({ version: 2, published_version: 1 });
    await partial(e, `E then {{>${c}}}`);
    const published = await as('PUT', `/prompts/partials/${c}/makeDefault`, { version: 2 });
    expect(published.status, published.text).toBe(400);
    expect(published.body.error).toMatchObject({ code: 'partial_recursion', param: 'version', message: expect.stringContaining(`${c} → ${e} → ${c}`) });
    expect((await as('GET', `/prompts/partials/${c}`)).body.version).toBe(1);
  });
});

describe('prompt limits: chains of partials', () => {
  const chainNames = (levels: number) => {
    const run = unique();
    return Array.from({ length: levels }, (_, index) => `chain${index + 1}_${run}`);
  };
  /** Partials p1 → p2 → … → pn, created from the top, so each is saved before the one it includes. */
  async function createChain(names: string[]) {
    for (const [index, name] of names.entries())
      await partial(name, index + 1 < names.length ? `${index + 1} {{>${names[index + 1]}}}` : `${index + 1} {{end}}`);
  }

  it('renders a chain of 10 partials', async () => {
    const names = chainNames(10);
    await createChain(names);
    const { id } = await prompt(`{{>${names[0]}}}`);
    const rendered = await as('POST', `/prompts/${id}/render`, { variables: { end: 'done' } });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.data.messages[0].content).toBe('1 2 3 4 5 6 7 8 9 10 done');
  });

  it('answers a chain of 11 with the real limit, not "does not exist", on render and run', async () => {
    const names = chainNames(11);
    const target = await provider();
    // Saved while the chain does not exist yet, so only rendering can see how deep it goes.
    const { id } = await prompt(`{{>${names[0]}}}`, { provider: `@${target.slug}` });
    await createChain(names);
    for (const route of ['render', 'completions']) {
      const answer = await as('POST', `/prompts/${id}/${route}`, { variables: { end: 'done' } });
      expect(answer.status, answer.text).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'partial_chain_too_deep', param: 'string' });
      expect(answer.body.error.message).toContain('the limit is 10 levels');
      expect(answer.body.error.message).toContain(`${names[0]} → ${names[1]}`);
      expect(answer.body.error.message).not.toContain('do not exist');
    }
    expect(target.calls()).toHaveLength(0);
  });

  it('refuses to save a prompt or partial whose chain is deeper than 10, naming the limit', async () => {
    const names = chainNames(11);
    await createChain(names);
    const saved = await as('POST', '/prompts', { name: 'too deep', string: `{{>${names[0]}}}` });
    expect(saved.status, saved.text).toBe(400);
    expect(saved.body.error).toMatchObject({ code: 'partial_chain_too_deep', param: 'string', message: expect.stringContaining('the limit is 10 levels') });
    const top = await as('POST', '/prompts/partials', { name: `top_${unique()}`, string: `{{>${names[1]}}}` });
    expect(top.status, top.text).toBe(400);
    expect(top.body.error).toMatchObject({ code: 'partial_chain_too_deep' });
  });
});

describe('prompt limits: nesting, size and work', () => {
  it('refuses 5,000 nested sections when a prompt or partial is saved, naming the depth limit', async () => {
    const deep = `${'{{#a}}'.repeat(5_000)}x${'{{/a}}'.repeat(5_000)}`;
    for (const [path, body] of [
      ['/prompts', { name: 'deep', string: deep }],
      ['/prompts/partials', { name: `deep_${unique()}`, string: deep }],
      ['/prompts', { name: 'deep messages', string: JSON.stringify([{ role: 'user', content: deep }]) }],
    ] as const) {
      const saved = await as('POST', path, body);
      expect(saved.status, saved.text).toBe(400);
      expect(saved.body.error).toMatchObject({ code: 'template_too_deep', message: expect.stringContaining('the limit is 50') });
    }
    // 50 levels are fine.
    const { id } = await prompt(`${'{{#a}}'.repeat(50)}x${'{{/a}}'.repeat(50)}`);
    expect((await as('POST', `/prompts/${id}/render`, { variables: { a: true } })).body.data.messages[0].content).toBe('x');
  });

  it('stops doubling partials at 1 MB of output: a 6 KB request is a 400 naming the limit', async () => {
    const run = unique();
    const names = Array.from({ length: 10 }, (_, index) => `double${index}_${run}`);
    await partial(names[0]!, '{{v}}');
    for (let index = 1; index < names.length; index++) await partial(names[index]!, `{{>${names[index - 1]}}}{{>${names[index - 1]}}}`);
    // 512 copies of a 6 KB variable would be 3 MB.
    await expectRenderAndRunRefused({ v: 'x'.repeat(6_000) }, `{{>${names[9]}}}`, {
      code: 'prompt_render_too_large',
      param: 'variables',
      message: expect.stringContaining('1 MB'),
    });
  });

  it('stops sections nested over a list when the render budget is spent, even when they print nothing', async () => {
    const list = Array.from({ length: 200 }, (_, index) => index);
    await expectRenderAndRunRefused({ list }, '{{#list}}{{#list}}{{#list}}{{! nothing }}{{/list}}{{/list}}{{/list}}', {
      code: 'prompt_render_too_complex',
      param: 'variables',
      message: expect.stringContaining('1,000,000 steps'),
    });
  });
});

describe('prompt limits: variables are data', () => {
  it('prints an object with toString or valueOf keys as its JSON, and never calls anything', async () => {
    const target = await provider();
    const { id } = await prompt('{{a}} | {{#a}}{{toString}}{{/a}} | {{list}} | {{n}} {{yes}} {{none}}', { provider: `@${target.slug}` });
    const variables = { a: { toString: 'x', valueOf: 1 }, list: ['p', { q: 1 }], n: 2.5, yes: true, none: null };
    const expected = '{"toString":"x","valueOf":1} | x | ["p",{"q":1}] | 2.5 true ';
    const rendered = await as('POST', `/prompts/${id}/render`, { variables });
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.data.messages[0].content).toBe(expected);
    const run = await as('POST', `/prompts/${id}/completions`, { variables });
    expect(run.status, run.text).toBe(200);
    expect(target.calls()[0]!.json).toMatchObject({ messages: [{ role: 'user', content: expected }] });
  });

  it('never finds names on the prototype: {{toString}} and {{constructor}} are missing variables', async () => {
    const { id } = await prompt('{{toString}} {{constructor.name}} {{#valueOf}}on{{/valueOf}}');
    const rendered = await as('POST', `/prompts/${id}/render`, { variables: {} });
    expect(rendered.status, rendered.text).toBe(400);
    expect(rendered.body.error).toMatchObject({
      code: 'missing_variable',
      param: 'variables.toString',
      message: expect.stringContaining('toString, constructor.name'),
    });
  });

  it('treats partial names as names: {{>constructor}} is missing until a partial of that name exists, and __proto__ is a partial like any other', async () => {
    const { id } = await prompt('{{>constructor}}');
    const missing = await as('POST', `/prompts/${id}/render`, { variables: {} });
    expect(missing.status, missing.text).toBe(400);
    expect(missing.body.error).toMatchObject({ code: 'partial_not_found', message: expect.stringContaining('constructor') });

    // A workspace of its own, since partial names are unique per workspace.
    const workspace = (await as('POST', '/workspaces', { name: `Prompt names ${unique()}` })).body;
    const key = (await as('POST', '/api-keys', { name: 'prompt names', role: 'admin', workspace_id: workspace.id })).body.key as string;
    for (const name of ['__proto__', 'constructor']) expect((await as('POST', '/prompts/partials', { name, string: `from ${name}` }, key)).status).toBe(200);
    const created = await as('POST', '/prompts', { name: 'names', model: 'gpt-4o-mini', string: '{{>__proto__}}, {{>constructor}}' }, key);
    const rendered = await as('POST', `/prompts/${created.body.id}/render`, { variables: {} }, key);
    expect(rendered.status, rendered.text).toBe(200);
    expect(rendered.body.data.messages[0].content).toBe('from __proto__, from constructor');
  });
});
