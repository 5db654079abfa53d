/**
 * Regular expressions for `$regex` in conditional routing, matched in time linear in the input.
 *
 * Any member key may send a config, and its queries run on the request path, so a pattern such as
 * `(x+x+)+y` must not be able to freeze the process the way it does in the backtracking `RegExp`
 * engine. A pattern is compiled to a Thompson NFA and simulated with every live state at once, one
 * input position at a time: a match costs at most (program size × input length) steps, whatever the
 * pattern. The syntax is JavaScript's without flags (UTF-16 code units, as `new RegExp(pattern)`),
 * minus the two features that need backtracking — back-references and lookaround — which are
 * refused with a message when the config is validated.
 */

/** Sorted, non-overlapping inclusive code-unit ranges: [from0, to0, from1, to1, …]. */
type Ranges = number[];
type Assertion = 'start' | 'end' | 'wordBoundary' | 'notWordBoundary';

type Node =
  | { kind: 'empty' }
  | { kind: 'set'; ranges: Ranges }
  | { kind: 'assert'; at: Assertion }
  | { kind: 'concat'; items: Node[] }
  | { kind: 'alternation'; options: Node[] }
  | { kind: 'repeat'; item: Node; min: number; max: number };

type Instruction =
  | { op: 'set'; ranges: Ranges; next: number }
  | { op: 'split'; next: number; other: number }
  | { op: 'assert'; at: Assertion; next: number }
  | { op: 'match' };

export const maxRegexLength = 512;
/** Counted repetitions (`{n,m}`) copy their item; this bounds the compiled program and so each step. */
const maxRegexProgram = 2_000;
const maxCount = 1_000;
const lastCodeUnit = 0xffff;

export class RegexSyntaxError extends Error {}

export interface LinearRegex {
  test(input: string): boolean;
}

/** Compiles `pattern`, or throws a `RegexSyntaxError` saying what is wrong with it. */
export function compileRegex(pattern: string): LinearRegex {
  if (pattern.length > maxRegexLength) throw new RegexSyntaxError(`is longer than ${maxRegexLength} characters`);
  const program: Instruction[] = [{ op: 'match' }];
  const start = emit(new Parser(pattern).parse(), 0, program);
  return { test: (input) => run(program, start, input) };
}

// ---- character sets

const digit: Ranges = [0x30, 0x39];
const word: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const space: Ranges = [0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff];
const lineTerminators: Ranges = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];

function normalize(ranges: Ranges): Ranges {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i]!, ranges[i + 1]!]);
  pairs.sort((a, b) => a[0] - b[0]);
  const merged: Ranges = [];
  for (const [from, to] of pairs) {
    const last = merged.length - 1;
    if (last > 0 && from <= merged[last]! + 1) merged[last] = Math.max(merged[last]!, to);
    else merged.push(from, to);
  }
  return merged;
}

function complement(ranges: Ranges): Ranges {
  const sorted = normalize(ranges);
  const result: Ranges = [];
  let next = 0;
  for (let i = 0; i < sorted.length; i += 2) {
    if (sorted[i]! > next) result.push(next, sorted[i]! - 1);
    next = sorted[i + 1]! + 1;
  }
  if (next <= lastCodeUnit) result.push(next, lastCodeUnit);
  return result;
}

function inRanges(ranges: Ranges, code: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (code < ranges[i]!) return false;
    if (code <= ranges[i + 1]!) return true;
  }
  return false;
}

const isWordAt = (input: string, index: number) => index >= 0 && index < input.length && inRanges(word, input.charCodeAt(index));

// ---- parsing

const single = (code: number): Ranges => [code, code];
const classEscapes: Record<string, Ranges> = { d: digit, D: complement(digit), w: word, W: complement(word), s: space, S: complement(space) };
const controlEscapes: Record<string, number> = { t: 0x09, n: 0x0a, v: 0x0b, f: 0x0c, r: 0x0d };

class Parser {
  private at = 0;

