import { dereference, type Schema, validate } from '@cfworker/json-schema';
import { isPlainObject } from '../../core/plain-object';
import { CheckParameterError } from '../check-types';
import { stepLimits, WorkBudget } from '../work-budget';

/**
 * JSON Schemas as the jsonSchema check runs them: bounded when accepted (size, depth, how far its
 * `$ref`s expand, no backtracking patterns) and while validating (a budget of steps per run), and
 * compiled from a private copy, since the validator writes into the schema it is given and a
 * stored config's parameters are frozen. Compiled validators are kept by the schema's text, so a
 * schema shared by many configs (or read again after a cache refresh) is compiled once.
 */

export const schemaLimits = {
  characters: 100_000,
  depth: 64,
  /** Subschemas once every `$ref` is replaced by what it names (a reference back into itself counts once). */
  expandedSubschemas: 10_000,
};

export type Draft = '4' | '7' | '2019-09' | '2020-12';

// Where a JSON Schema holds subschemas: one, a list of them, or a map of names to them.
const singleSchemaKeywords = new Set([
  'additionalItems',
  'unevaluatedItems',
  'items',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
]);
const schemaListKeywords = new Set(['prefixItems', 'items', 'allOf', 'anyOf', 'oneOf']);
const schemaMapKeywords = new Set(['$defs', 'definitions', 'properties', 'patternProperties', 'dependentSchemas', 'dependencies']);

/** Keywords whose values are data, not schemas: a `pattern` key inside them is a value. */
const dataKeywords = new Set(['const', 'enum', 'default', 'examples']);

/** Keywords that read a string instance whole, so their cost grows with the string. */
const stringKeywords = ['minLength', 'maxLength', 'format'];

/**
 * Formats the validator tests with a backtracking pattern that a crafted string of a few dozen
 * characters stalls for seconds; the others it tests in time linear in the string.
 */
const backtrackingFormats = new Set(['url']);

/** The subschemas directly inside a schema object. */
function subschemas(schema: Record<string, unknown>): unknown[] {
  const found: unknown[] = [];
  for (const [key, value] of Object.entries(schema)) {
    if (Array.isArray(value)) {
      if (schemaListKeywords.has(key)) found.push(...value);
    } else if (schemaMapKeywords.has(key) && isPlainObject(value)) found.push(...Object.values(value));
    else if (singleSchemaKeywords.has(key)) found.push(value);
  }
  return found;
}

/**
 * Refuses what no budget can stop once it runs: `pattern` and `patternProperties` run on
 * JavaScript's backtracking engine, where `(a+)+$` takes exponential time on a short string from
 * the model, and so do the formats above. Also refuses nesting past the depth limit.
 */
function refuseUnbounded(schema: unknown, path: string, depth = 0): void {
  if (depth > schemaLimits.depth)
    throw new CheckParameterError('schema', `\`schema\` is nested more than ${schemaLimits.depth} levels deep (the limit is ${schemaLimits.depth}).`);
  if (Array.isArray(schema)) {
    schema.forEach((item, index) => refuseUnbounded(item, `${path}/${index}`, depth + 1));
    return;
  }
  if (!isPlainObject(schema)) return;
  for (const [key, value] of Object.entries(schema)) {
    if (dataKeywords.has(key)) continue;
    if ((key === 'pattern' && typeof value === 'string') || (key === 'patternProperties' && isPlainObject(value))) {
      throw new CheckParameterError(
        'schema',
        `\`schema\` uses \`${key}\` at ${path}/${key}. Regular expressions inside a schema run on a backtracking engine that a crafted pattern can stall, so they are refused: check the text with default.regexMatch instead.`,
      );
    }
    if (key === 'format' && typeof value === 'string' && backtrackingFormats.has(value)) {
      throw new CheckParameterError(
        'schema',
        `\`schema\` uses \`format: "${value}"\` at ${path}/format, which is tested with a backtracking pattern a crafted string can stall; use \`format: "uri"\` instead.`,
      );
    }
    refuseUnbounded(value, `${path}/${key}`, depth + 1);
  }
}

interface Dereferenced {
  __absolute_ref__?: string;
  $recursiveRef?: unknown;
}

/**
 * Refuses a schema whose `$ref`s expand past the limit: `$defs` that each `anyOf` two references to
 * the next double the work per level, so 30 levels of a 3 KB schema meant 2³⁰ subschemas to apply.
 * A reference back to a schema it is inside counts once (that recursion follows the data, and the
 * run's budget bounds it).
 */
function refuseExpansion(root: unknown, lookup: Record<string, unknown>): void {
  const sizes = new Map<object, number>();
  const inside = new Set<object>();
  const size = (schema: unknown): number => {
    if (!isPlainObject(schema)) return 1;
    const known = sizes.get(schema);
    if (known !== undefined) return known;
    if (inside.has(schema)) return 1;
    inside.add(schema);
    let total = 1;
    const target = (schema as Dereferenced).__absolute_ref__;
    if (target !== undefined && lookup[target] !== undefined) total += size(lookup[target]);
    for (const child of subschemas(schema)) {
      total += size(child);
      if (total > schemaLimits.expandedSubschemas) break;
    }
    inside.delete(schema);
    if (total > schemaLimits.expandedSubschemas) {
      throw new CheckParameterError(
        'schema',
        `\`schema\` expands to more than ${schemaLimits.expandedSubschemas.toLocaleString('en-US')} subschemas once its \`$ref\`s are followed (the limit is ${schemaLimits.expandedSubschemas.toLocaleString('en-US')}); reference shared definitions fewer times.`,
      );
    }
    sizes.set(schema, total);
    return total;
  };
  size(root);
}

