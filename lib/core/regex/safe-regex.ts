import { Machine, type StepMeter } from './machine';
import { matchesEmpty, parseFlags, parsePattern, RegexSyntaxError } from './syntax';

export { RegexSyntaxError } from './syntax';
export { maxPatternLength } from './syntax';
export type { StepMeter } from './machine';

/**
 * A user-supplied regular expression that runs in time linear in the text, whatever the pattern:
 * `(a+)+$` or `a*a*b`, which take seconds or longer on a few kilobytes in the backtracking `RegExp`
 * engine, cost the same per character as `abc` here.
 */
export interface SafeRegex {
  readonly source: string;
  readonly flags: string;
  /** True when the pattern can match the empty string. */
  readonly matchesEmpty: boolean;
  /** Each method takes an optional meter that is charged for the work done and may stop it by throwing. */
  test(text: string, meter?: StepMeter): boolean;
  /** The first match as JavaScript would find it: its index and text. */
  firstMatch(text: string, meter?: StepMeter): { index: number; text: string } | undefined;
  /** Every non-overlapping, non-empty match replaced by `replacement` (taken literally); the count says how many. */
  replaceAll(text: string, replacement: string, meter?: StepMeter): { text: string; count: number };
}

/** Compiles `pattern`, or throws a RegexSyntaxError saying what is wrong with it. */
export function compileSafeRegex(pattern: string, flags = ''): SafeRegex {
  const parsedFlags = parseFlags(flags);
  const tree = parsePattern(pattern, parsedFlags);
  const machine = new Machine(tree, parsedFlags);
  return {
    source: pattern,
    flags,
    matchesEmpty: matchesEmpty(tree),
    test: (text, meter) => machine.metered(meter, () => machine.matchesFrom(text, 0)),
    firstMatch: (text, meter) =>
      machine.metered(meter, () => {
        if (!machine.matchesFrom(text, 0)) return undefined;
        const span = machine.firstMatch(text, 0);
        return span && { index: span[0], text: text.slice(span[0], span[1]) };
      }),
    replaceAll: (text, replacement, meter) => machine.metered(meter, () => replaceEvery(machine, text, replacement)),
  };
}

function replaceEvery(machine: Machine, text: string, replacement: string): { text: string; count: number } {
  let result = '';
  let copied = 0;
  let from = 0;
  let count = 0;
  // The DFA answers "any match left?" cheaply; the Pike VM runs only to locate one that exists.
  while (from <= text.length && machine.matchesFrom(text, from)) {
    const span = machine.firstMatch(text, from);
    if (!span) break;
    const [start, end] = span;
    if (end === start) {
      from = end + 1;
      continue;
    }
    result += text.slice(copied, start) + replacement;
    count++;
    copied = from = end;
  }
  return { text: count === 0 ? text : result + text.slice(copied), count };
}

/**
 * Reads a rule written as a JavaScript literal, `/pattern/flags`, or else a bare pattern. As in the
 * configs this format comes from, a rule that starts with `/` and ends with `/` plus flag letters is
 * a literal: `/api/v1/` is the pattern `api/v1`.
 */
export function splitRegexLiteral(rule: string): { pattern: string; flags: string } {
  const literal = /^\/([\s\S]+)\/([a-z]*)$/.exec(rule);
  if (literal && /^[gimsuyd]*$/.test(literal[2])) return { pattern: literal[1], flags: literal[2] };
  return { pattern: rule, flags: '' };
}

export function isRegexSyntaxError(error: unknown): error is RegexSyntaxError {
  return error instanceof RegexSyntaxError;
}