  constructor(private readonly pattern: string) {}

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
    return options.length === 1 ? options[0]! : { kind: 'alternation', options };
  }

  private sequence(): Node {
    const items: Node[] = [];
    while (this.at < this.pattern.length && this.peek() !== '|' && this.peek() !== ')') {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    if (items.length === 0) return { kind: 'empty' };
    return items.length === 1 ? items[0]! : { kind: 'concat', items };
  }

  private quantified(atom: Node): Node {
    const bounds = this.quantifier();
    if (!bounds) return atom;
    if (atom.kind === 'assert') this.fail(`has nothing to repeat before position ${this.at}`);
    if (this.peek() === '?') this.at++; // lazy or greedy: the same strings match
    if (this.quantifier(true)) this.fail(`has nothing to repeat at position ${this.at}`);
    return { kind: 'repeat', item: atom, min: bounds.min, max: bounds.max };
  }

  /** Reads `*`, `+`, `?` or `{n}`, `{n,}`, `{n,m}`; a `{` that is not one of these is a literal. */
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
    if (min > maxCount || (max !== Infinity && max > maxCount)) this.fail(`repeats more than ${maxCount} times`);
    this.at += counted[0].length;
    return { min, max };
  }

  private atom(): Node {
    const char = this.pattern[this.at++]!;
    switch (char) {
      case '(':
        return this.group();
      case '[':
        return { kind: 'set', ranges: this.characterClass() };
      case '.':
        return { kind: 'set', ranges: complement(lineTerminators) };
      case '^':
        return { kind: 'assert', at: 'start' };
      case '$':
        return { kind: 'assert', at: 'end' };
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
        return { kind: 'set', ranges: single(0x7b) };
      default:
        return { kind: 'set', ranges: single(char.charCodeAt(0)) };
    }
  }

  private group(): Node {
    if (this.peek() === '?') {
      const kind = this.pattern.slice(this.at, this.at + 3);
      if (kind.startsWith('?:')) this.at += 2;
      else if (kind.startsWith('?=') || kind.startsWith('?!') || kind === '?<=' || kind === '?<!') this.fail('uses lookaround ((?=, (?!, (?<=, (?<!), which is not supported');
      else if (kind.startsWith('?<')) {
        const name = /^\?<[A-Za-z_$][\w$]*>/.exec(this.pattern.slice(this.at));
        if (!name) this.fail(`has an invalid group name at position ${this.at}`);
        this.at += name[0].length;
      } else this.fail(`has an invalid group at position ${this.at - 1}`);
    }
    const inner = this.alternation();
    if (this.peek() !== ')') this.fail('has an unterminated group: a "(" without its ")"');
    this.at++;
    // Wrapped so that a group around an assertion, `(?:\b)*`, may be repeated as in JavaScript.
    return { kind: 'concat', items: [inner] };
  }

  private escape(): Node {
    const char = this.pattern[this.at];
    if (char === undefined) this.fail('ends with a lone "\\"');
    if (char === 'b' || char === 'B') {
      this.at++;
      return { kind: 'assert', at: char === 'b' ? 'wordBoundary' : 'notWordBoundary' };
    }
    if (/[1-9]/.test(char) || (char === 'k' && this.pattern[this.at + 1] === '<')) this.fail('uses a back-reference, which is not supported');
    return { kind: 'set', ranges: this.escapedSet(false) };
  }

  /** After a `\`: a class escape (`\d`…) or one code unit; `\b` inside a class is a backspace. */
  private escapedSet(inClass: boolean): Ranges {
    const char = this.pattern[this.at++];
    if (char === undefined) this.fail('ends with a lone "\\"');
    const classRanges = classEscapes[char];
    if (classRanges) return classRanges;
    if (inClass && char === 'b') return single(0x08);
    const control = controlEscapes[char];
    if (control !== undefined) return single(control);
    if (char === '0' && !/\d/.test(this.peek() ?? '')) return single(0);
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

  private characterClass(): Ranges {
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
          if (to[0]! < from[0]!) this.fail(`has a character range out of order at position ${dash}`);
          ranges.push(from[0]!, to[0]!);
          continue;
        }
        ranges.push(...from, 0x2d, 0x2d, ...to); // a class escape on either side makes the dash literal
        continue;
      }
      ranges.push(...from);
    }
    this.at++;
    const set = normalize(ranges);
    return negated ? complement(set) : set;
  }

  private classAtom(): Ranges {
    const char = this.pattern[this.at++]!;
    if (char === '\\') return this.escapedSet(true);
    return single(char.charCodeAt(0));
  }
}