/** The run in progress: the validator's reads of a schema or a value are charged to it. */
interface Run {
  budget: WorkBudget;
  /** What one visit of a schema that reads strings whole costs, from the longest string in the value. */
  stringVisit: number;
}

let current: Run | undefined;

/**
 * Makes every visit of a schema object cost a step. The validator reads `$recursiveAnchor` from
 * each schema it applies, once per application, so a getter there counts applications exactly.
 */
function meterVisits(schema: unknown, seen = new Set<object>()): boolean {
  if (!isPlainObject(schema) || seen.has(schema)) return false;
  seen.add(schema);
  const readsStrings = stringKeywords.some((keyword) => Object.hasOwn(schema, keyword));
  const anchor = schema.$recursiveAnchor;
  delete schema.$recursiveAnchor;
  Object.defineProperty(schema, '$recursiveAnchor', {
    enumerable: false,
    configurable: true,
    get() {
      current?.budget.spend(readsStrings ? 1 + current.stringVisit : 1);
      return anchor;
    },
  });
  let anyReadsStrings = readsStrings;
  for (const child of subschemas(schema)) anyReadsStrings = meterVisits(child, seen) || anyReadsStrings;
  return anyReadsStrings;
}

/** The value, with every read of an object or array in it charged a step (the comparisons of `uniqueItems`, `enum` and `const` included). */
function metered(value: unknown, budget: WorkBudget): unknown {
  if (value === null || typeof value !== 'object') return value;
  return new Proxy(value, {
    get(target, key, receiver) {
      budget.spend(1);
      return metered(Reflect.get(target, key, receiver), budget);
    },
    ownKeys(target) {
      const keys = Reflect.ownKeys(target);
      budget.spend(keys.length + 1);
      return keys;
    },
    getOwnPropertyDescriptor(target, key) {
      budget.spend(1);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    has(target, key) {
      budget.spend(1);
      return Reflect.has(target, key);
    },
  });
}

/** The longest string in a value, keys included; its reading is charged to the budget too. */
function longestString(value: unknown, budget: WorkBudget): number {
  let longest = 0;
  const stack = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    budget.spend(1);
    if (typeof item === 'string') longest = Math.max(longest, item.length);
    else if (Array.isArray(item)) stack.push(...item);
    else if (isPlainObject(item)) {
      for (const [key, child] of Object.entries(item)) {
        longest = Math.max(longest, key.length);
        stack.push(child);
      }
    }
  }
  return longest;
}

// Reading a string whole costs about a visit per 500 characters.
const charactersPerStep = 500;

export interface ValidationError {
  instanceLocation: string;
  keywordLocation: string;
  error: string;
}

type Lookup = ReturnType<typeof dereference>;

export class BoundedSchema {
  constructor(
    private readonly schema: Schema | boolean,
    private readonly draft: Draft,
    private readonly lookup: Lookup,
    private readonly readsStrings: boolean,
  ) {}

  /**
   * Validates one value, charging `budget`; a CheckBudgetError stops it when the budget runs out.
   * The verdict comes from a pass that stops at the first error; only a value that fails is
   * validated again to list every error, under a small budget of its own (listing costs more than
   * judging, and a failed listing falls back to the first pass's errors).
   */
  validate(value: unknown, budget: WorkBudget): { valid: boolean; errors: ValidationError[] } {
    const stringVisit = this.readsStrings ? Math.ceil(longestString(value, budget) / charactersPerStep) : 0;
    const judged = this.pass(value, budget, stringVisit, true);
    if (judged.valid) return judged;
    try {
      return this.pass(value, new WorkBudget('default.jsonSchema', stepLimits.jsonSchemaReport), stringVisit, false);
    } catch {
      return judged;
    }
  }

  private pass(value: unknown, budget: WorkBudget, stringVisit: number, firstErrorOnly: boolean) {
    const outer = current;
    current = { budget, stringVisit };
    try {
      return validate(metered(value, budget), this.schema, this.draft, this.lookup, firstErrorOnly);
    } finally {
      current = outer;
    }
  }
}

const maxCompiled = 500;
const compiled = new Map<string, BoundedSchema>();

/**
 * The schema compiled, or a CheckParameterError naming the limit it passes or why it cannot be
 * used. The caller's object is never written to, frozen or not.
 */
export function compileSchema(schema: Schema | boolean, draft: Draft): BoundedSchema {
  const text = JSON.stringify(schema);
  if (text.length > schemaLimits.characters)
    throw new CheckParameterError(
      'schema',
      `\`schema\` is ${text.length.toLocaleString('en-US')} characters of JSON; the limit is ${schemaLimits.characters.toLocaleString('en-US')}.`,
    );
  const key = `${draft}\0${text}`;
  const known = compiled.get(key);
  if (known) return known;
  refuseUnbounded(schema, '#');
  const copy = JSON.parse(text) as Schema | boolean;
  let bounded: BoundedSchema;
  try {
    const lookup = dereference(copy as Schema);
    refuseExpansion(copy, lookup);
    bounded = new BoundedSchema(copy, draft, lookup, meterVisits(copy));
    // References are resolved on first use: find one that points nowhere now, not on a request.
    bounded.validate(null, new WorkBudget('default.jsonSchema', stepLimits.jsonSchema));
  } catch (error) {
    if (error instanceof CheckParameterError) throw error;
    throw new CheckParameterError(
      'schema',
      `\`schema\` cannot be used: ${(error as Error).message.split('\n')[0]} Only references inside the schema ("#/$defs/…") are resolved.`,
    );
  }
  if (compiled.size >= maxCompiled) compiled.delete(compiled.keys().next().value!);
  compiled.set(key, bounded);
  return bounded;
}
