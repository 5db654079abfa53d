import { replayText } from '../../cache/replay-text';
import { captureStream, type CapturedOperation } from '../../cache/stream-capture';
import { withRawJsonField } from '../../core/json-splice';
import { isReadable } from '../../core/readable';
import { hookResultsJson } from '../../guardrails/hook-results-json';
import { hasHooks, hooksOfSide, UnknownGuardrailError, type HookSide, type HookSpec } from '../../guardrails/hook-specs';
import { HooksFailedError, runHooks, type HookResults, type HooksOutcome } from '../../guardrails/run-hooks';
import { badRequest } from '../../core/errors';
import type { JsonObject } from '../../providers/types';
import type { AttemptOutcome } from '../../routing/attempt-outcome';
import type { InheritedSettings } from '../../routing/plan';
import type { UnifiedRequest } from '../inference-request';
import type { InferenceContext, InferenceResult, RequestStep, TargetStep } from '../context';
import { setByStep } from '../steps';
import { attemptBody, replaceAttemptBody } from '../attempt';

/**
 * `hooks` (request): the config's own input hooks (input guardrails, then before-request hooks)
 * run once, before the strategy: a failure that denies ends the request with 446 before any
 * provider is called; one that does not deny lets it go on, answered as 246. Once the strategy
 * has an answer, a JSON answer carries `hook_results` when any hook ran.
 */
export const requestHooksStep: RequestStep = {
  name: 'hooks',
  async run(context, next) {
    const { request } = context;
    if (request.kind !== 'unified') return next();
    const root = setByStep(context.plan, 'config').root;
    if (root.settings.before_request_hooks?.length || root.settings.input_guardrails?.length) {
      const ran = await runSide(context, root.settings, 'input', { request: request.body });
      if (ran.request !== request.body) context.inputBody = ran.request;
    }
    const result = await next();
    return context.hookResults ? withHookResults(context, result) : result;
  },
};

/**
 * `hooks` (target): a target's own input hooks (those it does not share with the request), before
 * its cache lookup; then its output hooks (after-request hooks, then output guardrails) on the
 * answer, from the provider or the cache. A failed output hook that denies makes the attempt a 446
 * (fallback moves on; a retry repeats it only when `retry.on_status_codes` lists 446); one that
 * does not deny makes it a 246, which counts as success unless `on_status_codes` lists 246.
 */
export const targetHooksStep: TargetStep = {
  name: 'hooks',
  async run(attempt, next) {
    const { inference, leaf } = attempt;
    const request = inference.request;
    if (request.kind !== 'unified' || !hasHooks(leaf.settings)) return next();
    const root = setByStep(inference.plan, 'config').root.settings;
    const own: InheritedSettings = {
      input_guardrails: leaf.settings.input_guardrails !== root.input_guardrails ? leaf.settings.input_guardrails : undefined,
      before_request_hooks: leaf.settings.before_request_hooks !== root.before_request_hooks ? leaf.settings.before_request_hooks : undefined,
    };
    if (own.input_guardrails?.length || own.before_request_hooks?.length) {
      replaceAttemptBody(attempt, (await runSide(inference, own, 'input', { request: attemptBody(attempt) })).request);
    }
    if (request.operation === 'embeddings' || !(leaf.settings.after_request_hooks?.length || leaf.settings.output_guardrails?.length)) return next();

    const hooks = await specsOf(inference, leaf.settings, 'output');
    let checked!: (passed: boolean) => void;
    attempt.answerChecked = new Promise((resolve) => (checked = resolve));
    let outcome: AttemptOutcome;
    try {
      outcome = await next();
    } catch (error) {
      checked(false);
      throw error;
    }
    if (!outcome.ok || outcome.status < 200 || outcome.status >= 300) {
      checked(false);
      return outcome;
    }
    const sent = attemptBody(attempt);
    const judge = (answer: JsonObject) => runSpecs(inference, hooks, 'output', { request: sent, response: answer });
    const whole = outcome.body;
    if (!isReadable(whole)) {
      const ran = await judge(JSON.parse(whole.toString()));
      checked(ran.passed);
      return outputVerdict(inference, outcome, ran, () => (ran.transformed ? JSON.stringify(ran.response) : whole));
    }
    const captured = captureStream(request.operation, whole);
    if (!hooks.some((hook) => hook.deny && !hook.async)) {
      // Nothing can withhold the stream: it goes out as it comes, and the checks judge the finished text for the log.
      outcome.body = captured.stream;
      inference.waitUntil(
        inference.recorder.waitFor(
          captured.answer.then(async (answer) => {
            if (!answer) return checked(false);
            checked((await judge(answer)).passed);
          }),
        ),
      );
      return outcome;
    }
    // A check that may deny needs the whole answer before the first byte goes out.
    const chunks: Buffer[] = [];
    for await (const chunk of captured.stream) chunks.push(chunk as Buffer);
    const answer = await captured.answer;
    if (!answer) {
      // A stream that broke or ended in an error event carries its own error; there is no answer to judge.
      checked(false);
      return { ...outcome, body: Buffer.concat(chunks) };
    }
    const ran = await judge(answer);
    checked(ran.passed);
    return outputVerdict(inference, outcome, ran, () => (ran.transformed ? replayOfTransformed(request, ran.response!) : Buffer.concat(chunks)));
  },
};

