/*
 * The `hooks` steps over in-memory stores: the request step runs the config's input checks before
 * the strategy (a check that denies ends the request with 446 and no provider call; one that fails
 * without denying lets it go on as 246; their results reach the answer and the log record), and the
 * target step judges the provider's answer with the output checks (a failed check flags it as 246,
 * or withholds it as 446 when it denies) and tells the cache whether the answer passed. The same
 * behaviour over HTTP is test/integration/guardrails.test.ts.
 */
import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { captureStream } from '../../../lib/cache/stream-capture';
import { isReadable } from '../../../lib/core/readable';
import type { GatewayConfig } from '../../../lib/config/types';
import type { InferenceResult, RequestStep } from '../../../lib/inference/context';
import { inferenceRequest } from '../../../lib/inference/inference-request';
import { memoryStores } from '../../../lib/inference/memory-stores';
import { runSteps } from '../../../lib/inference/steps';
import { requestHooksStep, targetHooksStep } from '../../../lib/inference/steps/hooks';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { HooksFailedError } from '../../../lib/guardrails/run-hooks';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import {
  attemptAt,
  chatCompletion,
  chatRequest,
  nextAnswering,
  okOutcome,
  okResult,
  stepContext,
  testCaller,
  type StepContext,
} from '../../support/step-context';
import { chatChunk, chatDone, translated } from '../../support/responses-streams';

const target: GatewayConfig = { provider: 'openai', api_key: 'sk-hooks-unit' };
const chat = (content: string) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] });
const completion = (content: string) => chatCompletion(content);

/** An inline guardrail whose one check fails on a message that mentions a password. */
const noPasswords = (deny: boolean) => ({ id: 'no-passwords', deny, 'default.regexMatch': { rule: 'password', flags: 'i', not: true } });
/** An inline guardrail whose one check fails on an answer that does not say "Paris". */
const saysParis = (deny: boolean) => ({ id: 'says-paris', deny, 'default.contains': { words: ['Paris'], operator: 'any' } });

/** The request through `config` then `hooks`, with `next` standing for the strategy. */
function throughRequestHooks(step: StepContext, next: () => Promise<InferenceResult>) {
  const strategy: RequestStep = { name: 'strategy', run: () => next() };
  return runSteps([resolveConfig, requestHooksStep, strategy], step.context);
}

/** One attempt at the config's target through its `hooks` step, with `next` standing for the steps after it (cache, provider call). */
async function throughTargetHooks(step: StepContext, config: GatewayConfig, next: () => Promise<AttemptOutcome>) {
  // The target step compares the target's hooks with the request's, from the `config` step's plan.
  await resolveConfig.run(step.context, async () => okResult());
  const attempt = attemptAt(step.context, config);
  const outcome = await targetHooksStep.run(attempt, next);
  return { attempt, outcome };
}

async function record(step: StepContext, status: number) {
  await step.context.finish({ status });
  expect(step.records).toHaveLength(1);
  return step.records[0]!;
}

/** A whole JSON answer's body (a Buffer from the provider, a string once `hook_results` is spliced in). */
const jsonOf = (outcome: AttemptOutcome) => {
  if (!outcome.ok || !(Buffer.isBuffer(outcome.body) || typeof outcome.body === 'string'))
    throw new Error(`expected a whole answer, got ${JSON.stringify(outcome)}`);
  return JSON.parse(outcome.body.toString());
};

