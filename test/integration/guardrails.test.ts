import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch, openaiClient, waitForLogs } from '../support/gateway-client';
import { collectSse } from '../support/sse';

const json = { 'content-type': 'application/json' };

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const host = (label: string) => ownPath(upstream, 'hooks', label);

const target = (h: { custom_host: string }, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  api_key: 'sk-hooks',
  custom_host: h.custom_host,
  ...extra,
});
const chat = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }], ...extra });

async function post(config: unknown, body: unknown, headers: Record<string, string> = {}) {
  const response = await gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: { ...json, 'x-gateway-config': JSON.stringify(config), ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

const noPasswords = { id: 'no-passwords', checks: [{ id: 'default.regexMatch', parameters: { rule: 'password', flags: 'i', not: true } }] };
const shortEnough = { id: 'short', checks: [{ id: 'default.wordCount', parameters: { minWords: 1, maxWords: 50 } }] };
const chatCompletion = (content: string) => ({
  id: 'chatcmpl-scripted',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 3, total_tokens: 6 },
});

describe('hooks on the input side', () => {
  it('denies with 446 before any provider call, and says which checks failed', async () => {
    const h = host('deny');
    const client = openaiClient({ headers: { 'x-gateway-config': JSON.stringify(target(h, { before_request_hooks: [{ ...noPasswords, deny: true }] })) } });
    const error = await client.chat.completions.create(chat('my password is hunter2') as any).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(446);
    const body = (error as APIError).error as any;
    expect(body).toMatchObject({ type: 'hooks_failed', code: 'hooks_failed' });
    expect(body.message).toContain('no-passwords (default.regexMatch)');
    const raw = await post(target(h, { before_request_hooks: [{ ...noPasswords, deny: true }] }), chat('my password is hunter2'));
    expect(raw.body.hook_results.before_request_hooks[0]).toMatchObject({
      id: 'no-passwords',
      verdict: false,
      deny: true,
      async: false,
      type: 'guardrail',
      transformed: false,
      checks: [{ id: 'default.regexMatch', verdict: false }],
    });
    expect(h.calls()).toBe(0);
  });

  it('flags without deny: the provider answers, the status is 246 and the body carries hook_results', async () => {
    const h = host('flag');
    const config = target(h, {
      input_guardrails: [{ id: 'words', 'default.contains': { words: ['please'], operator: 'any' } }],
      before_request_hooks: [shortEnough],
    });
    const flagged = await post(config, chat('give me the report'));
    expect(flagged.status).toBe(246);
    expect(flagged.body.choices[0].message.content).toContain('give me the report');
    // Input guardrails run before before-request hooks.
    expect(flagged.body.hook_results.before_request_hooks.map((result: any) => [result.id, result.verdict])).toEqual([
      ['words', false],
      ['short', true],
    ]);
    const client = openaiClient({ headers: { 'x-gateway-config': JSON.stringify(config) } });
    const answer = await client.chat.completions.create(chat('give me the report, please') as any).withResponse();
    expect(answer.response.status).toBe(200);
    expect((answer.data as any).hook_results.before_request_hooks.every((result: any) => result.verdict)).toBe(true);
    expect(h.calls()).toBe(2);
  });

  it('rewrites what the provider receives with a redacting check', async () => {
    const h = host('redact');
    const config = target(h, { input_guardrails: [{ id: 'pii', 'default.pii': { categories: ['email'], redact: true } }] });
    const answered = await post(config, chat('write to jane.doe@example.com about the invoice'));
    expect(answered.status).toBe(200);
    const sent = h.sent()[0].messages.at(-1).content as string;
    expect(sent).not.toContain('jane.doe@example.com');
    expect(sent).toContain('about the invoice');
    expect(answered.body.hook_results.before_request_hooks[0]).toMatchObject({ id: 'pii', verdict: true, transformed: true });
  });

  it('runs a cached request through its input checks: a hit never bypasses them', async () => {
    const h = host('cached-input');
    const cached = target(h, { cache: { mode: 'simple' } });
    expect((await post(cached, chat('the password is swordfish'))).headers.get('x-gateway-cache-status')).toBe('MISS');
    const denied = await post({ ...cached, before_request_hooks: [{ ...noPasswords, deny: true }] }, chat('the password is swordfish'));
    expect(denied.status).toBe(446);
    expect(h.calls()).toBe(1);
  });
});

describe('hooks on the output side', () => {
  it('withholds a failing answer with 446 and falls back to a target whose answer passes', async () => {
    const [a, b] = [host('out-a'), host('out-b')];
    upstream.script(a.prefix, [{ status: 200, json: chatCompletion('this answer holds a forbidden word') }]);
    const config = {
      strategy: { mode: 'fallback' },
      targets: [target(a), target(b)],
      output_guardrails: [{ id: 'clean', deny: true, 'default.contains': { words: ['forbidden'], operator: 'none' } }],
    };
    const answered = await post(config, chat('say something nice'));
    expect(answered.status).toBe(200);
    expect(answered.headers.get('x-gateway-last-used-option-index')).toBe('config.targets[1]');
    expect(answered.body.hook_results.after_request_hooks).toMatchObject([{ id: 'clean', verdict: true }]);
    expect([a.calls(), b.calls()]).toEqual([1, 1]);
  });

  it('retries a withheld answer only when retry.on_status_codes lists 446', async () => {
    const h = host('retry');
    const denyEcho = { output_guardrails: [{ deny: true, 'default.contains': { words: ['echo'], operator: 'none' } }] };
    const once = await post(target(h, { ...denyEcho, retry: { attempts: 2 } }), chat('hello'));
    expect(once.status).toBe(446);
    expect(once.body.error.message).toContain('withheld');
    expect(h.calls()).toBe(1);
    const thrice = await post(target(h, { ...denyEcho, retry: { attempts: 2, on_status_codes: [446] } }), chat('hello'));
    expect(thrice.status).toBe(446);
    expect(h.calls()).toBe(4);
  });

  it('falls back from a flagged answer when the strategy lists 246', async () => {
    const [a, b] = [host('flag-a'), host('flag-b')];
    upstream.script(a.prefix, [
      { status: 200, json: chatCompletion('no json here') },
      { status: 200, json: chatCompletion('no json here') },
    ]);
    upstream.script(b.prefix, [
      { status: 200, json: chatCompletion('{"answer": 42}') },
      { status: 200, json: chatCompletion('{"answer": 42}') },
    ]);
    const hooks = { after_request_hooks: [{ id: 'json', checks: [{ id: 'default.jsonKeys', parameters: { keys: ['answer'] } }] }] };
    const kept = await post({ strategy: { mode: 'fallback' }, targets: [target(a), target(b)], ...hooks }, chat('answer in json'));
    expect([kept.status, kept.headers.get('x-gateway-last-used-option-index')]).toEqual([246, 'config.targets[0]']);
    const moved = await post(
      { strategy: { mode: 'fallback', on_status_codes: [246, 500] }, targets: [target(a), target(b)], ...hooks },
      chat('answer in json'),
    );
    expect([moved.status, moved.headers.get('x-gateway-last-used-option-index')]).toEqual([200, 'config.targets[1]']);
    expect([a.calls(), b.calls()]).toEqual([2, 1]);
  });

  it('runs on text completions, and only input hooks on embeddings', async () => {
    const h = host('kinds');
    const hooks = {
      before_request_hooks: [shortEnough],
      after_request_hooks: [{ id: 'says-echo', checks: [{ id: 'default.contains', parameters: { words: ['echo'] } }] }],
    };
    const completion = await gatewayFetch('/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(target(h, hooks)) },
      body: JSON.stringify({ model: 'gpt-3.5-turbo-instruct', prompt: 'complete me' }),
    });
    const completed = await completion.json();
    expect(completion.status).toBe(200);
    expect(completed.hook_results.before_request_hooks[0]).toMatchObject({ id: 'short', verdict: true });
    expect(completed.hook_results.after_request_hooks[0]).toMatchObject({ id: 'says-echo', verdict: true });
    const embedding = await gatewayFetch('/embeddings', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(target(h, hooks)) },
      body: JSON.stringify({ model: 'text-embedding-3-small', input: 'embed me' }),
    });
    const embedded = await embedding.json();
    expect(embedding.status).toBe(200);
    expect(embedded.data[0].embedding.length).toBeGreaterThan(0);
    expect(embedded.hook_results).toEqual({ before_request_hooks: [expect.objectContaining({ id: 'short', verdict: true })], after_request_hooks: [] });
  });

  it('flags a failing answer as 246 without withholding it, and never caches it', async () => {
    const h = host('flag-out');
    const config = target(h, {
      cache: { mode: 'simple' },
      after_request_hooks: [{ id: 'json', checks: [{ id: 'default.jsonKeys', parameters: { keys: ['answer'] } }] }],
    });
    const first = await post(config, chat('not json at all'));
    expect(first.status).toBe(246);
    expect(first.body.hook_results.after_request_hooks[0]).toMatchObject({ id: 'json', verdict: false });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = await post(config, chat('not json at all'));
    expect(second.headers.get('x-gateway-cache-status')).toBe('MISS');
    expect(h.calls()).toBe(2);
  });

  it('runs output checks and mutators on cached answers too, and caches the answer before mutators', async () => {
    const h = host('cached-output');
    const plain = target(h, { cache: { mode: 'simple' } });
    const original = await post(plain, chat('cache then shout'));
    const shout = {
      ...plain,
      after_request_hooks: [{ id: 'shout', type: 'mutator', checks: [{ id: 'default.regexReplace', parameters: { rule: 'echo', redactText: 'ECHO' } }] }],
    };
    let mutated = await post(shout, chat('cache then shout'));
    for (let tries = 0; mutated.headers.get('x-gateway-cache-status') !== 'HIT' && tries < 20; tries++) mutated = await post(shout, chat('cache then shout'));
    expect(mutated.headers.get('x-gateway-cache-status')).toBe('HIT');
    expect(mutated.body.choices[0].message.content).toBe(original.body.choices[0].message.content.replace('echo', 'ECHO'));
    expect(mutated.body.hook_results.after_request_hooks[0]).toMatchObject({ id: 'shout', transformed: true });
    const again = await post(plain, chat('cache then shout'));
    expect(again.body.choices[0].message.content).toBe(original.body.choices[0].message.content);
    expect(h.calls()).toBe(1);
  });
});

