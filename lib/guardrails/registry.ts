import { type CheckDefinition, CheckParameterError, UnknownCheckError } from './check-types';
import { closestNames } from './closest-names';
import { containsCode } from './checks/code';
import { jsonKeys, jsonSchema } from './checks/json';
import { jwt } from './checks/jwt';
import { addPrefix, regexReplace } from './checks/mutators';
import { log, validUrls, webhook } from './checks/network';
import { pii } from './checks/pii';
import { promptInjection } from './checks/prompt-injection';
import { allowedRequestTypes, modelRules, modelWhitelist, requestParametersCheck, requiredMetadataKeys } from './checks/request';
import { allLowercase, allUppercase, characterCount, contains, endsWith, notNull, regexMatch, sentenceCount, wordCount } from './checks/text';

// The element type is erased on purpose: the runner handles every check alike.
type AnyCheck = CheckDefinition<any>;

/** Every built-in check, in the order docs/guardrails.md lists them. */
export const builtInChecks: readonly AnyCheck[] = [
  regexMatch,
  sentenceCount,
  wordCount,
  characterCount,
  jsonSchema,
  jsonKeys,
  contains,
  validUrls,
  containsCode,
  allUppercase,
  allLowercase,
  endsWith,
  notNull,
  modelWhitelist,
  modelRules,
  requiredMetadataKeys,
  allowedRequestTypes,
  requestParametersCheck,
  jwt,
  log,
  webhook,
  addPrefix,
  regexReplace,
  pii,
  promptInjection,
];

const byId = new Map<string, AnyCheck>();
for (const check of builtInChecks) {
  for (const id of [check.id, ...(check.aliases ?? [])]) byId.set(id.toLowerCase(), check);
}
const knownIds = builtInChecks.map((check) => check.id);

/** The built-in check an id names, in any letter case (`default.regexMatch`, `default.regexmatch`); undefined if none. */
export function findCheck(id: string): AnyCheck | undefined {
  return byId.get(id.toLowerCase());
}

/** The check an id names, or an UnknownCheckError that lists the nearest ids. */
export function requireCheck(id: string): AnyCheck {
  const check = findCheck(id);
  if (check) return check;
  const bare = id.includes('.') ? id : `default.${id}`;
  const exact = findCheck(bare);
  const near = exact ? [exact.id] : closestNames(bare, knownIds, 3);
  throw new UnknownCheckError(
    id,
    `There is no built-in check "${id}".${near.length > 0 ? ` Did you mean ${near.map((item) => `"${item}"`).join(', ')}?` : ''} Built-in checks: ${knownIds.join(', ')}.`,
  );
}

/**
 * Validates a check's parameters when a config or saved guardrail is validated, and returns them
 * parsed (patterns compiled, schemas loaded). Throws UnknownCheckError for an unknown id and
 * CheckParameterError naming the parameter for bad parameters, its message led by the check's id
 * as written (`default.wordCount: \`maxWords\` must be …`): a list of checks may hold the same
 * parameter name in several checks, and a position alone does not say which one to fix.
 */
export function parseCheckParameters(id: string, parameters: unknown): unknown {
  const check = requireCheck(id);
  try {
    return check.parse(parameters);
  } catch (error) {
    if (error instanceof CheckParameterError) throw new CheckParameterError(error.path, `${id}: ${error.message}`);
    throw new CheckParameterError([], `${id}: the parameters cannot be used: ${(error as Error).message}`);
  }
}
