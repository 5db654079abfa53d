import { type Assertion, type CharSet, lineTerminatorRanges, type Node, type RegexFlags, RegexSyntaxError, wordRanges } from './syntax';

/**
 * A compiled pattern and the two ways it is run, each in time linear in the text:
 * - `test` / `matchesFrom`: a DFA built lazily from the NFA, one table lookup per code unit once the
 *   states a text needs exist (their number is capped; past the cap the cache starts over);
 * - `firstMatch`: a Pike VM, every thread in priority order, which finds the span JavaScript's
 *   backtracking engine would (leftmost, then greedy/lazy preference) at (program size × text) cost.
 * Guardrails run the DFA on every text and the Pike VM only where a match must be located.
 */

const MATCH = 0;
const SET = 1;
const SPLIT = 2;
const ASSERT = 3;

/** At most this many instructions once counted repetitions are expanded. */
export const maxProgramSize = 10_000;
/** DFA states kept per pattern before the cache starts over (each holds a 128-entry ASCII table). */
const maxDfaStates = 1_000;

// Context classes of the code unit on either side of a position, for assertions.
const NONE = 0; // before the start or after the end of the text
const WORD = 1;
const LINE_END = 2;
const OTHER = 3;

const assertionCodes: Record<Assertion, number> = { start: 0, end: 1, lineStart: 2, lineEnd: 3, wordBoundary: 4, notWordBoundary: 5 };

function holds(assertion: number, before: number, after: number): boolean {
  switch (assertion) {
    case 0:
      return before === NONE;
    case 1:
      return after === NONE;
    case 2:
      return before === NONE || before === LINE_END;
    case 3:
      return after === NONE || after === LINE_END;
    case 4:
      return (before === WORD) !== (after === WORD);
    default:
      return (before === WORD) === (after === WORD);
  }
}

function inRanges(ranges: number[], code: number): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (code < ranges[i]) return false;
    if (code <= ranges[i + 1]) return true;
  }
  return false;
}

const asciiClasses = new Uint8Array(128).map((_, code) => (inRanges(wordRanges, code) ? WORD : code === 0x0a || code === 0x0d ? LINE_END : OTHER));

function classOf(code: number): number {
  if (code < 128) return asciiClasses[code];
  return inRanges(lineTerminatorRanges, code) ? LINE_END : OTHER;
}

const classAt = (text: string, index: number) => (index < 0 || index >= text.length ? NONE : classOf(text.charCodeAt(index)));

/** The case variants JavaScript's `i` flag equates with a code unit (its single-unit lower and upper case). */
function caseVariants(code: number): [number, number] {
  const char = String.fromCharCode(code);
  const lower = char.toLowerCase();
  const upper = char.toUpperCase();
  return [lower.length === 1 ? lower.charCodeAt(0) : code, upper.length === 1 ? upper.charCodeAt(0) : code];
}

/** A character set with its ASCII answers precomputed, since most texts are mostly ASCII. */
class CompiledSet {
  private readonly ascii = new Uint8Array(128);

  constructor(
    private readonly set: CharSet,
    private readonly ignoreCase: boolean,
  ) {
    for (let code = 0; code < 128; code++) this.ascii[code] = this.slowHas(code) ? 1 : 0;
  }

  has(code: number): boolean {
    return code < 128 ? this.ascii[code] === 1 : this.slowHas(code);
  }

  private slowHas(code: number): boolean {
    let found = inRanges(this.set.ranges, code);
    if (!found && this.ignoreCase) {
      const [lower, upper] = caseVariants(code);
      found = inRanges(this.set.ranges, lower) || inRanges(this.set.ranges, upper);
    }
    return found !== this.set.negated;
  }
}

interface DfaState {
  /** The NFA instructions the state is at, before following the steps that read no input. */
  targets: Int32Array;
  /** The context class of the code unit read last (NONE at the start). */
  before: number;
  /** Next state per code unit above ASCII (ASCII ones are in the machine's table). */
  other: Map<number, number> | undefined;
  /** Whether a match completes at the end of the text from here: -1 not known yet, 0 no, 1 yes. */
  atEnd: number;
}