describe('request hooks step', () => {
  it('denies with 446 before the strategy runs when a check that denies fails', async () => {
    const config = { ...target, input_guardrails: [noPasswords(true)] };
    const step = stepContext(chatRequest(config, { body: chat('my password is hunter2') }));
    const next = nextAnswering(() => okResult());
    const denied = await throughRequestHooks(step, next).catch((error: unknown) => error);
    expect(denied).toBeInstanceOf(HooksFailedError);
    expect(denied).toMatchObject({ status: 446, code: 'hooks_failed', message: expect.stringContaining('no-passwords (default.regexMatch)') });
    expect(next.calls).toBe(0);
    const failed = { id: 'no-passwords', verdict: false, deny: true, checks: [expect.objectContaining({ id: 'default.regexMatch', verdict: false })] };
    expect((denied as HooksFailedError).hookResults.before_request_hooks).toEqual([expect.objectContaining(failed)]);
    expect((await record(step, 446)).hook_results?.before_request_hooks).toEqual([expect.objectContaining(failed)]);
  });

  it('lets a passing request through, and puts the results in the answer and the log record', async () => {
    const config = { ...target, input_guardrails: [noPasswords(true)] };
    const step = stepContext(chatRequest(config, { body: chat('what is the capital of France?') }));
    const next = nextAnswering(() => okResult(okOutcome(completion('Paris'))));
    const result = await throughRequestHooks(step, next);
    expect(next.calls).toBe(1);
    expect(result.outcome.status).toBe(200);
    const passed = { id: 'no-passwords', verdict: true, deny: true, async: false, type: 'guardrail', transformed: false };
    const answer = jsonOf(result.outcome);
    expect(answer.choices[0].message.content).toBe('Paris');
    expect(answer.hook_results).toEqual({ before_request_hooks: [expect.objectContaining(passed)], after_request_hooks: [] });
    expect((await record(step, 200)).hook_results).toEqual({ before_request_hooks: [expect.objectContaining(passed)], after_request_hooks: [] });
  });

  it('lets a request whose check fails without denying through, answered as 246', async () => {
    const config = { ...target, input_guardrails: [noPasswords(false)] };
    const step = stepContext(chatRequest(config, { body: chat('my password is hunter2') }));
    const next = nextAnswering(() => okResult(okOutcome(completion('noted'))));
    const result = await throughRequestHooks(step, next);
    expect([next.calls, result.outcome.status, step.context.inputFlagged]).toEqual([1, 246, true]);
    expect(jsonOf(result.outcome).hook_results.before_request_hooks).toEqual([expect.objectContaining({ id: 'no-passwords', verdict: false, deny: false })]);
  });

  it("runs a saved guardrail the config names by id, and refuses another workspace's", async () => {
    const stores = memoryStores();
    const saved = stores.guardrails.save(testCaller.workspaceId, {
      checks: [{ id: 'default.regexMatch', parameters: { rule: 'password', flags: 'i', not: true } }],
      actions: { deny: true },
    });
    const config = { ...target, input_guardrails: [saved.id] };
    const step = stepContext(chatRequest(config, { body: chat('my password is hunter2') }), stores);
    const next = nextAnswering(() => okResult());
    await expect(throughRequestHooks(step, next)).rejects.toMatchObject({ status: 446, code: 'hooks_failed' });
    expect(next.calls).toBe(0);

    const elsewhere = stepContext(chatRequest(config, { caller: { ...testCaller, workspaceId: 'ws_other' }, body: chat('hello') }), stores);
    await expect(throughRequestHooks(elsewhere, next)).rejects.toMatchObject({ status: 400, code: 'guardrail_not_found' });
    expect(next.calls).toBe(0);
  });

  it('changes nothing without hooks', async () => {
    const step = stepContext(chatRequest(target, { body: chat('my password is hunter2') }));
    const answered = okResult(okOutcome(completion('noted')));
    const next = nextAnswering(() => answered);
    expect(await throughRequestHooks(step, next)).toBe(answered);
    expect([next.calls, step.context.hookResults, step.context.inputFlagged]).toEqual([1, undefined, undefined]);
    expect((await record(step, 200)).hook_results).toBeUndefined();
  });
});

