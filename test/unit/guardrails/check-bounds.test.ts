import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { maxScannedText } from '../../../lib/guardrails';
import { runConfiguredCheck } from '../../../lib/guardrails/check-runner';
import { schemaLimits } from '../../../lib/guardrails/checks/bounded-schema';
import { maxWordCharacters } from '../../../lib/guardrails/checks/text';
import type { HookSpec } from '../../../lib/guardrails/hook-specs';
import { runHooks } from '../../../lib/guardrails/run-hooks';
import { WordFinder } from '../../../lib/guardrails/word-finder';
import { seededUniform } from '../../../lib/core/seeded-random';
import { stepLimits } from '../../../lib/guardrails/work-budget';
import { run } from './check-input';
import { doublingSchema, nestedArrays, recursiveTwice } from '../../support/pathological-checks';

/**
 * Every check that takes a schema or a list, given the largest input it accepts shaped to cost the
 * most, stops on its budget or limit (or, where the work is linear, answers correctly): no check
 * may hold the event loop for seconds on one request.
 */

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object') {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

describe('jsonSchema limits when a schema is accepted', () => {
  it('refuses a schema larger than the size limit, naming it', async () => {
    const schema = { enum: ['x'.repeat(schemaLimits.characters)] };
    const result = await run('default.jsonSchema', { schema, failOnError: true }, '{}');
    expect(result.error).toMatch(/the limit is 100,000/);
  });

  it('refuses a schema nested past the depth limit, naming it', async () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < schemaLimits.depth; level++) schema = { not: schema };
    expect((await run('default.jsonSchema', { schema, failOnError: true }, '"a"')).error).toMatch(/more than 64 levels deep \(the limit is 64\)/);
  });

  it('refuses $defs whose references expand past the limit, naming it', async () => {
    const result = await run('default.jsonSchema', { schema: doublingSchema(30), failOnError: true }, '1');
    expect(result.verdict).toBe(false);
    expect(result.error).toMatch(/expands to more than 10,000 subschemas.*the limit is 10,000/);
    // The same shape, shallow enough, is fine.
    expect(await run('default.jsonSchema', { schema: doublingSchema(5) }, '1')).toMatchObject({ verdict: true });
  });

  it('refuses a format tested by a backtracking pattern', async () => {
    const result = await run('default.jsonSchema', { schema: { type: 'string', format: 'url' }, failOnError: true }, '"x"');
    expect(result.error).toMatch(/format: "url"/);
  });
});

describe('jsonSchema budget while validating', () => {
  it('stops recursion that doubles per level of the data, and failOnError decides the verdict', async () => {
    const text = nestedArrays(40);
    const strict = await run('default.jsonSchema', { schema: recursiveTwice, failOnError: true }, text);
    expect(strict).toMatchObject({ verdict: false, error: expect.stringMatching(/stopped after 50,000 validation steps/) });
    expect(await run('default.jsonSchema', { schema: recursiveTwice }, text)).toMatchObject({
      verdict: true,
      error: expect.stringMatching(/validation steps/),
    });
    // Shallow data under the same schema validates as usual.
    expect(await run('default.jsonSchema', { schema: recursiveTwice }, '[[[]], []]')).toMatchObject({ verdict: true });
    expect(await run('default.jsonSchema', { schema: recursiveTwice }, nestedArrays(3))).toMatchObject({ verdict: false });
  });

  it('stops uniqueItems over a large array of objects', async () => {
    const items = Array.from({ length: 20_000 }, (_, index) => ({ id: index }));
    const result = await run('default.jsonSchema', { schema: { type: 'array', uniqueItems: true }, failOnError: true }, JSON.stringify(items));
    expect(result).toMatchObject({ verdict: false, error: expect.stringMatching(/validation steps/) });
    expect(await run('default.jsonSchema', { schema: { type: 'array', uniqueItems: true } }, '[{"a":1},{"a":2}]')).toMatchObject({ verdict: true });
    expect(await run('default.jsonSchema', { schema: { type: 'array', uniqueItems: true } }, '[{"a":1},{"a":1}]')).toMatchObject({ verdict: false });
  });

  it('charges long strings read by many subschemas', async () => {
    const schema = { anyOf: Array.from({ length: 1_000 }, (_, index) => ({ minLength: 1, maxLength: index })) };
    const result = await run('default.jsonSchema', { schema, failOnError: true }, JSON.stringify('y'.repeat(maxScannedText - 10)));
    expect(result.error).toMatch(/validation steps/);
  });

  it('shares one budget across the candidates of a text', async () => {
    const blocks = Array.from({ length: 12_000 }, () => `\`\`\`json\n${JSON.stringify(Array.from({ length: 20 }, (_, index) => index))}\n\`\`\``).join('\n');
    const result = await run('default.jsonSchema', { schema: { type: 'array', contains: { type: 'string' } }, failOnError: true }, blocks);
    expect(result.error).toMatch(/validation steps/);
  });
});

