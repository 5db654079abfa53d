import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileSafeRegex, RegexSyntaxError, splitRegexLiteral } from '../../../lib/core/regex/safe-regex';

describe('the guardrail pattern matcher', () => {
  const atoms = [
    'a',
    'b',
    'ab',
    '.',
    '[ab]',
    '[^a]',
    '[a-c]',
    '\\w',
    '\\W',
    '\\d',
    '\\s',
    '\\b',
    '\\B',
    '^',
    '$',
    'A',
    '(?:a|b)',
    '(a|ab)',
    '(?:ab|a)',
    '(a*)+',
    '(?:a|)',
    '(?:a+|b)+',
    'x',
  ];
  const quantifiers = ['', '', '*', '+', '?', '*?', '+?', '??', '{2}', '{1,3}', '{0,2}?', '{2,}'];
  const pattern = fc
    .array(fc.tuple(fc.constantFrom(...atoms), fc.constantFrom(...quantifiers)), { minLength: 1, maxLength: 5 })
    .map((parts) => parts.map(([atom, quantifier]) => (['^', '$', '\\b', '\\B'].includes(atom) ? atom : atom + quantifier)).join(''));
  const alternatives = fc.tuple(pattern, fc.option(pattern)).map(([first, second]) => (second ? `${first}|${second}` : first));
  const text = fc.string({ unit: fc.constantFrom('a', 'b', 'A', ' ', '1', '\n', 'x', 'é'), maxLength: 12 });

  it('agrees with JavaScript on whether, where and what it matches, and on replacing every match', () => {
    fc.assert(
      fc.property(alternatives, text, fc.constantFrom('', 'i', 'm', 's', 'im'), (source, sample, flags) => {
        let native: RegExp;
        try {
          native = new RegExp(source, flags);
        } catch {
          return;
        }
        const safe = compileSafeRegex(source, flags);
        const expected = native.exec(sample);
        expect(safe.test(sample)).toBe(expected !== null);
        expect(safe.firstMatch(sample)).toEqual(expected ? { index: expected.index, text: expected[0] } : undefined);
        const replaced = sample.replace(new RegExp(source, `${flags}g`), (match) => (match === '' ? '' : '#'));
        expect(safe.replaceAll(sample, '#').text).toBe(replaced);
      }),
      { numRuns: 3_000, seed: 20_260_601 },
    );
  });

  it.each([
    ['(a+)+$', 'a'.repeat(100_000) + '!'],
    ['a*a*b', 'a'.repeat(100_000)],
    ['.*x', 'y'.repeat(100_000)],
    ['(x+x+)+y', 'x'.repeat(100_000)],
    ['\\s*$|z', ' '.repeat(50_000) + 'a' + ' '.repeat(50_000) + 'a'],
  ])('scans pathological /%s/ over 100,000 characters in linear time', (source, sample) => {
    const regex = compileSafeRegex(source);
    const started = performance.now();
    regex.test(sample);
    regex.firstMatch(sample);
    regex.replaceAll(sample, '#');
    // The backtracking engine needs seconds to years here; linear work takes milliseconds.
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it.each([
    ['(a)\\1', /back-reference/],
    ['(?<x>a)\\k<x>', /back-reference/],
    ['a(?=b)', /lookaround/],
    ['(?<!a)b', /lookaround/],
    ['(?i)abc', /inline flags/],
    ['a{5,2}', /out of order/],
    ['a{1001}', /more than 1000 times/],
    ['[b-a]', /out of order/],
    ['(ab', /unterminated group/],
    ['ab)', /unmatched/],
    ['*a', /nothing to repeat/],
    ['x'.repeat(1_001), /longer than 1000/],
    ['(?:a{1000}){1000}', /too large/],
  ])('refuses /%s/ with a reason', (source, reason) => {
    expect(() => compileSafeRegex(source)).toThrow(RegexSyntaxError);
    expect(() => compileSafeRegex(source)).toThrow(reason);
  });

  it('refuses flags it does not know', () => {
    expect(() => compileSafeRegex('a', 'x')).toThrow(/unsupported flag "x"/);
  });

  it('reads /pattern/flags literals and leaves other rules alone', () => {
    expect(splitRegexLiteral('/secret/i')).toEqual({ pattern: 'secret', flags: 'i' });
    expect(splitRegexLiteral('/api/v1/')).toEqual({ pattern: 'api/v1', flags: '' });
    expect(splitRegexLiteral('a/b')).toEqual({ pattern: 'a/b', flags: '' });
    expect(splitRegexLiteral('/a/xyz')).toEqual({ pattern: '/a/xyz', flags: '' });
  });

  it('matches case-insensitively, across lines and by code point escapes', () => {
    expect(compileSafeRegex('PASSWORD', 'i').test('my password is')).toBe(true);
    expect(compileSafeRegex('[^a]', 'i').test('A')).toBe(false);
    expect(compileSafeRegex('^b', 'm').test('a\nb')).toBe(true);
    expect(compileSafeRegex('^b').test('a\nb')).toBe(false);
    expect(compileSafeRegex('a.b', 's').test('a\nb')).toBe(true);
    expect(compileSafeRegex('\\u{1F600}', 'u').firstMatch('x😀y')).toEqual({ index: 1, text: '😀' });
  });

  it('counts replacements and leaves texts without a match as they are', () => {
    const regex = compileSafeRegex('\\d{3}');
    expect(regex.replaceAll('123 and 456 and 78', '###')).toEqual({ text: '### and ### and 78', count: 2 });
    expect(regex.replaceAll('none here', '###')).toEqual({ text: 'none here', count: 0 });
  });

  it('keeps matching correctly when a text needs more DFA states than it caches', () => {
    // (a|b)*a(a|b){9} needs 2^10 states on a random a/b text: the cache starts over and goes on.
    const regex = compileSafeRegex('(?:a|b)*a(?:a|b){9}$');
    const native = /(?:a|b)*a(?:a|b){9}$/;
    let seed = 7;
    for (let round = 0; round < 20; round++) {
      let sample = '';
      for (let i = 0; i < 2_000; i++) {
        seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
        sample += seed % 2 === 0 ? 'a' : 'b';
      }
      expect(regex.test(sample)).toBe(native.test(sample));
    }
  });
});
