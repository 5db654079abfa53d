import { withRawJsonField } from '../core/json-splice';
import { hookResultsJson } from '../guardrails/hook-results-json';
import type { HookResults } from '../guardrails/run-hooks';
import type { TokenUsage } from '../core/usage';

/** The record every request leaves behind, written as one JSON line once the response is complete. */
export interface RequestLogRecord {
  type: 'gateway.request';
  id: string;
  trace_id: string;
  span_id?: string;
  parent_span_id?: string;
  span_name?: string;
  metadata?: Record<string, unknown>;
  organisation_id?: string;
  workspace_id?: string;
  api_key_id?: string;
  /** The saved config (`cfg_…`, without its version) the request named in `x-gateway-config`. */
  config_id?: string;
  /** Set on records of inference requests (chat, completions, embeddings, prompt runs, pass-through, batch lines): what analytics counts. */
  inference?: true;
  provider?: string;
  model?: string;
  method: string;
  path: string;
  status: number;
  stream?: boolean;
  latency_ms: number;
  usage?: TokenUsage;
  /** `x-gateway-cache-status` of the answer. */
  cache_status?: string;
  /** Tokens a cache hit did not spend: kept apart from `usage`, so totals and budgets never count a hit. */
  saved_usage?: TokenUsage;
  /** Tokens the semantic cache spent embedding the last user message (a lookup's cost, spent even on a semantic hit). */
  cache_embedding_usage?: TokenUsage;
  /**
   * USD this request spent: `usage` and `cache_embedding_usage` at the pricing table's prices (a
   * cache hit's `saved_usage` is not spend). Null when a model that spent tokens has no price.
   */
  cost: number | null;
  /** Every hook that ran, with its checks' verdicts and data, and the feedback of its outcome. */
  hook_results?: HookResults;
  /** The saved prompt a prompt run rendered, and which version of it. */
  prompt_id?: string;
  prompt_version?: number;
  /** The rate-limit policy that refused the request with 429. */
  rate_limit_policy_id?: string;
  /** The usage-limit policy (budget) that refused the request with 412. */
  usage_limit_policy_id?: string;
  error?: { message: string; code: string | null };
  request_id: string;
  /** When the request arrived: `latency_ms` runs from here to the answer's last byte. */
  started_at?: string;
  /** When the answer's last byte left (the record is written then). */
  created_at: string;
  /** A request authenticated by a JWT: the token's `sub`, and the claims its identity provider's `log_claims` names. */
  jwt_sub?: string;
  jwt_claims?: Record<string, unknown>;
  /** Each call to a provider, in order (retries and fallbacks add more): the client spans of the request. */
  attempts?: LoggedAttempt[];
}

/** One call to a provider; `status` is 0 when no answer came (a timeout, a broken connection). */
export interface LoggedAttempt {
  provider: string;
  model?: string;
  status: number;
  started_at: string;
  latency_ms: number;
}

/** Filter pattern of the CloudWatch Logs subscription that feeds the log-ingest function. */
export const requestLogType = 'gateway.request';

interface LocalLogSink {
  emitLog(line: string): void;
}

/**
 * Writes the record as one JSON line on stdout, where Lambda hands it to CloudWatch Logs and the
 * subscription delivers it to log ingestion. The local runtime installs a sink that feeds the same
 * ingestion handler instead.
 */
export function emitRequestLog(record: RequestLogRecord): void {
  // Hook results are serialised once for the answer and again here only if the answer did not.
  const line = record.hook_results
    ? withRawJsonField(JSON.stringify({ ...record, hook_results: undefined }), 'hook_results', hookResultsJson(record.hook_results))
    : JSON.stringify(record);
  const sink = (globalThis as { __gatewayLocalLogSink?: LocalLogSink }).__gatewayLocalLogSink;
  if (sink) sink.emitLog(line);
  else process.stdout.write(line + '\n');
}
