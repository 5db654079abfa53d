/**
 * The parts of config validation that a per-field zod schema cannot express, and the helpers that turn
 * every violation into an actionable `{ param, message }` issue. Used only by `schema.ts`.
 *
 * Cross-field rules (each checked on the raw input, so they are reported together with zod's issues,
 * and each skipped when the values it compares are themselves malformed, which zod already reports):
 * - top level only: at least one of the spec's property combinations (see `combinations`);
 * - `targets` without `strategy` is an error (no mode would ever route to them);
 * - loadbalance, fallback and conditional need a non-empty `targets` array;
 * - conditional needs `conditions` and `default`; every `then` and `default` names a target of that
 *   strategy by its `name`, and those names are unique among its targets;
 * - loadbalance needs at least one target whose weight is not 0 (a missing weight counts as 1);
 * - every conditional query is one the matcher can run (`routing/conditional-query.ts` holds the
 *   grammar): `$and`/`$or` hold non-empty arrays of queries, keys are `metadata.*`, `params.*` or
 *   `url.pathname`, operators are known and their operands typed, and a `$regex` compiles on the
 *   linear-time engine — so `{"$and": 5}` or a pattern needing backtracking is a 400 at its own path.
 */
import { jsonPath } from '../core/json-path';
import { isPlainObject } from '../core/plain-object';
import { queryFields, queryOperators } from './condition-query';
import { compileSafeRegex, RegexSyntaxError } from '../core/regex/safe-regex';
import type { HookCheck } from '../guardrails/hook-types';
import type { CheckIssue } from '../guardrails/validate-checks';
import type { ConfigIssue } from './types';

export type Path = ReadonlyArray<PropertyKey>;

export const strategyModes = ['single', 'loadbalance', 'fallback', 'conditional'] as const;

/** `['targets', 1, 'retry']` → `config.targets[1].retry`; keys that are not identifiers use `["…"]`. */
export function formatPath(path: Path, root = 'config'): string {
  return jsonPath(root, path);
}

/** The value at `path` in `input`, and whether the last key is present in its parent. */
export function valueAt(input: unknown, path: Path): { present: boolean; value: unknown } {
  let current = input;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return { present: false, value: undefined };
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return { present: current !== undefined, value: current };
}

/** A short, safe rendering of a value for "got …" in messages. */
export function show(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty array' : 'an array';
  switch (typeof value) {
    case 'string': {
      const quoted = JSON.stringify(value.length > 60 ? `${value.slice(0, 57)}...` : value);
      return value.length === 0 ? 'an empty string' : quoted;
    }
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

const normalize = (key: string) => key.toLowerCase().replace(/[-_\s]/g, '');

/** Optimal-string-alignment edit distance (insertions, deletions, substitutions, transpositions). */
function distance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= b.length; j++) {
      if (i === 0) {
        rows[0][j] = j;
        continue;
      }
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, rows[i - 2][j - 2] + 1);
      rows[i][j] = best;
    }
  }
  return rows[a.length][b.length];
}

/** The known key that `key` most likely misspells, if any is close enough. */
export function suggest(key: string, known: readonly string[]): string | undefined {
  const wanted = normalize(key);
  if (wanted.length === 0 || wanted.length > 64) return undefined;
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    // Compare with the whole name and with its longer `_`-separated tails ("timout" → request_timeout).
    const parts = candidate.split('_');
    const forms = parts.map((_, i) => normalize(parts.slice(i).join('_'))).filter((form, i) => i === 0 || form.length >= 5);
    for (const have of forms) {
      let score = distance(wanted, have);
      const limit = Math.max(1, Math.floor(Math.max(wanted.length, have.length) / 3));
      let prefix = 0;
      while (prefix < wanted.length && wanted[prefix] === have[prefix]) prefix++;
      const close = score <= limit || (prefix >= 4 && prefix >= 0.6 * Math.min(wanted.length, have.length)) || (wanted.length >= 5 && have.includes(wanted));
      if (!close) continue;
      if (score === 0 && have === forms[0]) score = -1;
      if (score < bestScore) {
        bestScore = score;
        best = candidate;
      }
    }
  }
  return best;
}

