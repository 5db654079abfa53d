import type { AttemptTiming } from './request-spans';
import type { AuthContext } from '../auth/authenticate';
import type { GatewayError } from '../core/errors';
import type { TraceContext } from './trace';
import type { TokenUsage } from '../core/usage';
import type { HookResult, HookResults } from '../guardrails/run-hooks';
import { costOf, priceOf, roundUsd } from '../pricing/prices';
import { emitRequestLog, type LoggedAttempt, type RequestLogRecord } from './request-log';

/** How the exchange ended, known once the answer's body is complete. */
export interface RecordedEnd {
  method: string;
  path: string;
  status: number;
  requestId: string;
  /** The trace id the answer named in `x-gateway-trace-id`. */
  traceId: string;
}

/** Error messages are cut here: a provider's error page must not become a huge log line. */
const maxErrorMessageLength = 2000;

/**
 * The facts of one request, reported by the steps that learn them (the route: stream and model;
 * the target steps: provider, model after overrides, usage; anyone: the error), and written as one
 * log line when the answer is complete. Work that needs the same facts after the answer (budget
 * and token settling) is added with `onFinish`.
 */
export class RequestRecorder {
  private readonly startedAt = performance.now();
  private readonly startedAtTime = Date.now();
  private configId?: string;
  private inference = false;
  private trace?: TraceContext;
  private auth?: AuthContext;
  private provider?: string;
  private model?: string;
  private stream?: boolean;
  private usage?: TokenUsage;
  private cacheStatus?: string;
  private savedUsage?: TokenUsage;
  private cacheEmbeddingUsage?: TokenUsage;
  private embeddingModel?: { provider: string; model: string };
  private error?: { message: string; code: string | null };
  private hookResults?: HookResults;
  private prompt?: { id: string; version: number };
  private rateLimitPolicyId?: string;
  private usageLimitPolicyId?: string;
  /** Work whose results belong in the log line (async hooks) and has not settled yet. */
  private awaited = 0;
  private end?: { fields: RecordedEnd; at: number };
  private finished = false;
  private readonly finishers: ((record: RequestLogRecord) => void)[];
  private readonly attempts: AttemptTiming[] = [];
  private caller?: { organisationId: string; workspaceId: string; keyId?: string };
  private metadata?: Record<string, unknown>;
  private markWritten!: () => void;
  /** Settles once the record is written and every `onFinish` work has been handed what it needs. */
  readonly written = new Promise<void>((resolve) => (this.markWritten = resolve));

  /** `sink` takes the finished record: the process log (and from there, log ingestion) unless given. */
  constructor(
    readonly id: string,
    sink: (record: RequestLogRecord) => void = emitRequestLog,
  ) {
    this.finishers = [sink];
  }

  /** The request's trace headers, once they are read. */
  traced(trace: TraceContext): void {
    this.trace = trace;
  }

  /** The caller's key, once it is known. */
  authenticated(auth: AuthContext): void {
    this.auth = auth;
  }

  /**
   * Whose request it is and its metadata, from the inference request itself: what the record says
   * of the caller, whoever built the request (a route, a prompt run, a worker).
   */
  requestedBy(caller: { organisationId: string; workspaceId: string; keyId?: string }, metadata: Record<string, unknown>, configId?: string): void {
    this.caller = caller;
    this.inference = true;
    this.configId = configId;
    if (Object.keys(metadata).length > 0) this.metadata = metadata;
  }

  /** The request is an inference request (analytics counts it) even if it is refused before it is routed. */
  countedAsInference(): void {
    this.inference = true;
  }

  requested(fields: { stream: boolean; model: unknown }): void {
    this.stream = fields.stream;
    this.model = fields.model as string;
  }

  /** The saved prompt (and its version) a prompt run rendered; the log's metadata names it as `_prompt`. */
  prompted(prompt: { id: string; version: number }): void {
    this.prompt = prompt;
  }

  /** When the request started, in epoch milliseconds (fractional). */
  get startedAtMs(): number {
    return performance.timeOrigin + this.startedAt;
  }

  /** An attempt at a provider ended (with its answer's status, or 0 without one): for its span. */
  attemptEnded(timing: AttemptTiming): void {
    this.attempts.push(timing);
  }

  attemptTimings(): readonly AttemptTiming[] {
    return this.attempts;
  }

  /** The provider an attempt went to; the last attempt's is what the log keeps. */
  attempted(provider: string): void {
    this.provider = provider;
  }

  /** The model an attempt asked for, once the target's `override_params` applied. */
  sentModel(model: unknown): void {
    this.model = model as string;
  }

  usedTokens(usage: TokenUsage): void {
    this.usage = usage;
  }

  /** The answer's cache status. */
  cached(status: string): void {
    this.cacheStatus = status;
  }

  /** A cache hit: the tokens the stored answer cost when it was made, which this request did not spend. */
  servedFromCache(usage: TokenUsage | undefined): void {
    this.usage = undefined;
    this.savedUsage = usage;
  }

  /** Tokens the semantic cache spent embedding the request's last user message: spend, like `usage`. */
  embeddedForCache(usage: TokenUsage | undefined, by: { provider: string; model: string }): void {
    this.cacheEmbeddingUsage = usage;
    this.embeddingModel = by;
  }