const MATCHED = -2;
const UNKNOWN = -1;

/**
 * Takes the work a run does where no cached answer exists (instructions followed, threads stepped)
 * and may stop the run by throwing: a pattern that needs a new DFA state at every character, or a
 * Pike VM run over many threads, is linear in the text but with the program's size as the factor.
 */
export interface StepMeter {
  spend(steps: number): void;
}

export class Machine {
  private readonly ops: Uint8Array;
  private readonly args: Int32Array;
  private readonly nexts: Int32Array;
  private readonly sets: CompiledSet[];
  private readonly start: number;

  private states: DfaState[] = [];
  /**
   * Next state per (state, ASCII code unit) at `state * 128 + code`: -1 not built yet, -2 a match
   * completes before that code unit is read. One flat array keeps the hot loop to one load per character.
   */
  private table = new Int32Array(16 * 128).fill(UNKNOWN);
  private stateIds = new Map<string, number>();
  private readonly initialStates = new Int32Array(4).fill(UNKNOWN);

  // Scratch space reused by every call (the matchers are synchronous, so calls never interleave).
  private readonly marks: Uint32Array;
  private generation = 0;
  private readonly stack: Int32Array;
  private readonly closure: Int32Array;
  private threadPcs: [Int32Array, Int32Array];
  private threadStarts: [Int32Array, Int32Array];
  /** The meter of the call in progress, and the steps taken since it was last charged. */
  private meter: StepMeter | undefined;
  private steps = 0;

  constructor(node: Node, flags: RegexFlags) {
    const builder = new ProgramBuilder(flags);
    const start = builder.emit(node, builder.push(MATCH, 0, 0));
    const size = builder.ops.length;
    this.ops = Uint8Array.from(builder.ops);
    this.args = Int32Array.from(builder.args);
    this.nexts = Int32Array.from(builder.nexts);
    this.sets = builder.sets;
    this.start = start;
    this.marks = new Uint32Array(size);
    this.stack = new Int32Array(size * 2 + 2);
    this.closure = new Int32Array(size + 1);
    this.threadPcs = [new Int32Array(size + 1), new Int32Array(size + 1)];
    this.threadStarts = [new Int32Array(size + 1), new Int32Array(size + 1)];
  }

  /** Runs `work` with `meter` charged for the steps it takes (calls are synchronous, so never interleave). */
  metered<T>(meter: StepMeter | undefined, work: () => T): T {
    const outer = this.meter;
    this.meter = meter;
    this.steps = 0;
    try {
      return work();
    } finally {
      this.meter = outer;
    }
  }

  private charge(): void {
    if (this.meter && this.steps > 0) this.meter.spend(this.steps);
    this.steps = 0;
  }

  /** True when the pattern matches somewhere in `text` at or after `from`. */
  matchesFrom(text: string, from = 0): boolean {
    let state = this.initialState(classAt(text, from - 1));
    const length = text.length;
    let table = this.table;
    for (let index = from; index < length; index++) {
      const code = text.charCodeAt(index);
      let next = code < 128 ? table[(state << 7) | code] : (this.states[state].other?.get(code) ?? UNKNOWN);
      if (next === UNKNOWN) {
        next = this.transition(state, code);
        table = this.table;
        this.charge();
      }
      if (next === MATCHED) return true;
      state = next;
    }
    return this.matchesAtEnd(state);
  }