describe('stored parameters behave as inline ones', () => {
  it('runs a schema from deep-frozen parameters (a saved config is frozen in its cache)', async () => {
    const schema = { type: 'object', required: ['answer'], properties: { answer: { $ref: '#/$defs/n' } }, $defs: { n: { type: 'integer' } } };
    const frozen = deepFreeze({ schema: structuredClone(schema) });
    expect(await run('default.jsonSchema', frozen, '{"answer": 42}')).toMatchObject({ verdict: true });
    expect(await run('default.jsonSchema', frozen, '{"answer": "x"}')).toMatchObject({ verdict: false });
    expect(frozen.schema).toEqual(schema);
    // The caller's object is never written to, frozen or not.
    const open = { schema: structuredClone(schema) };
    await run('default.jsonSchema', open, '{"answer": 1}');
    expect(Object.getOwnPropertyNames(open.schema).sort()).toEqual(Object.keys(schema).sort());
  });
});

describe('budgets of the other checks', () => {
  it('stops a pattern that needs a new state at every character, in regexMatch and regexReplace', async () => {
    const random = seededUniform(20_261_127);
    const text = Array.from({ length: maxScannedText }, () => (random() < 0.5 ? 'a' : 'b')).join('');
    const matched = await run('default.regexMatch', { rule: '[ab]*a[ab]{300}c', failOnError: true }, text);
    expect(matched).toMatchObject({ verdict: false, error: expect.stringMatching(/stopped after 2,000,000 pattern steps/) });
    const replaced = await run('default.regexReplace', { rule: '[ab]*a[ab]{300}', failOnError: true }, text);
    expect(replaced.error).toMatch(/pattern steps/);
    // An ordinary pattern matches over the longest text, and is located within a shorter one.
    const ordinary = await run('default.regexMatch', { rule: 'secret|password' }, text.replace(/.{6}$/, 'secret'));
    expect(ordinary).toMatchObject({ verdict: true, data: { matched: true } });
    expect(ordinary.error).toBeUndefined();
    const located = await run('default.regexMatch', { rule: 'secret|password' }, `${text.slice(0, 200_000)}secret`);
    expect(located).toMatchObject({ verdict: true, data: { match: { index: 200_000 } } });
  });

  it('a match found but not located within the budget still counts as a match', async () => {
    const text = `${'ab'.repeat(maxScannedText / 2 - 500)}${'a'.repeat(1_000)}`;
    const result = await run('default.regexMatch', { rule: '[ab]*a[ab]{300}$', failOnError: true }, text);
    expect(result).toMatchObject({ verdict: true, data: { matched: true } });
    expect(result.error).toBeUndefined();
  });

  it('stops jsonKeys over many objects with the longest key list', async () => {
    const keys = Array.from({ length: 1_000 }, (_, index) => `k${index}`);
    const text = Array.from({ length: stepLimits.jsonKeys.steps / keys.length + 10 }, () => '```\n{"z":1}\n```').join('\n');
    const result = await run('default.jsonKeys', { keys, operator: 'all', failOnError: true }, text);
    expect(result.error).toMatch(/stopped after 1,000,000 key lookups/);
  });

  it('finds a thousand near-miss words in the longest text in one pass', async () => {
    const words = Array.from({ length: 1_000 }, (_, index) => `${'a'.repeat(90)}${index}`);
    const text = `${'a'.repeat(maxScannedText - 200)}${'a'.repeat(90)}7`;
    const result = await run('default.contains', { words, operator: 'any' }, text);
    expect(result).toMatchObject({ verdict: true });
    expect((result.data as { found: string[] }).found).toEqual([`${'a'.repeat(90)}7`]);
  });

  it('refuses a word list longer than the limit, naming it', async () => {
    const words = Array.from({ length: 200 }, (_, index) => `${'w'.repeat(999)}${index % 10}`);
    expect((await run('default.contains', { words, failOnError: true }, 'x')).error).toMatch(new RegExp(`at most ${maxWordCharacters} are allowed`));
  });

  it('finds every address in a text full of them (the overlap test is linear)', async () => {
    const text = 'a@b.cc '.repeat(Math.floor(maxScannedText / 7));
    const result = await run('default.pii', { categories: ['email', 'phone'] }, text);
    expect((result.data as { found: Record<string, number> }).found.email).toBe(Math.floor(maxScannedText / 7));
  });

  it('refuses more values than a parameter rule may list', async () => {
    const result = await run(
      'default.requestParametersCheck',
      { params: { values: { model: { allowedValues: Array.from({ length: 1_001 }, (_, index) => `m${index}`) } } }, failOnError: true },
      'x',
    );
    expect(result.error).toMatch(/params\.values\.model\.allowedValues` has 1001 items; at most 1000/);
  });
});

describe('durations a check takes are range-checked', () => {
  it.each([
    ['default.webhook', { webhookURL: 'http://127.0.0.1:9/hook', timeout: 2_147_483_648 }, /`timeout` must be a whole number from 1 to 60000/],
    ['default.log', { logURL: 'http://127.0.0.1:9/log', timeout: 0 }, /`timeout` must be a whole number from 1 to 60000/],
    ['default.validUrls', { timeout: 1e12 }, /`timeout` must be a whole number from 1 to 60000/],
    ['default.jwt', { jwksUri: 'http://127.0.0.1:9/jwks', maxTokenAge: '100y' }, /`maxTokenAge` must be more than 0 and at most 31622400 seconds/],
    ['default.jwt', { jwksUri: 'http://127.0.0.1:9/jwks', maxTokenAge: 1e12 }, /at most 31622400 seconds/],
    ['default.jwt', { jwksUri: 'http://127.0.0.1:9/jwks', cacheMaxAge: 1e9 }, /`cacheMaxAge` must be a number from 0 to 86400/],
    ['default.jwt', { jwksUri: 'http://127.0.0.1:9/jwks', clockTolerance: 1e9 }, /`clockTolerance` must be a number from 0 to 3600/],
  ])('%s refuses %j', async (id, parameters, message) => {
    expect((await run(id, { ...parameters, failOnError: true }, 'x')).error).toMatch(message);
  });

  it('jwt reads maxTokenAge durations in seconds', async () => {
    expect((await run('default.jwt', { jwksUri: 'http://127.0.0.1:9/jwks', maxTokenAge: '1y', failOnError: true }, 'x')).error).toBeUndefined();
  });
});

describe('a hook that denies never passes text it did not read', () => {
  const long = `${'x'.repeat(maxScannedText)} secret`;
  const exchange = { operation: 'chat' as const, request: { model: 'm', messages: [{ role: 'user', content: long }] }, metadata: {}, headers: {} };
  const hook = (deny: boolean, check: { id: string; parameters: Record<string, unknown> }): HookSpec => ({
    id: 'h',
    type: 'guardrail',
    checks: [check],
    deny,
    async: false,
  });

  it.each([
    ['default.regexMatch', { rule: 'secret', not: true }],
    ['default.contains', { words: ['secret'], operator: 'none' }],
    ['default.pii', {}],
    ['default.promptInjection', {}],
  ])('%s past the scan limit denies, whatever failOnError', async (id, parameters) => {
    const outcome = await runHooks([hook(true, { id, parameters })], 'input', exchange, runConfiguredCheck);
    expect(outcome.denied).toBe(true);
    const [report] = outcome.results[0]!.checks;
    expect(report).toMatchObject({ verdict: false, error: expect.stringMatching(/checks scan at most 1000000/) });
    expect(report).not.toHaveProperty('textUnread');
  });

  it('a hook that only flags still lets failOnError decide', async () => {
    const outcome = await runHooks(
      [hook(false, { id: 'default.regexMatch', parameters: { rule: 'secret', not: true } })],
      'input',
      exchange,
      runConfiguredCheck,
    );
    expect(outcome).toMatchObject({ denied: false, passed: true });
  });
});

describe('the word finder', () => {
  it('agrees with searching the text once per word', () => {
    const unit = fc.constantFrom('a', 'b', 'c', 'ab', 'é');
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit, minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 8 }),
        fc.string({ unit, maxLength: 30 }),
        (words, text) => {
          expect(new WordFinder(words).found(text)).toEqual(words.map((word) => text.includes(word)));
        },
      ),
      { numRuns: 2_000, seed: 20_261_127 },
    );
  });
});
