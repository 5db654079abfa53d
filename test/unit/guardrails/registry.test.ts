import { describe, expect, it } from 'vitest';
import { builtInChecks, CheckParameterError, findCheck, parseCheckParameters, runCheck, UnknownCheckError } from '../../../lib/guardrails';
import { defineCheck } from '../../../lib/guardrails/define-check';
import { checkInput } from './check-input';

describe('the check catalogue', () => {
  it.each([
    ['default.regexMatch', 'default.regexMatch'],
    ['default.regexmatch', 'default.regexMatch'],
    ['DEFAULT.REGEXMATCH', 'default.regexMatch'],
    ['default.modelwhitelist', 'default.modelWhitelist'],
    ['default.isAllLowerCase', 'default.alllowercase'],
    ['default.alluppercase', 'default.alluppercase'],
  ])('finds %s as %s', (id, canonical) => {
    expect(findCheck(id)?.id).toBe(canonical);
  });

  it('has one definition per id, each naming its parameters', () => {
    const ids = builtInChecks.map((check) => check.id.toLowerCase());
    expect(new Set(ids).size).toBe(ids.length);
    expect(findCheck('default.nothing')).toBeUndefined();
  });

  it('lists the nearest ids for an unknown one', () => {
    expect(() => parseCheckParameters('default.regexMatches', {})).toThrow(UnknownCheckError);
    expect(() => parseCheckParameters('default.regexMatches', {})).toThrow(/Did you mean "default.regexMatch"/);
    expect(() => parseCheckParameters('wordCount', {})).toThrow(/Did you mean "default.wordCount"/);
  });

  it('validates parameters with an error that names the parameter', () => {
    expect(parseCheckParameters('default.wordCount', { minWords: 1 })).toEqual({ min: 1, max: 99_999 });
    try {
      parseCheckParameters('default.wordCount', { maxWord: 3 });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(CheckParameterError);
      expect((error as CheckParameterError).parameter).toBe('maxWord');
      expect((error as Error).message).toMatch(/did you mean `maxWords`/);
    }
    expect(() => parseCheckParameters('default.wordCount', [1])).toThrow(/must be an object/);
    expect(() => parseCheckParameters('default.wordCount', { failOnError: 'yes' })).toThrow(/`failOnError` must be true or false/);
  });
});

describe('runCheck', () => {
  const boom = defineCheck({
    id: 'test.boom',
    invertible: true,
    parameters: [],
    parse: () => ({}),
    run: () => {
      throw new Error('upstream exploded');
    },
  });
  let parses = 0;
  const counting = defineCheck({
    id: 'test.counting',
    invertible: true,
    mutator: true,
    parameters: ['suffix'],
    parse: (params) => {
      parses++;
      return { suffix: String(params.suffix ?? '') };
    },
    run: ({ suffix }, input) => ({ verdict: true, transformedText: input.text + suffix, data: { ok: true } }),
  });

  it('passes a check that throws unless failOnError is set, and says why', async () => {
    expect(await runCheck(boom, {}, checkInput('x'))).toMatchObject({ verdict: true, error: 'upstream exploded', transformed: false });
    expect(await runCheck(boom, { failOnError: true }, checkInput('x'))).toMatchObject({ verdict: false, error: 'upstream exploded' });
    // `not` inverts a verdict, never the failure policy.
    expect(await runCheck(boom, { failOnError: true, not: true }, checkInput('x'))).toMatchObject({ verdict: false });
  });

  it('inverts with `not`, times the check and reports a rewrite', async () => {
    const result = await runCheck(counting, { suffix: '!', not: true }, checkInput('hi'));
    expect(result).toMatchObject({ verdict: false, transformed: true, transformedText: 'hi!', data: { ok: true } });
    expect(result.execution_time).toBeGreaterThanOrEqual(0);
    expect(await runCheck(counting, { suffix: '' }, checkInput('hi'))).toMatchObject({ transformed: false });
  });

  it('parses a parameters object once however often it runs', async () => {
    const parameters = { suffix: '?' };
    parses = 0;
    for (let i = 0; i < 5; i++) await runCheck(counting, parameters, checkInput('x'));
    expect(parses).toBe(1);
    await runCheck(counting, { suffix: '?' }, checkInput('x'));
    expect(parses).toBe(2);
  });

  it('refuses `not` on a check whose verdict it cannot invert', async () => {
    const check = findCheck('default.log')!;
    expect(await runCheck(check, { logURL: 'http://127.0.0.1:1/', not: true, failOnError: true }, checkInput('x'))).toMatchObject({
      verdict: false,
      error: expect.stringMatching(/does not support `not`/),
    });
  });
});