/** Where a config-level property people often try really goes. */
const configHints: Record<string, string> = {
  mode: 'the routing mode goes in "strategy": {"mode": …}',
  model: 'set the model with "override_params": {"model": …}',
  temperature: 'set request parameters in "override_params"',
  max_tokens: 'set request parameters in "override_params"',
  timeout: 'did you mean "request_timeout" (milliseconds)?',
  headers: 'did you mean "forward_headers" (a list of header names)?',
  circuit_breaker: 'did you mean "cb_config"?',
  metadata: 'request metadata goes in the x-gateway-metadata header',
};

/** The message for one property a strict object does not allow. */
export function unknownKeyMessage(key: string, known: readonly string[], isConfig = false): string {
  const base = `unknown property ${JSON.stringify(key)}`;
  if (isConfig && Object.hasOwn(configHints, key)) return `${base}; ${configHints[key]}`;
  const match = suggest(key, known);
  if (match !== undefined) return `${base}; did you mean ${JSON.stringify(match)}?`;
  if (known.length <= 10) return `${base}; allowed here: ${known.join(', ')}`;
  return `${base}; it is not a field of the config object`;
}

/**
 * The spec's "at least one of these combinations" list. Decision: a request's `Authorization` header
 * can supply the key, so `provider` alone satisfies `provider` + `api_key` (the routing layer checks
 * the resolved target's credentials later); the other combinations are as the spec lists them.
 */
const combinations: readonly (readonly string[])[] = [
  ['provider'],
  ['provider', 'custom_host'],
  ['virtual_key'],
  ['strategy', 'targets'],
  ['cache'],
  ['retry'],
  ['prompt_id'],
  ['forward_headers'],
  ['request_timeout'],
  ['provider', 'cloudA_access_key_id', 'cloudA_secret_access_key'],
  ['provider', 'cloudB_region', 'cloudB_service_account_json'],
  ['provider', 'cloudB_region', 'cloudB_project_id'],
  ['provider', 'cloudC_deployment_name', 'cloudC_deployment_type', 'cloudC_region', 'cloudC_api_version'],
  ['provider', 'cloudC_endpoint_name', 'cloudC_deployment_type'],
  ['after_request_hooks'],
  ['before_request_hooks'],
  ['input_guardrails'],
  ['output_guardrails'],
];

const has = (node: Record<string, unknown>, key: string) => Object.hasOwn(node, key) && node[key] !== undefined;

const routingModes = new Set(['loadbalance', 'fallback', 'conditional']);

/**
 * What is wrong with a list of checks, each problem at its path: the built-in checks' own rules
 * (`checkIssues` of guardrails/validate-checks), passed in so that what validates a config
 * without checks never loads every check.
 */
export type CheckRules = (checks: readonly HookCheck[], where: (index: number) => { id: string; parameters: string }) => CheckIssue[];

/** Cross-field issues of a config (see the module doc). `input` is the raw, unvalidated value. */
export function ruleIssues(input: unknown, checkRules: CheckRules): ConfigIssue[] {
  const issues: ConfigIssue[] = [];
  if (!isPlainObject(input)) return issues;
  const strategy = input.strategy;
  const targetsRuleApplies = isPlainObject(strategy) && routingModes.has(strategy.mode as string) && !has(input, 'targets');
  if (!combinations.some((combo) => combo.every((key) => has(input, key))) && !targetsRuleApplies) {
    issues.push({
      param: 'config',
      message:
        'needs at least one of: provider (its key in api_key or in the Authorization header), virtual_key, strategy + targets, cache, retry, prompt_id, forward_headers, request_timeout, before_request_hooks, after_request_hooks, input_guardrails, output_guardrails',
    });
  }
  checkNode(input, [], issues, checkRules);
  return issues;
}

