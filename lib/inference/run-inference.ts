import type { AnswerShaping } from '../cache/cache-key';
import type { TokenUsage } from '../core/usage';
import type { HookResults } from '../guardrails/run-hooks';
import { drain, type DeferredWork } from '../core/deferred-work';
import { newId } from '../core/ids';
import { RequestRecorder } from '../observability/request-recorder';
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

/**
 * Where a request runs. A route brings the recorder its pipeline finishes and the invocation's
 * `waitUntil`; a worker brings neither: the context makes a recorder, keeps the deferred work, and
 * `finish` ends both.
 */
export interface InferenceEnvironment {
  recorder?: RequestRecorder;
  /** Work (state writes) that must finish before the invocation ends but must not delay the answer. */
  waitUntil?(work: Promise<unknown>): void;
}

/** How a request that did not come over HTTP ended, for its log record (the rest comes from the request). */
export interface InferenceEnd {
  status: number;
  /** The id the caller knows the work by (a batch line's `custom_id`); the log record's id otherwise. */
  requestId?: string;
  traceId?: string;
}

/** One request on its way through the request steps; each step adds what it learns. */
export interface InferenceContext {
  readonly request: InferenceRequest;
  readonly recorder: RequestRecorder;
  /** Work (state writes) that must finish before the invocation ends but must not delay the answer. */
  waitUntil(work: Promise<unknown>): void;
  /**
   * Ends a request that did not come over HTTP, once its answer's body has been read: writes its
   * log record, starts the writes that need it (budget and token settling), and resolves when every
   * piece of deferred work has finished. The one call a worker makes after `runInference`.
   */
  finish(end: InferenceEnd): Promise<void>;
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

export function inferenceContext(request: InferenceRequest, environment: InferenceEnvironment = {}): InferenceContext {
  const recorder = environment.recorder ?? new RequestRecorder(newId('log'));
  recorder.requestedBy(request.caller, request.metadata);
  if (request.kind === 'unified') recorder.requested({ stream: request.stream, model: request.body.model });
  const deferred: DeferredWork = [];
  const handOver = environment.waitUntil;
  return {
    request,
    recorder,
    waitUntil: handOver ? (work) => handOver(work) : (work) => void deferred.push(work),
    cacheStatus: 'DISABLED',
    async finish(end) {
      const method = request.kind === 'passthrough' ? request.method : 'POST';
      recorder.finish({ method, path: request.path, status: end.status, requestId: end.requestId ?? recorder.id, traceId: end.traceId ?? recorder.id });
      await recorder.written;
      await drain(deferred);
    },
  };
}

/**
 * Runs one inference request through the request steps: the transport-free core that live routes
 * (and later batch workers and prompt runs) call. Request errors (a bad config, an unknown
 * provider) reject; a provider's failure is an answer, in the result.
 */
export function runInference(context: InferenceContext): Promise<InferenceResult> {
  return runSteps(requestSteps, context);
}
