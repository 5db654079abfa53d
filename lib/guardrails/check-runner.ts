import type { RunCheck } from './run-hooks';
import { findCheck } from './registry';
import { runCheck } from './run-check';

/**
 * Runs a configured check by its id. Configs and saved guardrails are validated when they are
 * parsed or saved, so an unknown id here comes from something stored before its check was
 * renamed or removed: it fails rather than pass unchecked, and says why.
 */
export const runConfiguredCheck: RunCheck = async (check, input) => {
  const definition = findCheck(check.id);
  if (!definition) return { id: check.id, verdict: false, data: null, error: `No built-in check "${check.id}".`, execution_time: 0, transformed: false };
  const result = await runCheck(definition, check.parameters, input);
  return { id: check.id, ...result, data: result.data ?? null };
};
