import { describe, expect, it } from 'vitest';
import { maxScannedText } from '../../../lib/guardrails';
import { fencedLanguages } from '../../../lib/guardrails/checks/code';
import { countCharacters, countSentences, countWords } from '../../../lib/guardrails/checks/text';
import { checkInput, run } from './check-input';

type Row = [name: string, id: string, parameters: Record<string, unknown>, text: string, verdict: boolean];

describe('text checks', () => {
  const rows: Row[] = [
    ['regexMatch matches', 'default.regexMatch', { rule: '\\d{3}-\\d{4}' }, 'call 555-1234 now', true],
    ['regexMatch misses', 'default.regexMatch', { rule: '\\d{3}-\\d{4}' }, 'no number', false],
    ['regexMatch not inverts', 'default.regexMatch', { rule: 'secret', not: true }, 'a secret', false],
    ['regexMatch flags', 'default.regexMatch', { rule: 'SECRET', flags: 'i' }, 'a secret', true],
    ['sentenceCount in range', 'default.sentenceCount', { minSentences: 2, maxSentences: 3 }, 'One. Two! Three?', true],
    ['sentenceCount above', 'default.sentenceCount', { maxSentences: 1 }, 'One. Two.', false],
    ['sentenceCount not', 'default.sentenceCount', { maxSentences: 1, not: true }, 'One. Two.', true],
    ['wordCount in range', 'default.wordCount', { minWords: 3, maxWords: 5 }, 'one two three four', true],
    ['wordCount below', 'default.wordCount', { minWords: 5 }, 'one two', false],
    ['characterCount counts code points', 'default.characterCount', { maxCharacters: 3 }, '😀😀😀', true],
    ['characterCount above', 'default.characterCount', { maxCharacters: 3 }, 'abcd', false],
    ['contains any', 'default.contains', { words: ['cat', 'dog'], operator: 'any' }, 'a dog', true],
    ['contains all missing one', 'default.contains', { words: ['cat', 'dog'], operator: 'all' }, 'a dog', false],
    ['contains none', 'default.contains', { words: ['cat', 'dog'], operator: 'none' }, 'a bird', true],
    ['contains defaults to any', 'default.contains', { words: ['bird'] }, 'a bird', true],
    ['containsCode finds a fenced block', 'default.containsCode', { format: 'Python' }, 'Try:\n```py\nprint(1)\n```\n', true],
    ['containsCode other language', 'default.containsCode', { format: 'SQL' }, '```js\nx()\n```', false],
    ['containsCode not', 'default.containsCode', { format: 'SQL', not: true }, 'plain text', true],
    ['alluppercase', 'default.alluppercase', {}, 'HELLO, WORLD 42!', true],
    ['alluppercase with lowercase', 'default.alluppercase', {}, 'HELLO world', false],
    ['alllowercase', 'default.alllowercase', {}, 'héllo wörld', true],
    ['alllowercase with uppercase', 'default.isAllLowerCase', {}, 'Hello', false],
    ['endsWith', 'default.endsWith', { suffix: 'Thanks' }, 'Reply soon. Thanks.\n', true],
    ['endsWith other ending', 'default.endsWith', { suffix: 'Thanks' }, 'Thanks, bye', false],
    ['notNull', 'default.notNull', {}, 'x', true],
    ['notNull on whitespace', 'default.notNull', {}, '  \n ', false],
    ['notNull not', 'default.notNull', { not: true }, '', true],
  ];

  it.each(rows)('%s', async (_name, id, parameters, text, verdict) => {
    const result = await run(id, parameters, text);
    expect(result.error).toBeUndefined();
    expect(result.verdict).toBe(verdict);
  });

  it.each([
    ['default.regexMatch', {}, 'rule', /`rule` is required/],
    ['default.regexMatch', { rule: '(a)\\1' }, 'rule', /back-reference/],
    ['default.regexMatch', { rule: 'a', flags: 'q' }, 'rule', /unsupported flag/],
    ['default.regexMatch', { rul: 'a' }, 'rul', /did you mean `rule`/],
    ['default.wordCount', { minWords: 5, maxWords: 2 }, 'minWords', /above `maxWords`/],
    ['default.wordCount', { minWords: 'five' }, 'minWords', /whole number/],
    ['default.sentenceCount', { maxSentences: -1 }, 'maxSentences', /at least 0/],
    ['default.contains', { words: [] }, 'words', /at least one/],
    ['default.contains', { words: ['a'], operator: 'some' }, 'operator', /"any", "all", "none"/],
    ['default.contains', { words: ['a'], not: true }, 'not', /use `operator` instead/],
    ['default.containsCode', { format: 'Brainfuck' }, 'format', /must be one of/],
    ['default.endsWith', { suffix: '' }, 'suffix', /non-empty/],
    ['default.alluppercase', { not: 'yes' }, 'not', /true or false/],
  ])('%s refuses %j naming `%s`', async (id, parameters, parameter, message) => {
    const result = await run(id, parameters, 'text');
    expect(result.verdict).toBe(true); // failOnError is not set: the check passes with an error
    expect(result.error).toMatch(message);
    const failing = await run(id, { ...parameters, failOnError: true }, 'text');
    expect(failing.verdict).toBe(false);
    expect(failing.error).toContain(`\`${parameter}\``);
  });

  it('reports where a pattern matched', async () => {
    const result = await run('default.regexMatch', { rule: 'b+' }, 'aabbbcc');
    expect(result.data).toMatchObject({ matched: true, match: { text: 'bbb', index: 2 } });
  });

  it('refuses a text longer than it scans, so failOnError decides', async () => {
    const long = 'a'.repeat(maxScannedText + 1);
    expect(await run('default.regexMatch', { rule: 'x', not: true }, long)).toMatchObject({ verdict: true, error: expect.stringMatching(/at most 1000000/) });
    expect(await run('default.regexMatch', { rule: 'x', not: true, failOnError: true }, long)).toMatchObject({ verdict: false });
  });

  it.each([
    ['', 0],
    ['Hello world', 1],
    ['Pi is 3.14. Right?', 2],
    ['He said "stop." Then left!', 2],
    ['Wait... what?!', 2],
    ['...', 0],
    ['你好。再见。', 2],
  ])('counts the sentences of %j as %i', (text, count) => {
    expect(countSentences(text)).toBe(count);
  });

  it('counts words as runs of non-space and characters as code points', () => {
    expect(countWords('  one\ttwo\nthree  ')).toBe(3);
    expect(countWords('')).toBe(0);
    expect(countCharacters('a😀b')).toBe(3);
  });

  it('names the languages of fenced blocks, ignoring fences inside a block', () => {
    expect(fencedLanguages('```ts\nconst a = "```sql";\n```\n~~~bash\nls\n~~~')).toEqual(['TypeScript', 'Shell']);
  });

  it('runs on the response side too', async () => {
    const result = await run('default.wordCount', { maxWords: 2 }, checkInput('three words here', { side: 'response', response: { choices: [] } }));
    expect(result.verdict).toBe(false);
  });
});
