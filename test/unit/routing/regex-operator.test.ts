import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSafeRegex as compileRegex, maxPatternLength as maxRegexLength, RegexSyntaxError } from '../../../lib/core/regex/safe-regex';

describe('linear-time $regex', () => {
  it.each([
    ['^gpt-4', 'gpt-4o', true],
    ['^gpt-4', 'xgpt-4', false],
    ['o$', 'gpt-4o', true],
    ['^$', '', true],
    ['4\\w', 'gpt-4o', true],
    ['\\bpro\\b', 'a pro plan', true],
    ['\\bpro\\b', 'approve', false],
    ['\\Bro\\B', 'approve', true],
    ['[a-c]{2,3}x', 'zzbcax', true],
    ['[^a-z]+', 'abc', false],
    ['[\\d-]+$', '12-34', true],
    ['(?:ab|cd)+e', 'abcdcde', true],
    ['(?<tier>pro|team)-\\d', 'team-7', true],
    ['a.c', 'a\nc', false],
    ['\\x41\\u0042', 'AB', true],
    ['[]', 'anything', false],
    ['[^]', 'x', true],
    ['a{,2}', 'a{,2}', true],
    ['x*', '', true],
  ])('%s on %j → %s', (pattern, input, expected) => {
    expect(compileRegex(pattern).test(input)).toBe(expected);
    expect(new RegExp(pattern).test(input)).toBe(expected);
  });

  it.each([
    ['(', 'unterminated group'],
    ['a)', 'unmatched ")"'],
    ['[a', 'unterminated character class'],
    ['*a', 'nothing to repeat'],
    ['a**', 'nothing to repeat'],
    ['^*', 'nothing to repeat'],
    ['{2}', 'nothing to repeat'],
    ['[z-a]', 'out of order'],
    ['a{3,2}', 'out of order'],
    ['(a)\\1', 'back-reference'],
    ['(?<n>a)\\k<n>', 'back-reference'],
    ['a(?=b)', 'lookaround'],
    ['(?<!a)b', 'lookaround'],
    ['a{1001}', 'more than 1000'],
    ['(a{1000}){1000}', 'too large'],
    ['\\', 'lone'],
    ['x'.repeat(maxRegexLength + 1), 'longer than'],
  ])('refuses %s (%s)', (pattern, message) => {
    expect(() => compileRegex(pattern)).toThrow(RegexSyntaxError);
    expect(() => compileRegex(pattern)).toThrow(message);
  });

  it('answers patterns that freeze a backtracking engine', () => {
    // A backtracking engine needs years for the first of these; a regression here hangs past the test timeout.
    const input = 'x'.repeat(100_000);
    for (const pattern of ['(x+x+)+y', '(a|a)*b', '(\\w|\\d)+!', '^(x*)*$y', 'x*x*x*x*x*x*y', '(.*){20}z']) {
      expect(compileRegex(pattern).test(input)).toBe(false);
    }
  });

  it('agrees with RegExp on generated patterns and inputs', () => {
    const atom = fc.constantFrom('a', 'b', '.', '\\d', '\\w', '\\s', '[ab]', '[^a]', '[a-c]', '\\b', '^', '$', '-', '1', ' ');
    const piece = fc
      .tuple(atom, fc.constantFrom('', '*', '+', '?', '{2}', '{1,3}', '{0,}', '*?'))
      .map(([a, q]) => (a === '^' || a === '$' || a === '\\b' ? a : a + q));
    const pattern: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
      expr: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.array(piece, { maxLength: 5 }).map((parts) => parts.join('')),
        fc.tuple(tie('expr'), tie('expr')).map(([a, b]) => `(${a}|${b})`),
        fc.tuple(tie('expr'), fc.constantFrom('*', '+', '?', '')).map(([a, q]) => `(?:${a})${q}`),
      ),
    })).expr;
    const input = fc.string({ unit: fc.constantFrom('a', 'b', 'c', '1', ' ', '-', '\n'), maxLength: 12 });
    fc.assert(
      fc.property(pattern, input, (source, text) => {
        expect(compileRegex(source).test(text)).toBe(new RegExp(source).test(text));
      }),
      { numRuns: 3000, seed: 20261125 },
    );
  });
});
