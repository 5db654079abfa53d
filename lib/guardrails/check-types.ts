import { jsonPath, type PathKey } from '../core/json-path';
import type { Operation } from '../providers/types';

/**
 * The contract between the hook runner and the built-in checks. A check is pure apart from the
 * network checks (webhook, log, jwt, validUrls), which go out only through the guarded outbound client.
 */

export type CheckSide = 'request' | 'response';
/** Every unified operation: a check reads the request and the answer in that operation's format. */
export type CheckOperation = Operation;

export interface CheckInput {
  side: CheckSide;
  /**
   * The text checked, which the runner extracts: the last user message's text (request side) or the
   * first choice's content (response side); for Responses, the last user message of `input` and the
   * text of the answer's messages (what `output_text` holds).
   */
  text: string;
  operation: CheckOperation;
  /** The request body as the provider will get it, in the operation's OpenAI format (a Responses request for `responses`). */
  request: Record<string, unknown>;
  /** The answer in the operation's OpenAI format (a response object for `responses`), response side only. */
  response?: Record<string, unknown>;
  /** `x-gateway-metadata` of the request. */
  metadata: Record<string, unknown>;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** Aborted when the request is abandoned. */
  signal?: AbortSignal;
}

export interface CheckOutcome {
  verdict: boolean;
  /** What the check found (matches, counts, explanation) — shown to users in hook_results[].checks[].data. */
  data?: unknown;
  /** For mutators: the new text that replaces `text` in what passes on (the runner writes it back). */
  transformedText?: string;
  /**
   * A whole new request body (request side) or answer (response side), OpenAI format. Only the
   * webhook check sets it, when the webhook answers with `transformedData.request.json` or
   * `transformedData.response.json`; the runner replaces the body with it.
   */
  transformedBody?: Record<string, unknown>;
}

export interface CheckDefinition<P> {
  /** Canonical id, e.g. `default.regexMatch`. */
  id: string;
  /** Other spellings configs use for the same check (matched case-insensitively, like the id). */
  aliases?: readonly string[];
  /** Rewrites text (addPrefix, regexReplace, pii with redact, webhook). */
  mutator?: boolean;
  /** Where it makes sense; the runner may warn about, or skip, a check placed elsewhere. */
  sides?: readonly CheckSide[];
  /** Whether the common `not` parameter (invert the verdict) applies. */
  invertible: boolean;
  /** The default of the common `failOnError` parameter (false except where failing open would let a request through unchecked). */
  failOnErrorByDefault?: boolean;
  /** The parameter names the check reads, besides `not` and `failOnError`; any other name is refused. */
  parameters: readonly string[];
  /** Validates; throws CheckParameterError naming the parameter. */
  parse(parameters: unknown): P;
  run(parameters: P, input: CheckInput): Promise<CheckOutcome> | CheckOutcome;
}

/**
 * A parameter a check cannot run with; the message says what to fix. `path` locates it inside the
 * check's parameters, list positions and nested keys included (`['rules', 'metadata', 'tier']`), so
 * the JSON path a 400 reports ends at the value itself rather than at the parameter holding it.
 */
export class CheckParameterError extends Error {
  readonly path: readonly PathKey[];

  constructor(parameter: string | readonly PathKey[], message: string) {
    super(message);
    this.name = 'CheckParameterError';
    this.path = typeof parameter === 'string' ? [parameter] : parameter;
  }

  /** The path as messages write it: `maxWords`, `words[2]`, `headers["x-api-key"]`. */
  get parameter(): string {
    return jsonPath('', this.path);
  }
}

/** A check id that names no built-in check; the message lists the nearest ids. */
export class UnknownCheckError extends Error {
  constructor(
    readonly checkId: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnknownCheckError';
  }
}

/** What `runCheck` reports for one check, as `hook_results[].checks[]` shows it. */
export interface CheckResult {
  verdict: boolean;
  data?: unknown;
  /** Why the check could not judge (it threw); the verdict then follows `failOnError`. */
  error?: string;
  /** The check stopped because the text is longer than checks read: a hook that denies fails on it. */
  textUnread?: boolean;
  /** Milliseconds the check took. */
  execution_time: number;
  /** True when the check rewrote the text or body. */
  transformed: boolean;
  transformedText?: string;
  transformedBody?: Record<string, unknown>;
}
