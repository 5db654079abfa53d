import { describe, expect, it } from 'vitest';
import { jsonCandidates } from '../../../lib/guardrails/checks/json';
import { run } from './check-input';

const schema = { type: 'object', required: ['name', 'age'], properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0 } } };

describe('JSON checks', () => {
  it.each([
    ['a matching object', { schema }, '{"name": "Ada", "age": 36}', true],
    ['a fenced block', { schema }, 'Here you go:\n```json\n{"name": "Ada", "age": 36}\n```', true],
    ['an object inside prose', { schema }, 'Result: {"name": "Ada", "age": 36} — done.', true],
    ['a wrong type', { schema }, '{"name": "Ada", "age": "old"}', false],
    ['no JSON', { schema }, 'just words', false],
    ['inverted', { schema, not: true }, '{"name": "Ada"}', true],
    ['a schema given as text', { schema: JSON.stringify(schema) }, '{"name": "Ada", "age": 1}', true],
    [
      'a draft-07 schema with local refs',
      {
        schema: { $schema: 'http://json-schema.org/draft-07/schema#', definitions: { n: { type: 'number' } }, properties: { x: { $ref: '#/definitions/n' } } },
      },
      '{"x": "nope"}',
      false,
    ],
  ])('jsonSchema: %s', async (_name, parameters, text, verdict) => {
    const result = await run('default.jsonSchema', parameters, text);
    expect(result.error).toBeUndefined();
    expect(result.verdict).toBe(verdict);
  });

  it('says which values break the schema', async () => {
    const result = await run('default.jsonSchema', { schema }, '{"name": 5, "age": -1}');
    const errors = (result.data as { errors: { instanceLocation: string }[] }).errors.map((error) => error.instanceLocation);
    expect(errors).toEqual(expect.arrayContaining(['#/name', '#/age']));
  });

  it.each([
    [{}, /`schema` is required/],
    [{ schema: 'not json' }, /not JSON/],
    [{ schema: [1] }, /JSON Schema/],
    [{ schema: { type: 'string', pattern: '(a+)+$' } }, /`pattern` at #\/pattern/],
    [{ schema: { patternProperties: { '^x': {} } } }, /patternProperties/],
    [{ schema: { $ref: 'https://example.com/schema.json' } }, /Unresolved \$ref/],
  ])('jsonSchema refuses %j', async (parameters, message) => {
    const result = await run('default.jsonSchema', { ...parameters, failOnError: true }, '{}');
    expect(result.verdict).toBe(false);
    expect(result.error).toMatch(message);
  });

  it('accepts `pattern` as data inside enum or const', async () => {
    const result = await run('default.jsonSchema', { schema: { const: { pattern: 'x' } } }, '{"pattern": "x"}');
    expect(result).toMatchObject({ verdict: true });
  });

  it.each([
    ['any present', { keys: ['a', 'z'], operator: 'any' }, '{"a": 1}', true],
    ['all missing one', { keys: ['a', 'z'], operator: 'all' }, '{"a": 1}', false],
    ['all in a later candidate', { keys: ['a', 'b'], operator: 'all' }, '```\n{"a": 1}\n```\n```json\n{"a": 1, "b": 2}\n```', true],
    ['none present', { keys: ['z'], operator: 'none' }, '{"a": 1}', true],
    ['no object', { keys: ['a'] }, '[1, 2]', false],
  ])('jsonKeys: %s', async (_name, parameters, text, verdict) => {
    const result = await run('default.jsonKeys', parameters, text);
    expect(result.error).toBeUndefined();
    expect(result.verdict).toBe(verdict);
  });

  it('jsonKeys refuses a missing key list', async () => {
    expect((await run('default.jsonKeys', { operator: 'all', failOnError: true }, '{}')).error).toMatch(/`keys` is required/);
  });

  it('finds JSON in the whole text first, then in fenced blocks, then between the outer braces', () => {
    expect(jsonCandidates(' [1,2] ')).toEqual([[1, 2]]);
    expect(jsonCandidates('a\n```json\n{"x":1}\n```\nb')).toEqual([{ x: 1 }]);
    expect(jsonCandidates('say {"x": {"y": 2}} ok')).toEqual([{ x: { y: 2 } }]);
    expect(jsonCandidates('nothing')).toEqual([]);
  });
});
