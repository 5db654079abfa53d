/*
 * What a request is while it runs: the context the request steps share, one target attempt's
 * context, and what the core answers. Each step's output is a typed field here, so what a step
 * reads from another is declared, not kept in side tables. Types only: the steps and the core both
 * import them, and nothing here imports a step.
 */
import type { BudgetState } from '../budgets/enforce';
import type { AnswerShaping } from '../cache/cache-key';
import type { TokenUsage } from '../core/usage';
import type { HookResults } from '../guardrails/run-hooks';
import type { RequestRecorder } from '../observability/request-recorder';
import type { JsonObject, ResolvedTarget } from '../providers/types';
import type { RateLimitState } from '../ratelimit/enforce';
import type { AttemptOutcome } from '../routing/attempt-outcome';
import type { RoutingResult } from '../routing/engine';
import type { PlanNode } from '../routing/plan';
import type { InferenceRequest } from './inference-request';
import type { AttemptTimeout } from './provider-body';
import type { RequestPlan } from './request-config';
import type { Step } from './steps';
import type { InferenceStores } from './stores';
import type { RequestLogRecord } from '../observability/request-log';

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
  /** Where the answer came from (its provider, base URL and credentials), when a target was reached. */
  target?: ResolvedTarget;
}

/**
 * Where a request runs. A route brings the recorder its pipeline finishes and the invocation's
 * `waitUntil`; a worker brings neither: the context makes a recorder, keeps the deferred work, and
 * `finish` ends both. The stores are the deployment's unless some are given (a test's memory).
 */
export interface InferenceEnvironment {
  recorder?: RequestRecorder;
  /** Work (state writes) that must finish before the invocation ends but must not delay the answer. */
  waitUntil?(work: Promise<unknown>): void;
  stores?: Partial<InferenceStores>;
  /** Where the log record of a request goes when the context makes its recorder (the process log by default). */
  logSink?(record: RequestLogRecord): void;
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
  readonly stores: InferenceStores;
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
  /** Set by the `rate-limits` step: the policies that apply, what was reserved, and the headers' numbers. */
  rateLimits?: RateLimitState;
  /** Set by the `budgets` step: the budgets that apply and what was reserved on them. */
  budgets?: BudgetState;
  /** Set by the `cache` step: embeddings asked for, by text, so a retry or a fallback embeds nothing twice. */
  cacheEmbeddings?: Map<string, Promise<number[] | undefined>>;
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
