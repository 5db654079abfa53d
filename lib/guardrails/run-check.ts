import { isPlainObject } from '../core/plain-object';
import type { CheckDefinition, CheckInput, CheckOutcome, CheckResult } from './check-types';
import { TextTooLongError } from './limits';

/**
 * Runs one check under the gateway's failure policy (DESIGN §5): a check that throws — bad
 * parameters, an unreachable endpoint, a text too long to scan — fails only when its `failOnError`
 * parameter is true; otherwise it passes, and `error` says what went wrong.
 */

interface Parsed {
  definition: CheckDefinition<unknown>;
  parsed: unknown;
}

// Parsed parameters (compiled patterns, loaded schemas) per parameters object: a config parsed once
// and kept by the runner never compiles a pattern twice. Weak, so configs that go away take theirs along.
const parsedByParameters = new WeakMap<object, Parsed>();

function parsedParameters<P>(definition: CheckDefinition<P>, parameters: unknown): P {
  if (!isPlainObject(parameters)) return definition.parse(parameters);
  const cached = parsedByParameters.get(parameters);
  if (cached && cached.definition === definition) return cached.parsed as P;
  const parsed = definition.parse(parameters);
  parsedByParameters.set(parameters, { definition: definition as CheckDefinition<unknown>, parsed });
  return parsed;
}

/** Read leniently: when the parameters fail to parse, the policy must still be known. */
function flag(parameters: unknown, name: string, fallback: boolean): boolean {
  const value = isPlainObject(parameters) ? parameters[name] : undefined;
  return typeof value === 'boolean' ? value : fallback;
}

const elapsed = (start: number) => Math.round((performance.now() - start) * 1000) / 1000;

/**
 * Runs one check; synchronous checks (most of the catalogue) answer at once, without a promise, so
 * a hook of cheap checks costs no microtask turns.
 */
export function runCheck<P>(definition: CheckDefinition<P>, parameters: unknown, input: CheckInput): CheckResult | Promise<CheckResult> {
  const start = performance.now();
  let outcome: CheckOutcome | Promise<CheckOutcome>;
  try {
    outcome = definition.run(parsedParameters(definition, parameters), input);
  } catch (error) {
    return failed(definition, parameters, error, start);
  }
  if (outcome instanceof Promise) {
    return outcome.then(
      (done) => judged(definition, parameters, input, done, start),
      (error: unknown) => failed(definition, parameters, error, start),
    );
  }
  return judged(definition, parameters, input, outcome, start);
}

function judged<P>(definition: CheckDefinition<P>, parameters: unknown, input: CheckInput, outcome: CheckOutcome, start: number): CheckResult {
  const verdict = definition.invertible && flag(parameters, 'not', false) ? !outcome.verdict : outcome.verdict;
  const result: CheckResult = { verdict, data: outcome.data, execution_time: elapsed(start), transformed: false };
  if (outcome.transformedText !== undefined && outcome.transformedText !== input.text) {
    result.transformed = true;
    result.transformedText = outcome.transformedText;
  }
  if (outcome.transformedBody !== undefined) {
    result.transformed = true;
    result.transformedBody = outcome.transformedBody;
  }
  return result;
}

function failed<P>(definition: CheckDefinition<P>, parameters: unknown, error: unknown, start: number): CheckResult {
  const failOnError = flag(parameters, 'failOnError', definition.failOnErrorByDefault ?? false);
  const message = error instanceof Error ? error.message : String(error);
  const result: CheckResult = {
    verdict: !failOnError,
    error: message,
    data: { explanation: `The check could not run: ${message}`, failOnError },
    execution_time: elapsed(start),
    transformed: false,
  };
  if (error instanceof TextTooLongError) result.textUnread = true;
  return result;
}