// ---- compiling: built back to front, so every instruction knows its successor when it is written

function emit(node: Node, next: number, program: Instruction[]): number {
  if (program.length > maxRegexProgram) throw new RegexSyntaxError(`is too large once its counted repetitions are expanded (at most ${maxRegexProgram} steps)`);
  const push = (instruction: Instruction) => program.push(instruction) - 1;
  switch (node.kind) {
    case 'empty':
      return next;
    case 'set':
      return push({ op: 'set', ranges: node.ranges, next });
    case 'assert':
      return push({ op: 'assert', at: node.at, next });
    case 'concat': {
      let entry = next;
      for (let i = node.items.length - 1; i >= 0; i--) entry = emit(node.items[i]!, entry, program);
      return entry;
    }
    case 'alternation': {
      const entries = node.options.map((option) => emit(option, next, program));
      let entry = entries[entries.length - 1]!;
      for (let i = entries.length - 2; i >= 0; i--) entry = push({ op: 'split', next: entries[i]!, other: entry });
      return entry;
    }
    case 'repeat': {
      let entry = next;
      if (node.max === Infinity) {
        const loop = push({ op: 'split', next: -1, other: next });
        (program[loop] as { next: number }).next = emit(node.item, loop, program);
        entry = loop;
      } else {
        for (let i = node.min; i < node.max; i++) entry = push({ op: 'split', next: emit(node.item, entry, program), other: next });
      }
      for (let i = 0; i < node.min; i++) entry = emit(node.item, entry, program);
      return entry;
    }
  }
}

// ---- matching

function holds(assertion: Assertion, input: string, position: number): boolean {
  switch (assertion) {
    case 'start':
      return position === 0;
    case 'end':
      return position === input.length;
    case 'wordBoundary':
      return isWordAt(input, position - 1) !== isWordAt(input, position);
    case 'notWordBoundary':
      return isWordAt(input, position - 1) === isWordAt(input, position);
  }
}

function run(program: Instruction[], start: number, input: string): boolean {
  // marks[pc] === generation means pc is already in the list for this position; generation = position + 1.
  const marks = new Uint32Array(program.length);
  const stack: number[] = [];
  let current: number[] = [];
  let next: number[] = [];

  /** Adds pc and everything reachable from it without reading input; true when that reaches `match`. */
  const add = (pc: number, position: number, list: number[]): boolean => {
    const generation = position + 1;
    stack.push(pc);
    while (stack.length > 0) {
      const at = stack.pop()!;
      if (marks[at] === generation) continue;
      marks[at] = generation;
      const instruction = program[at]!;
      switch (instruction.op) {
        case 'match':
          stack.length = 0;
          return true;
        case 'set':
          list.push(at);
          break;
        case 'split':
          stack.push(instruction.other, instruction.next);
          break;
        case 'assert':
          if (holds(instruction.at, input, position)) stack.push(instruction.next);
          break;
      }
    }
    return false;
  };

  for (let position = 0; ; position++) {
    // Unanchored search: a match may start at every position.
    if (add(start, position, current)) return true;
    if (position === input.length || (current.length === 0 && !canStartLater(program, start))) return false;
    const code = input.charCodeAt(position);
    for (const pc of current) {
      const instruction = program[pc] as { op: 'set'; ranges: Ranges; next: number };
      if (inRanges(instruction.ranges, code) && add(instruction.next, position + 1, next)) return true;
    }
    [current, next] = [next, current];
    next.length = 0;
  }
}

/** A program whose first step is `^` can only match at position 0; stop as soon as its threads die. */
function canStartLater(program: Instruction[], start: number): boolean {
  const first = program[start]!;
  return !(first.op === 'assert' && first.at === 'start');
}
