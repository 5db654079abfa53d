import type { CheckResult } from './check-types';
import type { CheckRun, RunCheck } from './run-hooks';
import { findCheck } from './registry';
import { runCheck } from './run-check';

/**
 * Runs a configured check by its id. Configs and saved guardrails are validated when they are
 * parsed or saved, so an unknown id here comes from something stored before its check was
 * renamed or removed: it fails rather than pass unchecked, and says why.
 */
export const runConfiguredCheck: RunCheck = (check, input) => {
  const definition = findCheck(check.id);
  if (!definition) return { id: check.id, verdict: false, data: null, error: `No built-in check "${check.id}".`, execution_time: 0, transformed: false };
  const result = runCheck(definition, check.parameters, input);
  return result instanceof Promise ? result.then((done) => reportOf(check.id, done)) : reportOf(check.id, result);
};

/** The check's result as `hook_results` shows it, its rewrite (if any) kept beside for the runner. */
function reportOf(id: string, result: CheckResult): CheckRun {
  const report: CheckRun = { id, verdict: result.verdict, data: result.data ?? null, execution_time: result.execution_time, transformed: result.transformed };
  if (result.error !== undefined) report.error = result.error;
  if (result.textUnread) report.textUnread = true;
  if (result.transformedText !== undefined) report.transformedText = result.transformedText;
  if (result.transformedBody !== undefined) report.transformedBody = result.transformedBody;
  return report;
}