  /** The rate-limit policy that refused the request (or one target attempt of it). */
  rateLimited(policyId: string): void {
    this.rateLimitPolicyId = policyId;
  }

  /** The usage-limit policy (budget) that refused the request. */
  budgetExceeded(policyId: string): void {
    this.usageLimitPolicyId = policyId;
  }

  /**
   * What the request spent, in USD: nothing spent costs 0; tokens of a model without a price make
   * the whole cost unknown (null) rather than a partial sum that looks complete.
   */
  private cost(): number | null {
    let total = 0;
    for (const [usage, provider, model] of [
      [this.usage, this.provider, this.model],
      [this.cacheEmbeddingUsage, this.embeddingModel?.provider, this.embeddingModel?.model],
    ] as const) {
      if (!usage) continue;
      const cost = costOf(priceOf(provider, model), usage);
      if (cost === undefined) return null;
      total += cost;
    }
    return roundUsd(total);
  }

  /** Results of hooks on either side: the log keeps every hook that ran, async ones included. */
  hooksRan(side: keyof HookResults, results: readonly HookResult[]): void {
    if (results.length === 0) return;
    this.hookResults ??= { before_request_hooks: [], after_request_hooks: [] };
    this.hookResults[side].push(...results);
  }

  /**
   * Holds the log line until `work` has settled (async hooks finish after the answer): the answer
   * is never delayed, and the line still carries their results. The promise answered settles once
   * the line is written, if it is due; hand it to `waitUntil`.
   */
  waitFor(work: Promise<unknown>): Promise<void> {
    this.awaited++;
    return work.then(
      () => this.settle(),
      () => this.settle(),
    );
  }

  private settle(): void {
    this.awaited--;
    if (this.awaited === 0 && this.end) this.write();
  }

  /** The request failed (or its stream broke) with this error; a later report replaces it. */
  failed(error: Pick<GatewayError, 'message' | 'code'>): void {
    this.error = { message: String(error.message).slice(0, maxErrorMessageLength), code: error.code };
  }

  /** A body that broke while being sent, unless a step already said why. */
  bodyBroke(error: Error): void {
    if (!this.error) this.failed({ message: error.message, code: 'stream_error' });
  }

  /** Runs `work` with the finished record, after the log line (the answer's body is complete). */
  onFinish(work: (record: RequestLogRecord) => void): void {
    this.finishers.push(work);
  }

  /**
   * Builds the record once and hands it to every finisher; later calls do nothing. With work still
   * awaited (`waitFor`), the record is written when it settles, with this moment's latency.
   */
  finish(end: RecordedEnd): void {
    if (this.end) return;
    this.end = { fields: end, at: performance.now() };
    if (this.awaited === 0) this.write();
  }

  private write(): void {
    if (this.finished || !this.end) return;
    this.finished = true;
    const record = this.record(this.end.fields, this.end.at);
    for (const work of this.finishers) work(record);
    this.markWritten();
  }

  private record(end: RecordedEnd, endedAt: number): RequestLogRecord {
    const { trace } = this;
    const caller = this.caller ?? this.auth;
    const metadata = trace?.metadata ?? this.metadata;
    return {
      type: 'gateway.request',
      id: this.id,
      trace_id: end.traceId,
      span_id: trace?.spanId,
      parent_span_id: trace?.parentSpanId,
      span_name: trace?.spanName,
      metadata: this.prompt ? { ...metadata, _prompt: this.prompt.id } : metadata,
      organisation_id: caller?.organisationId,
      workspace_id: caller?.workspaceId,
      api_key_id: caller?.keyId,
      config_id: this.configId,
      inference: this.inference || undefined,
      provider: this.provider,
      model: this.model,
      stream: this.stream,
      usage: this.usage,
      cache_status: this.cacheStatus,
      saved_usage: this.savedUsage,
      cache_embedding_usage: this.cacheEmbeddingUsage,
      cost: this.cost(),
      hook_results: this.hookResults,
      prompt_id: this.prompt?.id,
      prompt_version: this.prompt?.version,
      rate_limit_policy_id: this.rateLimitPolicyId,
      usage_limit_policy_id: this.usageLimitPolicyId,
      error: this.error,
      method: end.method,
      path: end.path,
      status: end.status,
      latency_ms: Math.round((endedAt - this.startedAt) * 1000) / 1000,
      request_id: end.requestId,
      started_at: new Date(this.startedAtTime).toISOString(),
      created_at: new Date().toISOString(),
      jwt_sub: this.auth?.token?.subject,
      jwt_claims: this.auth?.token?.logClaims,
      attempts: this.attempts.length > 0 ? this.attempts.map(loggedAttempt) : undefined,
    };
  }
}

/** An attempt as the record keeps it: when it started, and for how long, rather than two clock readings. */
function loggedAttempt(attempt: AttemptTiming): LoggedAttempt {
  return {
    provider: attempt.provider,
    model: attempt.model,
    status: attempt.status,
    started_at: new Date(attempt.startedAt).toISOString(),
    latency_ms: Math.round((attempt.endedAt - attempt.startedAt) * 1000) / 1000,
  };
}