  /**
   * The span JavaScript would match first at or after `from`, as [start, end], or undefined.
   * Threads are kept in priority order; a thread that completes a match drops the ones below it,
   * and no new start is tried once a match is found, which is how backtracking would choose.
   */
  firstMatch(text: string, from = 0): [number, number] | undefined {
    const length = text.length;
    let current = 0;
    let count = 0;
    let matchStart = -1;
    let matchEnd = -1;
    for (let index = from; ; index++) {
      const before = classAt(text, index - 1);
      const after = classAt(text, index);
      const generation = this.nextGeneration();
      const pcs = this.threadPcs[current];
      const starts = this.threadStarts[current];
      // Threads carried over from the previous position were added under the previous generation:
      // mark their instructions for this one, so a new start never duplicates them.
      for (let i = 0; i < count; i++) this.marks[pcs[i]] = generation;
      if (matchStart < 0) count = this.addThread(pcs, starts, count, this.start, index, before, after, generation);
      const nextPcs = this.threadPcs[1 - current];
      const nextStarts = this.threadStarts[1 - current];
      let nextCount = 0;
      const code = index < length ? text.charCodeAt(index) : -1;
      const nextGeneration = this.nextGeneration();
      const afterNext = classAt(text, index + 1);
      const beforeNext = code < 0 ? NONE : classOf(code);
      for (let i = 0; i < count; i++) {
        const pc = pcs[i];
        const op = this.ops[pc];
        if (op === MATCH) {
          matchStart = starts[i];
          matchEnd = index;
          break; // lower-priority threads lose to this match
        }
        if (code >= 0 && this.sets[this.args[pc]].has(code)) {
          nextCount = this.addThread(nextPcs, nextStarts, nextCount, this.nexts[pc], starts[i], beforeNext, afterNext, nextGeneration);
        }
      }
      current = 1 - current;
      count = nextCount;
      this.steps += count;
      this.charge();
      if (index >= length) break;
      if (count === 0 && matchStart >= 0) break;
    }
    return matchStart < 0 ? undefined : [matchStart, matchEnd];
  }

  // ---- Pike VM

  private nextGeneration(): number {
    if (this.generation >= 0xfffffff0) {
      this.marks.fill(0);
      this.generation = 0;
    }
    return ++this.generation;
  }

  /** Adds `pc` and what it reaches without reading, in priority order; SET and MATCH instructions become threads. */
  private addThread(pcs: Int32Array, starts: Int32Array, count: number, pc: number, start: number, before: number, after: number, generation: number): number {
    const stack = this.stack;
    let top = 0;
    stack[top++] = pc;
    while (top > 0) {
      const at = stack[--top];
      if (this.marks[at] === generation) continue;
      this.marks[at] = generation;
      this.steps++;
      const op = this.ops[at];
      if (op === SET || op === MATCH) {
        pcs[count] = at;
        starts[count++] = start;
      } else if (op === SPLIT) {
        stack[top++] = this.nexts[at]; // the less preferred branch, taken after the preferred one
        stack[top++] = this.args[at];
      } else if (holds(this.args[at], before, after)) stack[top++] = this.nexts[at];
    }
    return count;
  }

  // ---- lazy DFA

  private initialState(before: number): number {
    const known = this.initialStates[before];
    if (known !== UNKNOWN && this.states[known]) return known;
    const id = this.intern(new Int32Array(0), before);
    this.initialStates[before] = id;
    return id;
  }

  private intern(targets: Int32Array, before: number): number {
    const key = `${before}:${targets.join(',')}`;
    const known = this.stateIds.get(key);
    if (known !== undefined) return known;
    if (this.states.length >= maxDfaStates) {
      // Start over rather than grow without bound: a text that needs more states is still matched, more slowly.
      this.steps += this.states.length;
      this.states = [];
      this.stateIds = new Map();
      this.initialStates.fill(UNKNOWN);
      this.table.fill(UNKNOWN);
    }
    const id = this.states.push({ targets, before, other: undefined, atEnd: UNKNOWN }) - 1;
    if ((id + 1) * 128 > this.table.length) {
      const grown = new Int32Array(this.table.length * 2).fill(UNKNOWN);
      grown.set(this.table);
      this.table = grown;
    }
    this.stateIds.set(key, id);
    return id;
  }