describe('target hooks step', () => {
  it('flags an answer that fails a check without denying as 246, and tells the cache it did not pass', async () => {
    const config = { ...target, output_guardrails: [saysParis(false)] };
    const step = stepContext(chatRequest(config, { body: chat('what is the capital of France?') }));
    const next = nextAnswering(() => okOutcome(completion('Lyon')));
    const { attempt, outcome } = await throughTargetHooks(step, config, next);
    expect(next.calls).toBe(1);
    // A flagged answer still goes out, with the provider's body.
    expect(outcome).toMatchObject({ ok: true, status: 246 });
    expect(jsonOf(outcome).choices[0].message.content).toBe('Lyon');
    expect(await attempt.answerChecked).toBe(false);
    const flagged = { id: 'says-paris', verdict: false, deny: false, checks: [expect.objectContaining({ id: 'default.contains', verdict: false })] };
    expect(step.context.hookResults?.after_request_hooks).toEqual([expect.objectContaining(flagged)]);
    expect((await record(step, 246)).hook_results?.after_request_hooks).toEqual([expect.objectContaining(flagged)]);
  });

  it('withholds an answer that fails a check that denies, as 446', async () => {
    const config = { ...target, output_guardrails: [saysParis(true)] };
    const step = stepContext(chatRequest(config, { body: chat('what is the capital of France?') }));
    const { attempt, outcome } = await throughTargetHooks(
      step,
      config,
      nextAnswering(() => okOutcome(completion('Lyon'))),
    );
    expect(outcome).toMatchObject({ ok: false, status: 446, network: false });
    expect(!outcome.ok && outcome.error).toBeInstanceOf(HooksFailedError);
    expect(await attempt.answerChecked).toBe(false);
  });

  it('passes an answer that passes its checks unchanged, and tells the cache so', async () => {
    const config = { ...target, output_guardrails: [saysParis(true)] };
    const step = stepContext(chatRequest(config, { body: chat('what is the capital of France?') }));
    const { attempt, outcome } = await throughTargetHooks(
      step,
      config,
      nextAnswering(() => okOutcome(completion('Paris'))),
    );
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    expect(jsonOf(outcome)).toEqual(completion('Paris'));
    expect(await attempt.answerChecked).toBe(true);
    expect(step.context.hookResults?.after_request_hooks).toEqual([expect.objectContaining({ id: 'says-paris', verdict: true })]);
  });

  it('does not judge a failed provider answer, and tells the cache it did not pass', async () => {
    const config = { ...target, output_guardrails: [saysParis(true)] };
    const step = stepContext(chatRequest(config, { body: chat('what is the capital of France?') }));
    const failed: AttemptOutcome = { ok: true, status: 500, headers: {}, body: Buffer.from('{"error":{"message":"down"}}') };
    const { attempt, outcome } = await throughTargetHooks(
      step,
      config,
      nextAnswering(() => failed),
    );
    expect(outcome).toBe(failed);
    expect(await attempt.answerChecked).toBe(false);
    expect(step.context.hookResults).toBeUndefined();
  });

  it('lets a stream that no check may withhold go out as it comes, and judges it once it has ended', async () => {
    const config = { ...target, output_guardrails: [saysParis(false)] };
    const step = stepContext(chatRequest(config, { body: { ...chat('what is the capital of France?'), stream: true } }));
    const sse = ['Ly', 'on']
      .map((content, index) => ({ choices: [{ index: 0, delta: { content }, ...(index === 1 ? { finish_reason: 'stop' } : {}) }] }))
      .map((chunk) => `data: ${JSON.stringify({ id: 'chatcmpl-s', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', ...chunk })}\n\n`)
      .concat('data: [DONE]\n\n');
    const upstream = new PassThrough();
    const next = nextAnswering((): AttemptOutcome => ({ ok: true, status: 200, headers: { 'content-type': 'text/event-stream' }, body: upstream }));
    const { attempt, outcome } = await throughTargetHooks(step, config, next);
    // Its status went out before the answer was known: a flagged stream is not a 246.
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    if (!outcome.ok || !isReadable(outcome.body)) throw new Error('expected a stream');
    const relayed = (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of outcome.body as Readable) chunks.push(Buffer.from(chunk));
      return Buffer.concat(chunks).toString();
    })();
    upstream.write(sse[0]);
    // Ended while the answer is still coming: the log record waits for the verdict rather than go without it.
    const written = step.context.finish({ status: 200 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(step.records).toHaveLength(0);
    upstream.end(sse.slice(1).join(''));
    expect(await relayed).toBe(sse.join(''));
    expect(await attempt.answerChecked).toBe(false);
    await step.settled();
    await written;
    expect(step.records).toHaveLength(1);
    expect(step.records[0]!.hook_results?.after_request_hooks).toEqual([expect.objectContaining({ id: 'says-paris', verdict: false })]);
  });

  it("does not run the request's input hooks again for each target", async () => {
    const config: GatewayConfig = { strategy: { mode: 'fallback' }, targets: [target, target], input_guardrails: [noPasswords(false)] };
    const step = stepContext(chatRequest(config, { body: chat('my password is hunter2') }));
    const next = nextAnswering(() => okOutcome(completion('noted')));
    const { attempt } = await throughTargetHooks(step, config, next);
    expect([next.calls, attempt.body, step.context.hookResults]).toEqual([1, undefined, undefined]);
  });

  it('changes nothing without hooks', async () => {
    const step = stepContext(chatRequest(target, { body: chat('what is the capital of France?') }));
    const answered = okOutcome(completion('Lyon'));
    const next = nextAnswering(() => answered);
    const { attempt, outcome } = await throughTargetHooks(step, target, next);
    expect(outcome).toBe(answered);
    expect([next.calls, attempt.answerChecked, step.context.hookResults]).toEqual([1, undefined, undefined]);
  });
});

