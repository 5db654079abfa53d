import { CheckParameterError } from '../check-types';
import { defineCheck } from '../define-check';
import { scannedText } from '../limits';
import { optionalEnum, optionalNumber, optionalString, regexParameter, requiredString, stringList } from '../parameters';
import { maxPatternLength } from '../../core/regex/safe-regex';
import { CheckBudgetError, stepLimits, WorkBudget } from '../work-budget';
import { WordFinder } from '../word-finder';

/** Checks that read only the text: patterns, counts, words, case, endings. */

const bothSides = ['request', 'response'] as const;
const excerpt = (text: string) => (text.length > 200 ? `${text.slice(0, 200)}…` : text);

export const regexMatch = defineCheck({
  id: 'default.regexMatch',
  sides: bothSides,
  invertible: true,
  parameters: ['rule', 'flags'],
  parse(params) {
    const rule = requiredString(params, 'rule', { maxLength: maxPatternLength });
    const flags = optionalString(params, 'flags', '', { allowEmpty: true, maxLength: 8 });
    return { rule, regex: regexParameter('rule', rule, flags) };
  },
  run({ rule, regex }, input) {
    const text = scannedText(input.text);
    const budget = new WorkBudget('default.regexMatch', stepLimits.regex);
    if (!regex.test(text, budget)) return { verdict: false, data: { rule, matched: false, explanation: 'The pattern did not match the text.' } };
    // The verdict is known; where the match lies is for the report, so a budget spent locating it
    // does not turn a match into an error (which failOnError: false would let pass).
    let match: { index: number; text: string } | undefined;
    try {
      match = regex.firstMatch(text, budget);
    } catch (error) {
      if (!(error instanceof CheckBudgetError)) throw error;
    }
    return {
      verdict: true,
      data: match
        ? { rule, matched: true, match: { text: excerpt(match.text), index: match.index }, explanation: `The pattern matched at character ${match.index}.` }
        : { rule, matched: true, explanation: "The pattern matched; where was not worked out within the check's budget." },
    };
  },
});

/** A `min…` / `max…` pair: whole numbers, min not above max. */
function countRange(params: Record<string, unknown>, minName: string, maxName: string, defaultMax: number) {
  const min = optionalNumber(params, minName, 0, { min: 0, integer: true });
  const max = optionalNumber(params, maxName, defaultMax, { min: 0, integer: true });
  if (min > max) throw new CheckParameterError(minName, `\`${minName}\` (${min}) is above \`${maxName}\` (${max}); swap them or widen the range.`);
  return { min, max };
}

function rangeOutcome(what: string, count: number, { min, max }: { min: number; max: number }) {
  const verdict = count >= min && count <= max;
  return {
    verdict,
    data: {
      count,
      min,
      max,
      explanation: `The text has ${count} ${what}, ${verdict ? `from ${min} to ${max}` : count < min ? `fewer than ${min}` : `more than ${max}`}.`,
    },
  };
}

// Whitespace as String.prototype.trim sees it (ECMAScript WhiteSpace and LineTerminator).
function isSpace(code: number): boolean {
  if (code < 128) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Maximal runs of non-whitespace. */
export function countWords(text: string): number {
  let words = 0;
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const space = isSpace(text.charCodeAt(i));
    if (!space && !inWord) words++;
    inWord = !space;
  }
  return words;
}

const sentenceEnds = new Set([0x2e, 0x21, 0x3f, 0x2026, 0x3002, 0xff01, 0xff1f]); // . ! ? … 。！？
const closers = new Set([0x22, 0x27, 0x29, 0x5d, 0x201d, 0x2019, 0x300d]); // " ' ) ] ” ’ 」

/**
 * Sentences: stretches of text with at least one letter or digit, each ended by `.`, `!`, `?` (or
 * their CJK forms, or `…`) before whitespace or the end — so "3.14" and "e.g.x" do not split — and a
 * final stretch without an ending counts too.
 */
export function countSentences(text: string): number {
  let sentences = 0;
  let content = false;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (sentenceEnds.has(code)) {
      let after = i + 1;
      while (after < text.length && (sentenceEnds.has(text.charCodeAt(after)) || closers.has(text.charCodeAt(after)))) after++;
      const cjk = code >= 0x3000;
      if (content && (cjk || after === text.length || isSpace(text.charCodeAt(after)))) {
        sentences++;
        content = false;
      }
      i = after - 1;
    } else if (!content && !isSpace(code) && !closers.has(code) && (code >= 128 || /[A-Za-z0-9]/.test(text[i]))) content = true;
  }
  return content ? sentences + 1 : sentences;
}

/** Code points, so an emoji or another character outside the BMP counts once. */
export function countCharacters(text: string): number {
  let pairs = 0;
  for (let i = 0; i < text.length - 1; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        pairs++;
        i++;
      }
    }
  }
  return text.length - pairs;
}