describe('hooks and streams', () => {
  const stream = (config: unknown, body: unknown) =>
    gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-config': JSON.stringify(config) },
      body: JSON.stringify({ ...(body as object), stream: true }),
    });

  it('sends a stream whose input checks failed without deny as 246, and denies one as a JSON 446', async () => {
    const h = host('stream-in');
    const flagged = await stream(target(h, { before_request_hooks: [noPasswords] }), chat('my password, streamed'));
    expect(flagged.status).toBe(246);
    const events = await collectSse(flagged);
    expect(events.doneLast).toBe(true);
    const denied = await stream(target(h, { before_request_hooks: [{ ...noPasswords, deny: true }] }), chat('my password, streamed'));
    expect(denied.status).toBe(446);
    expect((await denied.json()).hook_results.before_request_hooks[0].verdict).toBe(false);
  });

  it('holds a stream whose output checks may deny until they pass, then replays it; withholds it when they fail', async () => {
    const h = host('stream-out');
    const passes = await stream(
      target(h, { output_guardrails: [{ deny: true, 'default.contains': { words: ['echo'], operator: 'any' } }] }),
      chat('stream me'),
    );
    expect(passes.status).toBe(200);
    const events = await collectSse(passes);
    expect((events.json as any[]).map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toContain('stream me');
    expect(events.doneLast).toBe(true);
    const withheld = await stream(
      target(h, { output_guardrails: [{ deny: true, 'default.contains': { words: ['echo'], operator: 'none' } }] }),
      chat('stream me'),
    );
    expect(withheld.status).toBe(446);
    expect((await withheld.json()).error.type).toBe('hooks_failed');
  });
});