function checkNode(node: Record<string, unknown>, path: PropertyKey[], issues: ConfigIssue[], checkRules: CheckRules): void {
  const at = (...rest: PropertyKey[]) => formatPath([...path, ...rest]);
  const targets = node.targets;
  const strategy = node.strategy;
  if (!has(node, 'strategy') && has(node, 'targets')) {
    issues.push({
      param: at('targets'),
      message: '`targets` needs a `strategy` whose mode (loadbalance, fallback, conditional or single) says how to use them',
    });
  }
  const mode = isPlainObject(strategy) && typeof strategy.mode === 'string' ? strategy.mode : undefined;
  if (mode !== undefined && isPlainObject(strategy) && routingModes.has(mode)) {
    if (targets === undefined) issues.push({ param: at('targets'), message: `a ${mode} strategy needs a non-empty \`targets\` array` });
    else if (Array.isArray(targets) && targets.length === 0)
      issues.push({ param: at('targets'), message: `a ${mode} strategy needs a non-empty \`targets\` array; got an empty array` });
    const items = Array.isArray(targets) ? targets : [];
    if (mode === 'loadbalance' && items.length > 0 && items.every((t) => isPlainObject(t) && t.weight === 0)) {
      issues.push({
        param: at('targets'),
        message: `a loadbalance strategy needs at least one target with weight > 0 (a missing weight counts as 1); all ${items.length} weights are 0`,
      });
    }
    if (mode === 'conditional') checkConditional(strategy, items, path, issues);
  }
  checkHookChecks(node, path, issues, checkRules);
  if (Array.isArray(targets)) {
    targets.forEach((target, index) => {
      if (isPlainObject(target)) checkNode(target, [...path, 'targets', index], issues, checkRules);
    });
  }
}

/** Properties of an inline guardrail that are not checks. */
const guardrailFields = new Set(['id', 'deny', 'async', 'on_fail', 'on_success']);

/**
 * Every check a node's hooks and inline guardrails run must be a built-in check, with parameters
 * it can run with: a config that names an unknown check (a typo) would otherwise pass unchecked.
 */
function checkHookChecks(node: Record<string, unknown>, path: PropertyKey[], issues: ConfigIssue[], checkRules: CheckRules): void {
  const at = (...rest: PropertyKey[]) => formatPath([...path, ...rest]);
  for (const field of ['before_request_hooks', 'after_request_hooks'] as const) {
    const hooks = node[field];
    if (!Array.isArray(hooks)) continue;
    hooks.forEach((hook, index) => {
      if (!isPlainObject(hook) || !Array.isArray(hook.checks)) return;
      // Checks of the wrong shape are the schema's to report; these are the ones that can be judged.
      const judged = hook.checks.flatMap((check, position) =>
        isPlainObject(check) && typeof check.id === 'string' && isPlainObject(check.parameters) ? [{ check: check as unknown as HookCheck, position }] : [],
      );
      issues.push(
        ...checkRules(
          judged.map(({ check }) => check),
          (n) => ({ id: at(field, index, 'checks', judged[n]!.position, 'id'), parameters: at(field, index, 'checks', judged[n]!.position, 'parameters') }),
        ),
      );
    });
  }
  for (const field of ['input_guardrails', 'output_guardrails'] as const) {
    const guardrails = node[field];
    if (!Array.isArray(guardrails)) continue;
    guardrails.forEach((guardrail, index) => {
      if (!isPlainObject(guardrail)) return;
      const checks = Object.entries(guardrail)
        .filter(([id, parameters]) => !guardrailFields.has(id) && isPlainObject(parameters))
        .map(([id, parameters]) => ({ id, parameters: parameters as Record<string, unknown> }));
      issues.push(...checkRules(checks, (n) => ({ id: at(field, index, checks[n]!.id), parameters: at(field, index, checks[n]!.id) })));
    });
  }
}

