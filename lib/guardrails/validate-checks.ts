import { jsonPath } from '../core/json-path';
import type { HookCheck } from './hook-types';
import { parseCheckParameters } from './registry';
import { CheckParameterError, UnknownCheckError } from './check-types';

/** One problem with a check of a config or saved guardrail: where (a JSON path) and what to fix. */
export interface CheckIssue {
  param: string;
  message: string;
}

/**
 * What is wrong with a check list, each problem at its path (`<where>[i].id`, or
 * `<where>[i].parameters.<name>` down to the value at fault, e.g. `….parameters.words[2]`): an id
 * no built-in check has (with the nearest ids), or parameters that check cannot run with, the
 * message naming the check. Empty when every check can run.
 */
export function checkIssues(checks: readonly HookCheck[], where: (index: number) => { id: string; parameters: string }): CheckIssue[] {
  const issues: CheckIssue[] = [];
  checks.forEach((check, index) => {
    const at = where(index);
    try {
      parseCheckParameters(check.id, check.parameters);
    } catch (error) {
      if (error instanceof UnknownCheckError) issues.push({ param: at.id, message: error.message });
      else if (error instanceof CheckParameterError) issues.push({ param: jsonPath(at.parameters, error.path), message: error.message });
      else throw error;
    }
  });
  return issues;
}