describe('async hooks', () => {
  let slow: Server;
  let slowUrl = '';
  beforeAll(async () => {
    slow = createServer((request, response) => {
      request.resume();
      setTimeout(() => response.writeHead(200, json).end(JSON.stringify({ verdict: false })), 2_500);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/judge`;
  });
  afterAll(() => new Promise<void>((resolve) => slow.close(() => resolve())));

  it('never delays the answer; their results reach the log only', async () => {
    const h = host('async');
    const traceId = `hooks-async-${Date.now()}`;
    const config = target(h, {
      after_request_hooks: [{ id: 'slow-judge', async: true, deny: true, checks: [{ id: 'default.webhook', parameters: { webhookURL: slowUrl } }] }],
    });
    const started = Date.now();
    const answered = await post(config, chat('do not wait for the judge'), { 'x-gateway-trace-id': traceId });
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(answered.status).toBe(200);
    expect(answered.body.hook_results.after_request_hooks).toEqual([]);
    const [record] = await waitForLogs(traceId, { timeoutMs: 8_000 });
    expect(record.hook_results.after_request_hooks).toMatchObject([
      { id: 'slow-judge', async: true, verdict: false, checks: [{ id: 'default.webhook', verdict: false }] },
    ]);
  });
});

describe('saved guardrails', () => {
  const as = async (method: string, path: string, body?: unknown, key?: string) => {
    const response = await gatewayFetch(path, {
      method,
      headers: { ...json, ...(key ? { 'x-gateway-api-key': key } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };

  it('are created, read, listed, replaced and deleted, validated when saved, and used by id from a config', async () => {
    const created = await as('POST', '/guardrails', {
      name: 'No passwords',
      checks: [
        { id: 'default.regexMatch', parameters: { rule: 'password', flags: 'i', not: true } },
        { id: 'default.log', parameters: { logURL: 'http://127.0.0.1:9/log', headers: { authorization: 'Bearer secret-token' } } },
      ],
      actions: { deny: true, on_fail: { feedback: { value: -1, weight: 1 } } },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ object: 'guardrail', name: 'No passwords', actions: { deny: true, async: false } });
    expect(created.body.id).toMatch(/^grd_[0-9a-z]{26}$/);
    expect(created.body.checks[1].parameters.headers).toBe('********');
    const id = created.body.id as string;

    expect((await as('GET', `/guardrails/${id}`)).body).toEqual(created.body);
    expect((await as('GET', '/guardrails?limit=100')).body.data.map((item: any) => item.id)).toContain(id);

    const h = host('saved');
    const denied = await post(target(h, { input_guardrails: [id] }), chat('my password is hunter2'));
    expect(denied.status).toBe(446);
    expect(denied.body.hook_results.before_request_hooks[0]).toMatchObject({ id, verdict: false, feedback: { value: -1, weight: 1 } });
    expect(h.calls()).toBe(0);

    // PUT replaces it whole; a masked value sent back keeps the stored one.
    const replaced = await as('PUT', `/guardrails/${id}`, { ...created.body, actions: { deny: false } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.actions).toEqual({ deny: false, async: false });

    expect((await as('POST', '/guardrails', { name: 'bad', checks: [{ id: 'default.regexMatchs', parameters: {} }] })).body.error).toMatchObject({
      param: 'checks[0].id',
      code: 'invalid_guardrail_check',
    });
    expect((await as('POST', '/guardrails', { name: 'bad', checks: [{ id: 'default.wordCount', parameters: { maxWords: -3 } }] })).body.error).toMatchObject({
      param: 'checks[0].parameters.maxWords',
      code: 'invalid_guardrail_check',
    });
    expect((await as('POST', '/guardrails', { name: 'bad', checks: [] })).status).toBe(400);

    expect((await as('DELETE', `/guardrails/${id}`)).body).toEqual({ id, object: 'guardrail', deleted: true });
    expect((await as('GET', `/guardrails/${id}`)).status).toBe(404);
  });

  it('belong to their workspace: another workspace cannot read or use them', async () => {
    const created = await as('POST', '/guardrails', { name: 'Mine', checks: [{ id: 'default.notNull', parameters: {} }] });
    const workspace = (await as('POST', '/workspaces', { name: `Guardrails ${Date.now()}` })).body;
    const key = (await as('POST', '/api-keys', { name: 'other', role: 'admin', workspace_id: workspace.id })).body.key as string;
    expect((await as('GET', `/guardrails/${created.body.id}`, undefined, key)).status).toBe(404);
    expect((await as('GET', '/guardrails', undefined, key)).body.data).toEqual([]);
    const h = host('other-ws');
    const response = await gatewayFetch('/chat/completions', {
      method: 'POST',
      headers: { ...json, 'x-gateway-api-key': key, 'x-gateway-config': JSON.stringify(target(h, { input_guardrails: [created.body.id] })) },
      body: JSON.stringify(chat('hi')),
    });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ code: 'guardrail_not_found', param: 'config.input_guardrails[0]' });
    expect(h.calls()).toBe(0);
  });

  it('refuses a config naming an unknown check with AB01', async () => {
    const h = host('ab01');
    const refused = await post(target(h, { before_request_hooks: [{ id: 'h', checks: [{ id: 'default.wordcont', parameters: {} }] }] }), chat('hi'));
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'AB01', param: 'config.before_request_hooks[0].checks[0].id' });
  });
});
