import { setImmediate } from 'node:timers/promises';
import type { Feedback, HookCheck } from './hook-types';
import { GatewayError } from '../core/errors';
import type { JsonObject, Operation } from '../providers/types';
import type { CheckInput } from './check-types';
import type { HookSide, HookSpec } from './hook-specs';
import { answerText, requestText, withAnswerText, withRequestText } from './hook-text';

/** What one check said, as `hook_results` shows it. */
export interface CheckReport {
  id: string;
  verdict: boolean;
  data: unknown;
  error?: string;
  /** Milliseconds. */
  execution_time: number;
  transformed?: boolean;
}

/** One hook's result, in the shape Portkey's gateway answers with, so tools written for it read ours. */
export interface HookResult {
  id: string;
  verdict: boolean;
  deny: boolean;
  async: boolean;
  type: 'guardrail' | 'mutator';
  /** Milliseconds. */
  execution_time: number;
  checks: CheckReport[];
  feedback?: Feedback;
  transformed: boolean;
}

/** `hook_results` of an answer: each side's hooks, in the order they ran. */
export interface HookResults {
  before_request_hooks: HookResult[];
  after_request_hooks: HookResult[];
}

/**
 * A check's report, with what `hook_results` does not show: the text or body it rewrote, and
 * whether it stopped short of reading the whole text.
 */
export type CheckRun = CheckReport & { transformedText?: string; transformedBody?: JsonObject; textUnread?: boolean };

/**
 * Runs one check; a check that throws is reported by the runner, never thrown (see the catalogue's
 * `failOnError`). A synchronous check answers without a promise.
 */
export type RunCheck = (check: HookCheck, input: CheckInput) => CheckRun | Promise<CheckRun>;

export interface HookExchange {
  operation: Operation;
  request: JsonObject;
  response?: JsonObject;
  metadata: Record<string, unknown>;
  headers: Record<string, string>;
}

export interface HooksOutcome {
  results: HookResult[];
  /** Every hook passed. */
  passed: boolean;
  /** A failed hook denies: the request is not sent, or the answer is withheld (446). */
  denied: boolean;
  /** The exchange as mutators left it (the same objects when nothing changed). */
  request: JsonObject;
  response?: JsonObject;
  /** A mutator rewrote the request or the answer. */
  transformed: boolean;
}

/**
 * How long a hook run keeps the event loop before it lets other work run. Each check's own work is
 * bounded (budgets and scan limits: at most about 100 ms on its worst input), and handing the loop
 * back between checks once this much has passed keeps a config with many heavy checks from adding
 * them up into one long hold; a run of light checks never waits.
 */
const holdLimitMs = 20;

/**
 * Runs one side's hooks in list order, each hook's checks at once. A hook's verdict is the AND of
 * its checks. A check's new text (a redaction, a prefix) replaces the checked text before the next
 * hook runs, so mutators chain; a webhook may answer a whole new body instead. When several
 * checks of one hook rewrite, the last in the list wins (give each its own hook to chain them). The first failed hook that denies ends the run:
 * what it denies will not be sent, so later hooks have nothing to judge.
 */
export async function runHooks(hooks: readonly HookSpec[], side: HookSide, exchange: HookExchange, runCheck: RunCheck): Promise<HooksOutcome> {
  let { request, response } = exchange;
  const results: HookResult[] = [];
  let passed = true;
  let rewritten = false;
  let heldSince = performance.now();
  for (const hook of hooks) {
    const started = performance.now();
    const text = side === 'input' ? requestText(exchange.operation, request) : answerText(exchange.operation, response ?? {});
    const input: CheckInput = {
      side: side === 'input' ? 'request' : 'response',
      text,
      operation: exchange.operation,
      request,
      response,
      metadata: exchange.metadata,
      headers: exchange.headers,
    };
    const runs: Array<CheckRun | Promise<CheckRun>> = [];
    for (const check of hook.checks) {
      if (performance.now() - heldSince > holdLimitMs) {
        await setImmediate();
        heldSince = performance.now();
      }
      runs.push(runCheck(check, input));
    }
    let ran: CheckRun[];
    if (runs.some((run) => run instanceof Promise)) {
      ran = await Promise.all(runs);
      heldSince = performance.now();
    } else {
      ran = runs as CheckRun[];
    }
    const reports = hook.deny ? ran.map(failClosed) : ran;
    const verdict = reports.every((report) => report.verdict);
    let transformed = false;
    const rewrite = reports.findLast(
      (report) => report.transformedBody !== undefined || (report.transformedText !== undefined && report.transformedText !== text),
    );
    if (rewrite) {
      const changed =
        rewrite.transformedBody ??
        (side === 'input'
          ? withRequestText(exchange.operation, request, rewrite.transformedText!)
          : withAnswerText(exchange.operation, response ?? {}, rewrite.transformedText!));
      if (changed) {
        transformed = rewritten = true;
        if (side === 'input') request = changed;
        else response = changed;
      }
    }
    const checks = reports.map(shownReport);
    const feedback = verdict ? hook.onSuccess : hook.onFail;
    results.push({
      id: hook.id,
      verdict,
      deny: hook.deny,
      async: hook.async,
      type: hook.type,
      execution_time: Math.round(performance.now() - started),
      checks,
      ...(feedback ? { feedback } : {}),
      transformed,
    });
    if (!verdict) {
      passed = false;
      if (hook.deny) return { results, passed, denied: true, request, response, transformed: rewritten };
    }
  }
  return { results, passed, denied: false, request, response, transformed: rewritten };
}

/**
 * In a hook that denies, a check that could not read the whole text fails whatever its
 * `failOnError`: passing it would let the unread part through unjudged, so padding a message past
 * the scan limit would be a way around any deny hook.
 */
function failClosed(run: CheckRun): CheckRun {
  if (!run.textUnread || !run.verdict) return run;
  const data = run.data !== null && typeof run.data === 'object' ? run.data : {};
  return { ...run, verdict: false, data: { ...data, explanation: `${run.error} A hook that denies does not pass text its checks did not read.` } };
}

/** A check's report as `hook_results` shows it: without the rewrite it carried to the runner. */
function shownReport(run: CheckRun): CheckReport {
  if (run.transformedText === undefined && run.transformedBody === undefined && run.textUnread === undefined) return run;
  const { transformedText: _text, transformedBody: _body, textUnread: _unread, ...report } = run;
  return report;
}

/**
 * 446: checks of a hook that denies failed. The body is the error (`type: "hooks_failed"`, which
 * checks failed) plus `hook_results`, as far as the hooks ran.
 */
export class HooksFailedError extends GatewayError {
  constructor(
    side: HookSide,
    readonly hookResults: HookResults,
  ) {
    const failed = (side === 'input' ? hookResults.before_request_hooks : hookResults.after_request_hooks).filter((result) => !result.verdict);
    const named = failed
      .map(
        (result) =>
          `${result.id} (${
            result.checks
              .filter((check) => !check.verdict)
              .map((check) => check.id)
              .join(', ') || 'no checks'
          })`,
      )
      .join('; ');
    const what = side === 'input' ? 'The request was denied by its input checks' : "The provider's answer was withheld by its output checks";
    super(446, `${what}: ${named} failed.`, { type: 'hooks_failed', code: 'hooks_failed' });
  }

  override toBody() {
    return { ...super.toBody(), hook_results: this.hookResults };
  }
}
