import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream';
import { gatewayFetch } from '../support/gateway-client';
import { doublingSchema, nestedArrays, recursiveTwice } from '../support/pathological-checks';

/**
 * Guardrail checks through the running gateway: their work is bounded (schemas refused past their
 * limits when sent or saved, a budget per run that failOnError answers for), stored parameters run
 * exactly as inline ones, a hook that denies never passes text it did not read, and every duration
 * a check takes is range-checked when the check is sent or saved.
 */

const json = { 'content-type': 'application/json' };

let upstream: FakeUpstream;
let judge: Server;
let judgeUrl = '';
beforeAll(async () => {
  upstream = await startFakeUpstream();
  judge = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, json).end(request.url === '/hook' ? JSON.stringify({ verdict: true }) : '{}'));
  });
  await new Promise<void>((resolve) => judge.listen(0, '127.0.0.1', resolve));
  judgeUrl = `http://127.0.0.1:${(judge.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await upstream.close();
  await new Promise<void>((resolve) => judge.close(() => resolve()));
});

const host = (label: string) => ownPath(upstream, 'guardrail-bounds', label);
const target = (h: { custom_host: string }, extra: Record<string, unknown> = {}) => ({
  provider: 'openai',
  api_key: 'sk-bounds',
  custom_host: h.custom_host,
  ...extra,
});
const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });

async function post(configHeader: string, body: unknown) {
  const response = await gatewayFetch('/chat/completions', {
    method: 'POST',
    headers: { ...json, 'x-gateway-config': configHeader },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

async function call(method: string, path: string, body: unknown) {
  const response = await gatewayFetch(path, { method, headers: json, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

const hookOf = (id: string, parameters: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  id: 'bounded',
  ...extra,
  checks: [{ id, parameters }],
});

describe('schema limits when a check is sent or saved', () => {
  const exploding = () => hookOf('default.jsonSchema', { schema: doublingSchema(30) });

  it('refuses an inline schema whose $refs expand past the limit with a 400 naming it, before any provider call', async () => {
    const h = host('expand-inline');
    const answered = await post(JSON.stringify(target(h, { before_request_hooks: [exploding()] })), chat('1'));
    expect(answered.status).toBe(400);
    expect(answered.body.error.message).toMatch(/more than 10,000 subschemas.*the limit is 10,000/);
    expect(answered.body.error.param).toMatch(/before_request_hooks\[0\]\.checks\[0\]\.parameters\.schema$/);
    expect(h.calls()).toBe(0);
  });

  it('refuses it in a saved config and in a saved guardrail', async () => {
    const h = host('expand-saved');
    const config = await call('POST', '/configs', { name: 'exploding schema', config: target(h, { before_request_hooks: [exploding()] }) });
    expect(config.status).toBe(400);
    expect(config.body.error.message).toMatch(/the limit is 10,000/);
    const guardrail = await call('POST', '/guardrails', { name: 'exploding schema', checks: exploding().checks });
    expect(guardrail.status).toBe(400);
    expect(guardrail.body.error).toMatchObject({ param: 'checks[0].parameters.schema', code: 'invalid_guardrail_check' });
    expect(guardrail.body.error.message).toMatch(/the limit is 10,000/);
  });

  it('refuses a schema larger or deeper than allowed, naming the limit', async () => {
    const h = host('size');
    let deep: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < 64; level++) deep = { not: deep };
    // Given as JSON text, the one way past the body's own nesting limit.
    const tooDeep = await call('POST', '/guardrails', { name: 'deep', checks: [{ id: 'default.jsonSchema', parameters: { schema: JSON.stringify(deep) } }] });
    expect([tooDeep.status, tooDeep.body.error.message]).toEqual([400, expect.stringMatching(/the limit is 64/)]);
    const large = await call('POST', '/configs', {
      name: 'large',
      config: target(h, { before_request_hooks: [hookOf('default.jsonSchema', { schema: { enum: ['x'.repeat(100_000)] } })] }),
    });
    expect([large.status, large.body.error.message]).toEqual([400, expect.stringMatching(/the limit is 100,000/)]);
  });
});

describe('a budget of work per check run', () => {
  const objects = JSON.stringify(Array.from({ length: 20_000 }, (_, index) => ({ id: index })));

  it('stops uniqueItems over 20,000 objects: failOnError true denies, naming the budget', async () => {
    const h = host('unique-strict');
    const hook = hookOf('default.jsonSchema', { schema: { type: 'array', uniqueItems: true }, failOnError: true }, { deny: true });
    const answered = await post(JSON.stringify(target(h, { before_request_hooks: [hook] })), chat(objects));
    expect(answered.status).toBe(446);
    expect(answered.body.hook_results.before_request_hooks[0].checks[0]).toMatchObject({
      verdict: false,
      error: expect.stringMatching(/stopped after 50,000 validation steps/),
    });
    expect(h.calls()).toBe(0);
  });

  it('with failOnError false the check passes and says why it could not judge', async () => {
    const h = host('unique-lenient');
    const hook = hookOf('default.jsonSchema', { schema: { type: 'array', uniqueItems: true } }, { deny: true });
    const answered = await post(JSON.stringify(target(h, { before_request_hooks: [hook] })), chat(objects));
    expect(answered.status).toBe(200);
    expect(answered.body.hook_results.before_request_hooks[0].checks[0]).toMatchObject({ verdict: true, error: expect.stringMatching(/validation steps/) });
    expect(h.calls()).toBe(1);
  });

  it('stops a schema that recurses twice per level of nested data', async () => {
    const h = host('recursion');
    const hook = hookOf('default.jsonSchema', { schema: recursiveTwice, failOnError: true }, { deny: true });
    const answered = await post(JSON.stringify(target(h, { before_request_hooks: [hook] })), chat(nestedArrays(40)));
    expect(answered.status).toBe(446);
    expect(answered.body.hook_results.before_request_hooks[0].checks[0].error).toMatch(/validation steps/);
  });
});

describe('a hook that denies never passes text it did not read', () => {
  it('denies a message padded past the scan limit with 446 naming the limit, whatever failOnError', async () => {
    const h = host('padding');
    const hook = {
      id: 'no-secrets',
      deny: true,
      checks: [
        { id: 'default.regexMatch', parameters: { rule: 'secret', not: true } },
        { id: 'default.contains', parameters: { words: ['secret'], operator: 'none' } },
        { id: 'default.pii', parameters: {} },
      ],
    };
    const padded = `${' '.repeat(1_000_000)}my secret is sk-${'a'.repeat(40)}`;
    const answered = await post(JSON.stringify(target(h, { before_request_hooks: [hook] })), chat(padded));
    expect(answered.status).toBe(446);
    for (const check of answered.body.hook_results.before_request_hooks[0].checks) {
      expect(check).toMatchObject({ verdict: false, error: expect.stringMatching(/checks scan at most 1000000/) });
    }
    expect(h.calls()).toBe(0);
    // The same text read whole is judged as usual.
    const read = await post(JSON.stringify(target(h, { before_request_hooks: [hook] })), chat('nothing to hide'));
    expect(read.status).toBe(200);
  });
});

describe('durations a check takes are range-checked when sent or saved', () => {
  const slowHook = () => hookOf('default.webhook', { webhookURL: `${judgeUrl}/hook`, timeout: 2_147_483_648 });

  it('refuses a webhook timeout past the limit inline, in a saved config and in a saved guardrail', async () => {
    const h = host('timeouts');
    const inline = await post(JSON.stringify(target(h, { before_request_hooks: [slowHook()] })), chat('hello'));
    expect(inline.status).toBe(400);
    expect(inline.body.error.message).toMatch(/`timeout` must be a whole number from 1 to 60000/);
    expect(inline.body.error.param).toMatch(/parameters\.timeout$/);
    const config = await call('POST', '/configs', { name: 'slow webhook', config: target(h, { before_request_hooks: [slowHook()] }) });
    expect([config.status, config.body.error.message]).toEqual([400, expect.stringMatching(/from 1 to 60000/)]);
    const guardrail = await call('POST', '/guardrails', { name: 'slow webhook', checks: slowHook().checks });
    expect(guardrail.status).toBe(400);
    expect(guardrail.body.error).toMatchObject({ param: 'checks[0].parameters.timeout', code: 'invalid_guardrail_check' });
    const tokenAge = await call('POST', '/guardrails', {
      name: 'old tokens',
      checks: [{ id: 'default.jwt', parameters: { jwksUri: `${judgeUrl}/jwks`, maxTokenAge: '100y' } }],
    });
    expect(tokenAge.body.error).toMatchObject({ param: 'checks[0].parameters.maxTokenAge' });
    expect(tokenAge.body.error.message).toMatch(/at most 31622400 seconds/);
  });
});

describe('stored parameters run exactly as inline ones', () => {
  const text = 'Please answer {"answer": 42, "name": "Ada"} now. Write to jane@example.com.\n```python\nprint(1)\n```';
  // Every built-in check, each with the verdict it gives on `text`. Mutators come last, since they rewrite the text the hooks after them read.
  const cases = (): [string, Record<string, unknown>, boolean][] => [
    ['default.regexMatch', { rule: 'answer\\b' }, true],
    ['default.sentenceCount', { minSentences: 1, maxSentences: 10 }, true],
    ['default.wordCount', { minWords: 1, maxWords: 100 }, true],
    ['default.characterCount', { maxCharacters: 1_000 }, true],
    [
      'default.jsonSchema',
      { schema: { type: 'object', required: ['answer'], properties: { answer: { $ref: '#/$defs/whole' } }, $defs: { whole: { type: 'integer' } } } },
      true,
    ],
    ['default.jsonSchema', { schema: { type: 'object', properties: { answer: { $ref: '#/$defs/text' } }, $defs: { text: { type: 'string' } } } }, false],
    ['default.jsonKeys', { keys: ['answer', 'name'], operator: 'all' }, true],
    ['default.contains', { words: ['Ada', 'Bob'], operator: 'all' }, false],
    ['default.validUrls', { onlyDNS: true, timeout: 1_000 }, true],
    ['default.containsCode', { format: 'Python' }, true],
    ['default.alluppercase', {}, false],
    ['default.alllowercase', {}, false],
    ['default.endsWith', { suffix: '```' }, true],
    ['default.notNull', {}, true],
    ['default.modelWhitelist', { models: ['gpt-4o-mini'] }, true],
    ['default.modelRules', { rules: { defaults: ['gpt-4o'] } }, false],
    ['default.requiredMetadataKeys', { metadataKeys: ['team'] }, false],
    ['default.allowedRequestTypes', { allowedTypes: ['chat'] }, true],
    ['default.requestParametersCheck', { params: { blockedKeys: ['tools'] } }, true],
    ['default.jwt', { jwksUri: `${judgeUrl}/jwks`, headerKey: 'x-no-token', maxTokenAge: '12h' }, false],
    ['default.log', { logURL: `${judgeUrl}/log`, timeout: 2_000 }, true],
    ['default.webhook', { webhookURL: `${judgeUrl}/hook`, timeout: 2_000 }, true],
    ['default.pii', { categories: ['email'] }, false],
    ['default.promptInjection', { threshold: 0.5 }, true],
    ['default.addPrefix', { prefix: 'Note: ' }, true],
    ['default.regexReplace', { rule: 'Ada', redactText: '[name]' }, true],
  ];

  const shown = (results: any[]) =>
    results.map((result) => ({ id: result.checks[0].id, verdict: result.checks[0].verdict, error: result.checks[0].error ?? null }));

  it('every built-in check gives the same verdict from an inline config, a saved config and a saved guardrail', async () => {
    const h = host('stored');
    const expected = cases().map(([id, , verdict]) => ({ id, verdict, error: null }));
    const hooks = cases().map(([id, parameters], index) => ({ id: `check-${index}`, checks: [{ id, parameters }] }));

    const inline = await post(JSON.stringify(target(h, { before_request_hooks: hooks })), chat(text));
    expect(inline.status).toBe(246);
    expect(shown(inline.body.hook_results.before_request_hooks)).toEqual(expected);

    const saved = await call('POST', '/configs', { name: 'every check', config: target(h, { before_request_hooks: hooks }) });
    expect(saved.status).toBe(200);
    // Twice: the second request meets the config as the lookup cache keeps it (frozen).
    for (let round = 0; round < 2; round++) {
      const fromSaved = await post(saved.body.id, chat(text));
      expect(fromSaved.status).toBe(246);
      expect(shown(fromSaved.body.hook_results.before_request_hooks)).toEqual(expected);
    }

    const guardrailIds: string[] = [];
    for (const [index, [id, parameters]] of cases().entries()) {
      const created = await call('POST', '/guardrails', { name: `check ${index}`, checks: [{ id, parameters }] });
      expect(created.status).toBe(200);
      guardrailIds.push(created.body.id);
    }
    const fromGuardrails = await post(JSON.stringify(target(h, { input_guardrails: guardrailIds })), chat(text));
    expect(fromGuardrails.status).toBe(246);
    expect(shown(fromGuardrails.body.hook_results.before_request_hooks)).toEqual(expected);

    // The mutators rewrote what the provider received, the same way each time.
    const sent = h.sent().map((body: any) => body.messages.at(-1).content);
    expect(new Set(sent).size).toBe(1);
    expect(sent[0]).toMatch(/^Note: Please answer .*"name": "\[name\]"/s);
  });

  it('a saved config runs the README-style schema check that denies (446), as inline', async () => {
    const h = host('stored-deny');
    const deny = {
      id: 'answer-schema',
      deny: true,
      checks: [{ id: 'default.jsonSchema', parameters: { schema: { type: 'object', required: ['answer'], properties: { answer: { type: 'integer' } } } } }],
    };
    const saved = await call('POST', '/configs', { name: 'schema deny', config: target(h, { after_request_hooks: [deny] }) });
    expect(saved.status).toBe(200);
    for (let round = 0; round < 2; round++) {
      const withheld = await post(saved.body.id, chat('say something that is not json'));
      expect(withheld.status).toBe(446);
      expect(withheld.body.hook_results.after_request_hooks[0].checks[0]).toMatchObject({ id: 'default.jsonSchema', verdict: false });
      expect(withheld.body.hook_results.after_request_hooks[0].checks[0].error).toBeUndefined();
    }
  });
});
