/** The built-in guardrail checks: the contract, the catalogue, and the runner's failure policy. */
export { CheckParameterError, UnknownCheckError } from './check-types';
export type { CheckDefinition, CheckInput, CheckOperation, CheckOutcome, CheckResult, CheckSide } from './check-types';
export { builtInChecks, findCheck, parseCheckParameters, requireCheck } from './registry';
export { runCheck } from './run-check';
export { maxScannedText } from './limits';