/** An answer a mutator rewrote, as the stream the client asked for. */
function replayOfTransformed(request: UnifiedRequest, answer: JsonObject): string {
  const includeUsage = (request.body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  return replayText(answer, request.operation as CapturedOperation, includeUsage);
}

/** The attempt's outcome as its output hooks judged it: withheld (446), flagged (246) or passed, with the body they left. */
function outputVerdict(
  inference: InferenceContext,
  outcome: Extract<AttemptOutcome, { ok: true }>,
  ran: HooksOutcome,
  body: () => string | Buffer,
): AttemptOutcome {
  if (ran.denied) return { ok: false, status: 446, headers: outcome.headers, error: new HooksFailedError('output', results(inference)), network: false };
  return { ...outcome, status: ran.passed ? outcome.status : 246, body: body() };
}

/** Runs one side's hooks of `settings` on the exchange, and ends the request when an input hook denies. */
async function runSide(
  inference: InferenceContext,
  settings: InheritedSettings,
  side: HookSide,
  exchange: { request: JsonObject; response?: JsonObject },
): Promise<HooksOutcome> {
  const ran = await runSpecs(inference, await specsOf(inference, settings, side), side, exchange);
  if (side === 'input') {
    if (ran.denied) throw new HooksFailedError('input', results(inference));
    if (!ran.passed) inference.inputFlagged = true;
  }
  return ran;
}

/**
 * Runs the hooks that judge now, and starts the async ones on the exchange as it stands, after the
 * answer (their results reach the log only, never the answer or its status). An attempt's output
 * results replace an earlier attempt's in the answer; the log keeps them all.
 */
async function runSpecs(
  inference: InferenceContext,
  hooks: HookSpec[],
  side: HookSide,
  exchange: { request: JsonObject; response?: JsonObject },
): Promise<HooksOutcome> {
  const request = inference.request as UnifiedRequest;
  const base = { operation: request.operation, metadata: request.metadata, headers: request.headers };
  const list = side === 'input' ? 'before_request_hooks' : 'after_request_hooks';
  const now = hooks.filter((hook) => !hook.async);
  const later = hooks.filter((hook) => hook.async);
  // The built-in checks load with the first hook that runs: a function whose requests have none never loads them.
  const { runConfiguredCheck } = await import('../../guardrails/check-runner');
  const ran = await runHooks(now, side, { ...base, ...exchange }, runConfiguredCheck);
  const shown = results(inference);
  if (side === 'input') shown.before_request_hooks.push(...ran.results);
  else shown.after_request_hooks = ran.results;
  inference.recorder.hooksRan(list, ran.results);
  if (later.length > 0) {
    const exchanged = { ...base, request: ran.request, response: ran.response };
    const work = Promise.resolve().then(() => runHooks(later, side, exchanged, runConfiguredCheck));
    inference.waitUntil(inference.recorder.waitFor(work.then((done) => inference.recorder.hooksRan(list, done.results))));
  }
  return ran;
}

async function specsOf(inference: InferenceContext, settings: InheritedSettings, side: HookSide): Promise<HookSpec[]> {
  const workspaceId = inference.request.caller.workspaceId;
  const { guardrails } = inference.stores;
  try {
    return await hooksOfSide(settings, side, (id) => guardrails.find(workspaceId, id));
  } catch (error) {
    if (error instanceof UnknownGuardrailError) throw badRequest(error.message, `config.${error.where}`, 'guardrail_not_found');
    throw error;
  }
}

function results(inference: InferenceContext): HookResults {
  return (inference.hookResults ??= { before_request_hooks: [], after_request_hooks: [] });
}

/**
 * The answer with what its hooks said: a JSON answer gets `hook_results` (streams carry no extra
 * field), and an answer whose input hooks failed without denying goes out as 246.
 */
function withHookResults(context: InferenceContext, result: InferenceResult): InferenceResult {
  const { outcome } = result;
  if (!outcome.ok) return result;
  const status = context.inputFlagged && outcome.status >= 200 && outcome.status < 300 ? 246 : outcome.status;
  const request = context.request as UnifiedRequest;
  if (request.stream || isReadable(outcome.body)) return { ...result, outcome: { ...outcome, status } };
  return { ...result, outcome: { ...outcome, status, body: withRawJsonField(outcome.body.toString(), 'hook_results', hookResultsJson(context.hookResults!)) } };
}