export const sentenceCount = defineCheck({
  id: 'default.sentenceCount',
  sides: bothSides,
  invertible: true,
  parameters: ['minSentences', 'maxSentences'],
  parse: (params) => countRange(params, 'minSentences', 'maxSentences', 99_999),
  run: (range, input) => rangeOutcome('sentences', countSentences(scannedText(input.text)), range),
});

export const wordCount = defineCheck({
  id: 'default.wordCount',
  sides: bothSides,
  invertible: true,
  parameters: ['minWords', 'maxWords'],
  parse: (params) => countRange(params, 'minWords', 'maxWords', 99_999),
  run: (range, input) => rangeOutcome('words', countWords(scannedText(input.text)), range),
});

export const characterCount = defineCheck({
  id: 'default.characterCount',
  sides: bothSides,
  invertible: true,
  parameters: ['minCharacters', 'maxCharacters'],
  parse: (params) => countRange(params, 'minCharacters', 'maxCharacters', 9_999_999),
  run: (range, input) => rangeOutcome('characters', countCharacters(input.text), range),
});

const operators = ['any', 'all', 'none'] as const;
export type ListOperator = (typeof operators)[number];

export function operatorParameter(params: Record<string, unknown>, fallback: ListOperator): ListOperator {
  return optionalEnum(params, 'operator', operators, fallback);
}

/** The verdict of an any/all/none test over a list, from how many of its items were found. */
export function listVerdict(operator: ListOperator, found: number, total: number): boolean {
  return operator === 'any' ? found > 0 : operator === 'all' ? found === total : found === 0;
}

/** The most characters a `contains` list holds in all: its matcher is built once and kept with the config. */
export const maxWordCharacters = 100_000;

export const contains = defineCheck({
  id: 'default.contains',
  sides: bothSides,
  invertible: false,
  parameters: ['words', 'operator'],
  parse(params) {
    const words = stringList(params, 'words', { required: true });
    const characters = words.reduce((sum, word) => sum + word.length, 0);
    if (characters > maxWordCharacters)
      throw new CheckParameterError('words', `\`words\` holds ${characters} characters in all; at most ${maxWordCharacters} are allowed.`);
    return { words, finder: new WordFinder(words), operator: operatorParameter(params, 'any') };
  },
  run({ words, finder, operator }, input) {
    const present = finder.found(scannedText(input.text));
    const found = words.filter((_word, index) => present[index]);
    const missing = words.filter((_word, index) => !present[index]);
    const verdict = listVerdict(operator, found.length, words.length);
    return { verdict, data: { operator, found, missing, explanation: `${found.length} of ${words.length} words or phrases found (operator "${operator}").` } };
  },
});

const lowercaseLetter = /\p{Ll}/u;
const uppercaseLetter = /[\p{Lu}\p{Lt}]/u;

export const allUppercase = defineCheck({
  id: 'default.alluppercase',
  aliases: ['default.isAllUpperCase', 'default.allUpperCase'],
  sides: bothSides,
  invertible: true,
  parameters: [],
  parse: () => ({}),
  run(_params, input) {
    const verdict = !lowercaseLetter.test(scannedText(input.text));
    return { verdict, data: { explanation: verdict ? 'The text has no lowercase letters.' : 'The text has lowercase letters.' } };
  },
});

export const allLowercase = defineCheck({
  id: 'default.alllowercase',
  aliases: ['default.isAllLowerCase', 'default.allLowerCase'],
  sides: bothSides,
  invertible: true,
  parameters: [],
  parse: () => ({}),
  run(_params, input) {
    const verdict = !uppercaseLetter.test(scannedText(input.text));
    return { verdict, data: { explanation: verdict ? 'The text has no uppercase letters.' : 'The text has uppercase letters.' } };
  },
});

export const endsWith = defineCheck({
  id: 'default.endsWith',
  sides: bothSides,
  invertible: true,
  parameters: ['suffix'],
  parse: (params) => ({ suffix: requiredString(params, 'suffix') }),
  run({ suffix }, input) {
    // Trailing whitespace and a final period are forgiven: models add them where a prompt asked for neither.
    const text = input.text.trimEnd();
    const verdict = text.endsWith(suffix) || text.endsWith(`${suffix}.`);
    return {
      verdict,
      data: { suffix, explanation: verdict ? `The text ends with ${JSON.stringify(suffix)}.` : `The text does not end with ${JSON.stringify(suffix)}.` },
    };
  },
});

export const notNull = defineCheck({
  id: 'default.notNull',
  sides: bothSides,
  invertible: true,
  parameters: [],
  parse: () => ({}),
  run(_params, input) {
    const verdict = input.text.trim().length > 0;
    return { verdict, data: { explanation: verdict ? 'The text is not empty.' : 'The text is empty or only whitespace.' } };
  },
});