function checkConditional(strategy: Record<string, unknown>, targets: unknown[], path: PropertyKey[], issues: ConfigIssue[]): void {
  const at = (...rest: PropertyKey[]) => formatPath([...path, ...rest]);
  const names: string[] = [];
  const firstIndex = new Map<string, number>();
  targets.forEach((target, index) => {
    if (!isPlainObject(target) || typeof target.name !== 'string') return;
    const seen = firstIndex.get(target.name);
    if (seen === undefined) {
      firstIndex.set(target.name, index);
      names.push(target.name);
    } else {
      issues.push({
        param: at('targets', index, 'name'),
        message: `duplicates the name of targets[${seen}]; a conditional strategy needs unique target names; got ${show(target.name)}`,
      });
    }
  });
  const choices = names.length > 0 ? `one of the targets: ${names.join(', ')}` : 'a target, but none of the targets has a `name`; add `name` to the targets';
  const checkReference = (value: unknown, param: string) => {
    if (typeof value === 'string' && !firstIndex.has(value)) issues.push({ param, message: `must name ${choices}; got ${show(value)}` });
  };
  if (!has(strategy, 'conditions')) {
    issues.push({
      param: at('strategy', 'conditions'),
      message: 'a conditional strategy needs `conditions`: an array of {"query": {…}, "then": "<target name>"} items',
    });
  } else if (Array.isArray(strategy.conditions)) {
    strategy.conditions.forEach((condition, index) => {
      if (!isPlainObject(condition)) return;
      checkReference(condition.then, at('strategy', 'conditions', index, 'then'));
      if (isPlainObject(condition.query)) queryIssues(condition.query, [...path, 'strategy', 'conditions', index, 'query'], issues);
    });
  }
  if (!has(strategy, 'default')) issues.push({ param: at('strategy', 'default'), message: `conditional strategy needs \`default\` naming ${choices}` });
  else checkReference(strategy.default, at('strategy', 'default'));
}

// ---- conditional queries

const queryExample = '[{"metadata.tier": "pro"}, {"params.model": "gpt-4o"}]';

export function queryIssues(query: Record<string, unknown>, path: Path, issues: ConfigIssue[]): void {
  for (const key of Object.keys(query)) {
    const condition = query[key];
    const at = [...path, key];
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition) || condition.length === 0) {
        issues.push({ param: formatPath(at), message: `must be a non-empty array of queries, e.g. ${queryExample}; got ${show(condition)}` });
        continue;
      }
      condition.forEach((part, index) => {
        if (isPlainObject(part)) queryIssues(part, [...at, index], issues);
        else issues.push({ param: formatPath([...at, index]), message: `must be a query object, e.g. {"metadata.tier": "pro"}; got ${show(part)}` });
      });
    } else if (key.startsWith('$')) {
      issues.push({ param: formatPath(at), message: `is not an operator that can stand here; a query's keys are $and, $or or a field (${queryFields.text})` });
    } else if (!queryFields.pattern.test(key)) {
      issues.push({ param: formatPath(at), message: `is not a field a query can test; use ${queryFields.text}` });
    } else if (isPlainObject(condition) && Object.keys(condition).some((name) => name.startsWith('$'))) {
      operatorIssues(condition, at, issues);
    }
  }
}

function operatorIssues(condition: Record<string, unknown>, path: Path, issues: ConfigIssue[]): void {
  for (const [operator, operand] of Object.entries(condition)) {
    const param = formatPath([...path, operator]);
    if (!(queryOperators as readonly string[]).includes(operator)) {
      const what = operator.startsWith('$') ? 'an unknown operator' : 'a field name mixed in with operators';
      issues.push({ param, message: `is ${what}; use one of ${queryOperators.join(' ')}` });
    } else if ((operator === '$in' || operator === '$nin') && !Array.isArray(operand)) {
      issues.push({ param, message: `must be an array of values; got ${show(operand)}` });
    } else if (operator === '$exists' && typeof operand !== 'boolean') {
      issues.push({ param, message: `must be true or false; got ${show(operand)}` });
    } else if (operator === '$regex') {
      const problem = regexProblem(operand);
      if (problem) issues.push({ param, message: problem });
    }
  }
}

function regexProblem(pattern: unknown): string | undefined {
  if (typeof pattern !== 'string') return `must be a regular expression written as a string; got ${show(pattern)}`;
  try {
    compileSafeRegex(pattern);
    return undefined;
  } catch (error) {
    if (!(error instanceof RegexSyntaxError)) throw error;
    return `must be a regular expression (JavaScript syntax, without back-references or lookaround); this one ${error.message}`;
  }
}