describe('hooks steps on Responses requests', () => {
  const responsesRequest = (config: GatewayConfig, body: Record<string, unknown>) =>
    inferenceRequest({
      kind: 'unified',
      operation: 'responses',
      body: { model: 'gpt-4.1-mini', ...body },
      caller: testCaller,
      options: { config: { kind: 'inline', config } },
    });
  const redactCity = { id: 'redact-city', deny: true, 'default.regexReplace': { rule: 'Lyon', redactText: '[CITY]' } };
  const streamOf = (wire: string) => (): AttemptOutcome => ({
    ok: true,
    status: 200,
    headers: { 'content-type': 'text/event-stream' },
    body: Readable.from([wire]),
  });
  const answerStream = (text: string) =>
    translated([chatChunk({ role: 'assistant', content: '' }), chatChunk({ content: text }), chatChunk({}, 'stop'), chatDone]);

  async function captured(outcome: AttemptOutcome) {
    if (!outcome.ok || isReadable(outcome.body)) throw new Error(`expected a held stream, got ${JSON.stringify(outcome)}`);
    const capture = captureStream('responses', Readable.from([Buffer.from(outcome.body)]));
    capture.stream.resume();
    return capture.answer;
  }

  it('checks the last user message of the input, and denies before any provider call', async () => {
    const config = { ...target, input_guardrails: [noPasswords(true)] };
    const input = [
      { role: 'user', content: 'my password is hunter2' },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Noted.' }] },
      { role: 'user', content: [{ type: 'input_text', text: 'what was my password?' }] },
    ];
    const denied = stepContext(responsesRequest(config, { input }));
    const next = nextAnswering(() => okResult());
    await expect(throughRequestHooks(denied, next)).rejects.toMatchObject({ status: 446 });
    // An earlier message is not what is checked: the last one is.
    const passed = stepContext(responsesRequest(config, { input: [...input.slice(0, 2), { role: 'user', content: 'thanks' }] }));
    expect((await throughRequestHooks(passed, next)).outcome.status).toBe(200);
    expect(next.calls).toBe(1);
  });

  it("rewrites the input's last user message with a mutator's text", async () => {
    const config: GatewayConfig = { ...target, input_guardrails: [{ id: 'redact', 'default.regexReplace': { rule: 'hunter2', redactText: '[SECRET]' } }] };
    const step = stepContext(responsesRequest(config, { input: 'my password is hunter2' }));
    await throughRequestHooks(
      step,
      nextAnswering(() => okResult()),
    );
    expect(step.context.inputBody).toEqual({ model: 'gpt-4.1-mini', input: 'my password is [SECRET]' });
  });

  it('judges a whole response by its output text, and rewrites it there', async () => {
    const { final } = await answerStream('It is Lyon.');
    const flagged = stepContext(responsesRequest({ ...target, output_guardrails: [saysParis(false)] }, { input: 'capital?' }));
    const judged = await throughTargetHooks(
      flagged,
      { ...target, output_guardrails: [saysParis(false)] },
      nextAnswering(() => okOutcome(final)),
    );
    expect(judged.outcome).toMatchObject({ ok: true, status: 246 });

    const config = { ...target, output_guardrails: [redactCity] };
    const step = stepContext(responsesRequest(config, { input: 'capital?' }));
    const { outcome } = await throughTargetHooks(
      step,
      config,
      nextAnswering(() => okOutcome(final)),
    );
    const answer = jsonOf(outcome);
    expect(answer.output_text).toBe('It is [CITY].');
    expect(answer.output[0].content[0].text).toBe('It is [CITY].');
  });

  it('holds a stream a check may withhold, and withholds it or lets the bytes go as they came', async () => {
    const { wire: lyon } = await answerStream('It is Lyon.');
    const config = { ...target, output_guardrails: [saysParis(true)] };
    const denied = await throughTargetHooks(stepContext(responsesRequest(config, { input: 'capital?', stream: true })), config, nextAnswering(streamOf(lyon)));
    expect(denied.outcome).toMatchObject({ ok: false, status: 446 });
    expect(await denied.attempt.answerChecked).toBe(false);

    const { wire: paris } = await answerStream('It is Paris.');
    const passed = await throughTargetHooks(stepContext(responsesRequest(config, { input: 'capital?', stream: true })), config, nextAnswering(streamOf(paris)));
    expect(passed.outcome).toMatchObject({ ok: true, status: 200 });
    expect(passed.outcome.ok && passed.outcome.body.toString()).toBe(paris);
    expect(await passed.attempt.answerChecked).toBe(true);
  });

  it('replays a stream a mutator rewrote as Responses events of the rewritten response', async () => {
    const { wire, final } = await answerStream('It is Lyon, not Paris.');
    const config = { ...target, output_guardrails: [redactCity] };
    const { outcome } = await throughTargetHooks(
      stepContext(responsesRequest(config, { input: 'capital?', stream: true })),
      config,
      nextAnswering(streamOf(wire)),
    );
    expect(outcome).toMatchObject({ ok: true, status: 200 });
    const text = outcome.ok ? outcome.body.toString() : '';
    expect(text.startsWith('event: response.created\n')).toBe(true);
    expect(text).not.toContain('Lyon');
    const rewritten = structuredClone(final) as unknown as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    rewritten.output[0].content[0].text = 'It is [CITY], not Paris.';
    rewritten.output_text = 'It is [CITY], not Paris.';
    expect(await captured(outcome)).toEqual(rewritten);
  });
});
