/**
 * The pattern language of guardrail rules: JavaScript's regular expressions over UTF-16 code units,
 * with the flags `i`, `m`, `s` and `u`, minus the two features that need backtracking —
 * back-references and lookaround — which are refused with a message saying so. Parsing yields a
 * small tree that `program.ts` compiles for the linear-time matchers in `machine.ts`.
 */

/** Sorted, non-overlapping inclusive code-unit ranges: [from0, to0, from1, to1, …]. */
export type Ranges = number[];

/** A character set: the code units in `ranges`, or every code unit but those when `negated`. */
export interface CharSet {
  ranges: Ranges;
  negated: boolean;
}

export type Assertion = 'start' | 'end' | 'lineStart' | 'lineEnd' | 'wordBoundary' | 'notWordBoundary';

export type Node =
  | { kind: 'empty' }
  | { kind: 'set'; set: CharSet }
  | { kind: 'assert'; at: Assertion }
  | { kind: 'concat'; items: Node[] }
  | { kind: 'alternation'; options: Node[] }
  | { kind: 'repeat'; item: Node; min: number; max: number; greedy: boolean };

export interface RegexFlags {
  ignoreCase: boolean;
  multiline: boolean;
  dotAll: boolean;
  unicode: boolean;
}

export class RegexSyntaxError extends Error {}

/** The longest pattern accepted: long enough for a list of phrases, short enough to parse in microseconds. */
export const maxPatternLength = 1_000;
/** The largest count in `{n,m}`; counted repetitions copy their item into the program. */
export const maxRepeatCount = 1_000;

export const digitRanges: Ranges = [0x30, 0x39];
export const wordRanges: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const spaceRanges: Ranges = [
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
];
export const lineTerminatorRanges: Ranges = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];

const controlEscapes: Record<string, number> = { t: 0x09, n: 0x0a, v: 0x0b, f: 0x0c, r: 0x0d };

/** Reads flags as JavaScript spells them; `g`, `y` and `d` change nothing for these matchers. */
export function parseFlags(flags: string): RegexFlags {
  const result: RegexFlags = { ignoreCase: false, multiline: false, dotAll: false, unicode: false };
  for (const flag of flags) {
    if (flag === 'i') result.ignoreCase = true;
    else if (flag === 'm') result.multiline = true;
    else if (flag === 's') result.dotAll = true;
    else if (flag === 'u') result.unicode = true;
    else if (flag !== 'g' && flag !== 'y' && flag !== 'd') throw new RegexSyntaxError(`has an unsupported flag "${flag}" (use i, m, s or u)`);
  }
  return result;
}

export function parsePattern(pattern: string, flags: RegexFlags): Node {
  if (pattern.length > maxPatternLength) throw new RegexSyntaxError(`is longer than ${maxPatternLength} characters`);
  return new Parser(pattern, flags).parse();
}

/** True when the pattern can match the empty string (a replacement rule must not). */
export function matchesEmpty(node: Node): boolean {
  switch (node.kind) {
    case 'empty':
    case 'assert':
      return true;
    case 'set':
      return false;
    case 'concat':
      return node.items.every(matchesEmpty);
    case 'alternation':
      return node.options.some(matchesEmpty);
    case 'repeat':
      return node.min === 0 || matchesEmpty(node.item);
  }
}

function normalize(ranges: Ranges): Ranges {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i], ranges[i + 1]]);
  pairs.sort((a, b) => a[0] - b[0]);
  const merged: Ranges = [];
  for (const [from, to] of pairs) {
    const last = merged.length - 1;
    if (last > 0 && from <= merged[last] + 1) merged[last] = Math.max(merged[last], to);
    else merged.push(from, to);
  }
  return merged;
}

export function complement(ranges: Ranges): Ranges {
  const sorted = normalize(ranges);
  const result: Ranges = [];
  let next = 0;
  for (let i = 0; i < sorted.length; i += 2) {
    if (sorted[i] > next) result.push(next, sorted[i] - 1);
    next = sorted[i + 1] + 1;
  }
  if (next <= 0xffff) result.push(next, 0xffff);
  return result;
}

const single = (code: number): Ranges => [code, code];
const classEscapes: Record<string, Ranges> = {
  d: digitRanges,
  D: complement(digitRanges),
  w: wordRanges,
  W: complement(wordRanges),
  s: spaceRanges,
  S: complement(spaceRanges),
};