  /**
   * The instructions reachable from a state's targets and from a new start (the search is unanchored)
   * without reading input, given the context on either side; -1 in the result's first slot means a
   * match completes there. Returns how many SET instructions it wrote to `closure`.
   */
  private close(state: DfaState, after: number): number {
    const generation = this.nextGeneration();
    const { stack, closure } = this;
    let found = 0;
    let top = 0;
    stack[top++] = this.start;
    for (let i = state.targets.length - 1; i >= 0; i--) stack[top++] = state.targets[i];
    while (top > 0) {
      const at = stack[--top];
      if (this.marks[at] === generation) continue;
      this.marks[at] = generation;
      this.steps++;
      const op = this.ops[at];
      if (op === MATCH) return -1;
      if (op === SET) closure[found++] = at;
      else if (op === SPLIT) {
        stack[top++] = this.nexts[at];
        stack[top++] = this.args[at];
      } else if (holds(this.args[at], state.before, after)) stack[top++] = this.nexts[at];
    }
    return found;
  }

  private transition(id: number, code: number): number {
    const state = this.states[id];
    const found = this.close(state, classOf(code));
    let next: number;
    if (found < 0) next = MATCHED;
    else {
      const generation = this.nextGeneration();
      const targets: number[] = [];
      for (let i = 0; i < found; i++) {
        const pc = this.closure[i];
        if (!this.sets[this.args[pc]].has(code)) continue;
        const target = this.nexts[pc];
        if (this.marks[target] === generation) continue;
        this.marks[target] = generation;
        targets.push(target);
      }
      this.steps += found;
      targets.sort((a, b) => a - b);
      next = this.intern(Int32Array.from(targets), classOf(code));
    }
    // The cache may have started over while interning: only record the edge if the state survived.
    if (this.states[id] === state) {
      if (code < 128) this.table[(id << 7) | code] = next;
      else (state.other ??= new Map()).set(code, next);
    }
    return next;
  }

  private matchesAtEnd(id: number): boolean {
    const state = this.states[id];
    if (state.atEnd === UNKNOWN) {
      state.atEnd = this.close(state, NONE) < 0 ? 1 : 0;
      this.charge();
    }
    return state.atEnd === 1;
  }
}

/** Builds the program back to front, so every instruction knows its successor when it is written. */
class ProgramBuilder {
  readonly ops: number[] = [];
  readonly args: number[] = [];
  readonly nexts: number[] = [];
  readonly sets: CompiledSet[] = [];

  constructor(private readonly flags: RegexFlags) {}

  push(op: number, arg: number, next: number): number {
    if (this.ops.length >= maxProgramSize)
      throw new RegexSyntaxError(`is too large once its counted repetitions are expanded (at most ${maxProgramSize} steps)`);
    this.ops.push(op);
    this.args.push(arg);
    this.nexts.push(next);
    return this.ops.length - 1;
  }

  emit(node: Node, next: number): number {
    switch (node.kind) {
      case 'empty':
        return next;
      case 'set':
        this.sets.push(new CompiledSet(node.set, this.flags.ignoreCase));
        return this.push(SET, this.sets.length - 1, next);
      case 'assert':
        return this.push(ASSERT, assertionCodes[node.at], next);
      case 'concat': {
        let entry = next;
        for (let i = node.items.length - 1; i >= 0; i--) entry = this.emit(node.items[i], entry);
        return entry;
      }
      case 'alternation': {
        const entries = node.options.map((option) => this.emit(option, next));
        let entry = entries[entries.length - 1];
        for (let i = entries.length - 2; i >= 0; i--) entry = this.push(SPLIT, entries[i], entry);
        return entry;
      }
      case 'repeat': {
        let entry = next;
        if (node.max === Infinity) {
          const loop = this.push(SPLIT, -1, -1);
          const body = this.emit(node.item, loop);
          this.args[loop] = node.greedy ? body : next;
          this.nexts[loop] = node.greedy ? next : body;
          entry = loop;
        } else {
          for (let i = node.min; i < node.max; i++) {
            const body = this.emit(node.item, entry);
            entry = node.greedy ? this.push(SPLIT, body, next) : this.push(SPLIT, next, body);
          }
        }
        for (let i = 0; i < node.min; i++) entry = this.emit(node.item, entry);
        return entry;
      }
    }
  }
}
