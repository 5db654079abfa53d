/**
 * The query language of conditional routing: Mongo-style queries over `metadata.<key>`,
 * `params.<path>` (any depth into the request body) and `url.pathname`, with `$eq $ne $gt $gte $lt
 * $lte $in $nin $regex $exists $and $or` and an implicit AND between keys.
 *
 * Queries are checked when their config is validated (`config/schema-rules.ts`, over the operators
 * and fields of `config/condition-query.ts`), so matching never meets a shape it cannot handle; `$regex` patterns run on the linear-time engine in `lib/core/regex`.
 */
import { compileSafeRegex, type SafeRegex } from '../core/regex/safe-regex';

export interface QueryInput {
  metadata: Record<string, unknown>;
  params: Record<string, unknown>;
  url: { pathname: string };
}

export function matchesQuery(query: Record<string, unknown>, input: QueryInput): boolean {
  for (const key of Object.keys(query)) {
    const condition = query[key];
    if (key === '$and') {
      if (!(condition as Record<string, unknown>[]).every((part) => matchesQuery(part, input))) return false;
    } else if (key === '$or') {
      if (!(condition as Record<string, unknown>[]).some((part) => matchesQuery(part, input))) return false;
    } else if (!matchesField(valueAt(input, key), condition)) {
      return false;
    }
  }
  return true;
}

function valueAt(input: QueryInput, path: string): unknown {
  let value: unknown = input;
  for (const part of path.split('.')) {
    // Own properties only: `params.constructor` is a body field, not Object's constructor.
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

function isOperatorObject(condition: unknown): condition is Record<string, unknown> {
  if (condition === null || typeof condition !== 'object' || Array.isArray(condition)) return false;
  const keys = Object.keys(condition);
  return keys.length > 0 && keys.every((key) => key.startsWith('$'));
}

function matchesField(value: unknown, condition: unknown): boolean {
  if (!isOperatorObject(condition)) return equals(value, condition);
  for (const [operator, operand] of Object.entries(condition)) {
    if (!applyOperator(operator, value, operand)) return false;
  }
  return true;
}

function applyOperator(operator: string, value: unknown, operand: unknown): boolean {
  switch (operator) {
    case '$eq':
      return equals(value, operand);
    case '$ne':
      return !equals(value, operand);
    case '$gt':
      return compare(value, operand, (a, b) => a > b);
    case '$gte':
      return compare(value, operand, (a, b) => a >= b);
    case '$lt':
      return compare(value, operand, (a, b) => a < b);
    case '$lte':
      return compare(value, operand, (a, b) => a <= b);
    case '$in':
      return Array.isArray(operand) && operand.some((item) => equals(value, item));
    case '$nin':
      return Array.isArray(operand) && !operand.some((item) => equals(value, item));
    case '$regex':
      return typeof value === 'string' && typeof operand === 'string' && safeRegex(operand)?.test(value) === true;
    case '$exists':
      return (value !== undefined) === Boolean(operand);
    default:
      return false;
  }
}

function equals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  // Metadata arrives as strings from a header; let "5" equal 5 the way people write such rules.
  if ((typeof a === 'number' && typeof b === 'string') || (typeof a === 'string' && typeof b === 'number')) return String(a) === String(b);
  if (Array.isArray(a)) return a.some((item) => equals(item, b));
  return false;
}

const isComparable = (value: unknown): value is number | string => typeof value === 'number' || typeof value === 'string';

function compare(value: unknown, operand: unknown, test: (a: number | string, b: number | string) => boolean): boolean {
  // Only numbers and strings order; converting anything else could run a client's `toString`.
  if (!isComparable(value) || !isComparable(operand)) return false;
  if (typeof value === 'number' || typeof operand === 'number') {
    const a = Number(value);
    const b = Number(operand);
    return !Number.isNaN(a) && !Number.isNaN(b) && test(a, b);
  }
  return typeof value === 'string' && typeof operand === 'string' && test(value, operand);
}

const regexCache = new Map<string, SafeRegex | undefined>();

/** A pattern that does not compile (possible only in a config saved before patterns were checked) never matches. */
function safeRegex(pattern: string): SafeRegex | undefined {
  if (!regexCache.has(pattern)) {
    let regex: SafeRegex | undefined;
    try {
      regex = compileSafeRegex(pattern);
    } catch {
      regex = undefined;
    }
    if (regexCache.size > 1000) regexCache.clear();
    regexCache.set(pattern, regex);
  }
  return regexCache.get(pattern);
}
