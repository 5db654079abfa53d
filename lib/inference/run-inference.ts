import type { AnswerShaping } from '../cache/cache-key';
import type { TokenUsage } from '../core/usage';
import type { HookResults } from '../guardrails/run-hooks';
import type { RequestRecorder } from '../observability/request-recorder';
import type { JsonObject, ResolvedTarget } from '../providers/types';
import type { RoutingResult } from '../routing/engine';
import type { PlanNode } from '../routing/plan';
import type { InferenceRequest } from './inference-request';
import type { AttemptOutcome } from '../routing/attempt-outcome';
import type { AttemptTimeout } from './provider-body';
import type { RequestPlan } from './request-config';
import { runSteps, type Step } from './steps';
import { requestBudgetStep } from './steps/budgets';
import { requestHooksStep } from './steps/hooks';
import { requestRateLimitStep } from './steps/rate-limits';
import { resolveConfig } from './steps/resolve-config';
import { routeStrategy } from './steps/route-strategy';

/**
 * `x-gateway-cache-status` of an answer: `DISABLED` without a cache setting; `MISS`/`HIT` for the
 * exact cache; `REFRESH` when the client forced a provider call; the `SEMANTIC` pair for lookups by
 * meaning.
 */
export type CacheStatus = 'DISABLED' | 'MISS' | 'HIT' | 'REFRESH' | 'SEMANTIC HIT' | 'SEMANTIC MISS';

/** What a request came to: the answer (streamed or whole), which target gave it, and how. */
export interface InferenceResult extends RoutingResult {
  cacheStatus: CacheStatus;
  /** Tokens of a whole answer (a stream's arrive at the recorder as it ends). */
  usage?: TokenUsage;
}

/** Where a request runs: the recorder of its log line, and work to finish after the answer. */
export interface InferenceEnvironment {
  recorder: RequestRecorder;
  /** Work (state writes) that must finish before the invocation ends but must not delay the answer. */
  waitUntil(work: Promise<unknown>): void;
}

/** One request on its way through the request steps; each step adds what it learns. */
export interface InferenceContext extends InferenceEnvironment {
  readonly request: InferenceRequest;
  cacheStatus: CacheStatus;
  usage?: TokenUsage;
  /** Set by the `config` step. */
  plan?: RequestPlan;
  /** Set by the `config` step: a target's provider, host and credentials, resolved once per request. */
  targetOf?: (leaf: PlanNode) => Promise<ResolvedTarget>;
  /** Set by the `hooks` steps once a hook ran: what the answer's `hook_results` shows. */
  hookResults?: HookResults;
  /** The body after the request's own input mutators, when one rewrote it. */
  inputBody?: JsonObject;
  /** An input hook failed without denying: the answer goes out as 246. */
  inputFlagged?: boolean;
}

/** One attempt at one target, on its way through the target steps. */
export interface TargetAttempt {
  readonly inference: InferenceContext;
  readonly leaf: PlanNode;
  /** Set by the `target` step. */
  target?: ResolvedTarget;
  /** Set by the `timeout` step. */
  timeout?: AttemptTimeout;
  /** The body this target's provider gets (see `attemptBody`). */
  body?: JsonObject;
  /** What else shapes the provider's answer (see `attemptShaping`). */
  shaping?: AnswerShaping;
  /**
   * Set by the `hooks` step when output hooks judge the answer: true once they passed. The cache
   * keeps only an answer they passed (a flagged or withheld one never).
   */
  answerChecked?: Promise<boolean>;
}

export type RequestStep = Step<InferenceContext, InferenceResult>;
export type TargetStep = Step<TargetAttempt, AttemptOutcome>;

/**
 * What every request goes through, in order. Steps that need the whole request (rate limits,
 * guardrails, accounting) join this list; steps per target attempt join `targetSteps`.
 */
export const requestSteps: readonly RequestStep[] = [resolveConfig, requestRateLimitStep, requestBudgetStep, requestHooksStep, routeStrategy];

export function inferenceContext(request: InferenceRequest, environment: InferenceEnvironment): InferenceContext {
  return { request, recorder: environment.recorder, waitUntil: environment.waitUntil, cacheStatus: 'DISABLED' };
}

/**
 * Runs one inference request through the request steps: the transport-free core that live routes
 * (and later batch workers and prompt runs) call. Request errors (a bad config, an unknown
 * provider) reject; a provider's failure is an answer, in the result.
 */
export function runInference(context: InferenceContext): Promise<InferenceResult> {
  return runSteps(requestSteps, context);
}