/** One code point as the code units a UTF-16 string holds it in. */
function codeUnits(codePoint: number): number[] {
  if (codePoint <= 0xffff) return [codePoint];
  const offset = codePoint - 0x10000;
  return [0xd800 + (offset >> 10), 0xdc00 + (offset & 0x3ff)];
}

class Parser {
  private at = 0;

  constructor(
    private readonly pattern: string,
    private readonly flags: RegexFlags,
  ) {}

  parse(): Node {
    const node = this.alternation();
    if (this.at < this.pattern.length) this.fail(`has an unmatched ")" at position ${this.at}`);
    return node;
  }

  private fail(message: string): never {
    throw new RegexSyntaxError(message);
  }

  private peek(offset = 0): string | undefined {
    return this.pattern[this.at + offset];
  }

  private alternation(): Node {
    const options = [this.sequence()];
    while (this.peek() === '|') {
      this.at++;
      options.push(this.sequence());
    }
    return options.length === 1 ? options[0] : { kind: 'alternation', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.at < this.pattern.length && this.peek() !== '|' && this.peek() !== ')') items.push(this.quantified(this.atom()));
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0] : { kind: 'concat', items };
  }

  private quantified(atom: Node): Node {
    const bounds = this.quantifier();
    if (!bounds) return atom;
    if (atom.kind === 'assert') this.fail(`has nothing to repeat before position ${this.at}`);
    let greedy = true;
    if (this.peek() === '?') {
      this.at++;
      greedy = false;
    }
    if (this.quantifier(true)) this.fail(`has nothing to repeat at position ${this.at}`);
    return { kind: 'repeat', item: atom, min: bounds.min, max: bounds.max, greedy };
  }

  /** Reads `*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}`; a `{` that is none of these is a literal. */
  private quantifier(lookOnly = false): { min: number; max: number } | undefined {
    const char = this.peek();
    const simple = char === '*' ? { min: 0, max: Infinity } : char === '+' ? { min: 1, max: Infinity } : char === '?' ? { min: 0, max: 1 } : undefined;
    if (simple) {
      if (!lookOnly) this.at++;
      return simple;
    }
    if (char !== '{') return undefined;
    const counted = /^\{(\d+)(?:(,)(\d*))?\}/.exec(this.pattern.slice(this.at, this.at + 24));
    if (!counted) return undefined;
    const min = Number(counted[1]);
    const max = counted[2] === undefined ? min : counted[3] === '' ? Infinity : Number(counted[3]);
    if (lookOnly) return { min, max };
    if (max < min) this.fail(`has a repetition {${min},${max}} whose numbers are out of order`);
    if (min > maxRepeatCount || (max !== Infinity && max > maxRepeatCount)) this.fail(`repeats more than ${maxRepeatCount} times`);
    this.at += counted[0].length;
    return { min, max };
  }

  private atom(): Node {
    const char = this.pattern[this.at++];
    switch (char) {
      case '(':
        return this.group();
      case '[':
        return { kind: 'set', set: this.characterClass() };
      case '.':
        return { kind: 'set', set: { ranges: this.flags.dotAll ? [] : lineTerminatorRanges, negated: true } };
      case '^':
        return { kind: 'assert', at: this.flags.multiline ? 'lineStart' : 'start' };
      case '$':
        return { kind: 'assert', at: this.flags.multiline ? 'lineEnd' : 'end' };
      case '\\':
        return this.escape();
      case '*':
      case '+':
      case '?':
        return this.fail(`has nothing to repeat at position ${this.at - 1}`);
      case '{':
        this.at--;
        if (this.quantifier(true)) this.fail(`has nothing to repeat at position ${this.at}`);
        this.at++;
        return literal(0x7b);
      default:
        return literal(char.charCodeAt(0));
    }
  }

  private group(): Node {
    if (this.peek() === '?') {
      const kind = this.pattern.slice(this.at, this.at + 3);
      if (kind.startsWith('?:')) this.at += 2;
      else if (kind.startsWith('?=') || kind.startsWith('?!') || kind === '?<=' || kind === '?<!') {
        this.fail('uses lookaround ((?=, (?!, (?<=, (?<!), which needs backtracking and is not supported');
      } else if (kind.startsWith('?<')) {
        const name = /^\?<[A-Za-z_$][\w$]*>/.exec(this.pattern.slice(this.at));
        if (!name) this.fail(`has an invalid group name at position ${this.at}`);
        this.at += name[0].length;
      } else this.fail(`has an invalid group at position ${this.at - 1} (inline flags such as (?i) are not JavaScript: use the flags parameter)`);
    }
    const inner = this.alternation();
    if (this.peek() !== ')') this.fail('has an unterminated group: a "(" without its ")"');
    this.at++;
    // Wrapped, so that a group around an assertion, `(?:\b)?`, may be repeated as in JavaScript.
    return { kind: 'concat', items: [inner] };
  }

  private escape(): Node {
    const char = this.pattern[this.at];
    if (char === undefined) this.fail('ends with a lone "\\"');
    if (char === 'b' || char === 'B') {
      this.at++;
      return { kind: 'assert', at: char === 'b' ? 'wordBoundary' : 'notWordBoundary' };
    }
    if ((char >= '1' && char <= '9') || (char === 'k' && this.pattern[this.at + 1] === '<')) {
      this.fail('uses a back-reference, which needs backtracking and is not supported');
    }
    if (char === 'u' && this.flags.unicode && this.peek(1) === '{') {
      const units = codeUnits(this.bracedCodePoint());
      if (units.length === 1) return literal(units[0]);
      return { kind: 'concat', items: units.map(literal) };
    }
    return { kind: 'set', set: { ranges: this.escapedRanges(false), negated: false } };
  }

  /** `\u{…}` with the `u` flag, the cursor on the `u`. */
  private bracedCodePoint(): number {
    const braced = /^u\{([0-9a-fA-F]{1,6})\}/.exec(this.pattern.slice(this.at, this.at + 10));
    const value = braced ? parseInt(braced[1], 16) : NaN;
    if (!braced || value > 0x10ffff) this.fail(`has an invalid \\u{…} escape at position ${this.at - 1}`);
    this.at += braced[0].length;
    return value;
  }

  /** After a `\`: a class escape (`\d`…) or one code unit; `\b` inside a class is a backspace. */
  private escapedRanges(inClass: boolean): Ranges {
    const char = this.pattern[this.at++];
    if (char === undefined) this.fail('ends with a lone "\\"');
    if (char === 'p' || char === 'P') {
      if (this.flags.unicode) this.fail('uses a Unicode property escape (\\p{…}), which is not supported');
    }
    const classRanges = classEscapes[char];
    if (classRanges) return classRanges;
    if (inClass && char === 'b') return single(0x08);
    const control = controlEscapes[char];
    if (control !== undefined) return single(control);
    if (char === '0' && !/\d/.test(this.peek() ?? '')) return single(0);
    if (char === 'u' && this.flags.unicode && this.peek() === '{') {
      this.at--;
      const units = codeUnits(this.bracedCodePoint());
      if (units.length > 1) this.fail('has a character outside the Basic Multilingual Plane inside a character class, which is not supported');
      return single(units[0]);
    }
    if (char === 'x' || char === 'u') {
      const length = char === 'x' ? 2 : 4;
      const hex = this.pattern.slice(this.at, this.at + length);
      if (hex.length === length && /^[0-9a-fA-F]+$/.test(hex)) {
        this.at += length;
        return single(parseInt(hex, 16));
      }
    }
    if (char === 'c' && /[A-Za-z]/.test(this.peek() ?? '')) return single(this.pattern.charCodeAt(this.at++) % 32);
    return single(char.charCodeAt(0));
  }

  private characterClass(): CharSet {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const ranges: Ranges = [];
    while (this.peek() !== ']') {
      if (this.at >= this.pattern.length) this.fail('has an unterminated character class: a "[" without its "]"');
      const from = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== ']' && this.peek(1) !== undefined) {
        const dash = this.at++;
        const to = this.classAtom();
        if (from.length === 2 && to.length === 2 && from[0] === from[1] && to[0] === to[1]) {
          if (to[0] < from[0]) this.fail(`has a character range out of order at position ${dash}`);
          ranges.push(from[0], to[0]);
          continue;
        }
        ranges.push(...from, 0x2d, 0x2d, ...to); // a class escape on either side makes the dash literal
        continue;
      }
      ranges.push(...from);
    }
    this.at++;
    return { ranges: normalize(ranges), negated };
  }

  private classAtom(): Ranges {
    const char = this.pattern[this.at++];
    if (char === '\\') return this.escapedRanges(true);
    return single(char.charCodeAt(0));
  }
}

function literal(code: number): Node {
  return { kind: 'set', set: { ranges: [code, code], negated: false } };
}
