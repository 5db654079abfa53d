/*
 * The `timeout` step: which request timeout an attempt gets (the request's own, else the target's
 * `request_timeout`, inherited down the tree, else 10 minutes), that its timer is stopped once the
 * steps after it settle, and what running out does: it aborts the call it watches and leaves the
 * answer to the call, which for a provider call is a 408 `timeout_error` routing treats as a
 * network failure.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GatewayConfig } from '../../../lib/config/types';
import type { TargetAttempt } from '../../../lib/inference/context';
import type { InferenceOptions } from '../../../lib/inference/inference-request';
import { runSteps } from '../../../lib/inference/steps';
import { providerCallStep } from '../../../lib/inference/steps/provider-call';
import { resolveConfig } from '../../../lib/inference/steps/resolve-config';
import { timeoutStep } from '../../../lib/inference/steps/timeout';
import type { OutboundCall } from '../../../lib/outbound/http-client';
import type { AttemptOutcome } from '../../../lib/routing/attempt-outcome';
import { ownPath, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream';
import { attemptAt, chatRequest, nextAnswering, okOutcome, okResult, stepContext } from '../../support/step-context';

let upstream: FakeUpstream;
const savedMode = process.env.GATEWAY_MODE;

beforeAll(async () => {
  // The outbound guard lets the gateway reach loopback only in local mode.
  process.env.GATEWAY_MODE = 'local';
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  if (savedMode === undefined) delete process.env.GATEWAY_MODE;
  else process.env.GATEWAY_MODE = savedMode;
  await upstream?.close();
});
afterEach(() => {
  vi.useRealTimers();
});

/** An attempt at leaf `index` with its target resolved, as the `target` step leaves it. */
async function resolvedAttempt(config: GatewayConfig, options: Partial<InferenceOptions> = {}, index = 0): Promise<TargetAttempt> {
  const { context } = stepContext(chatRequest(config, { options }));
  await resolveConfig.run(context, nextAnswering(okResult));
  const attempt = attemptAt(context, config, index);
  attempt.target = await context.targetOf!(attempt.leaf);
  return attempt;
}

/** A provider call that only records being aborted. */
const watchedCall = () => {
  const abort = vi.fn();
  return { abort, call: { abort, response: new Promise(() => {}) } as unknown as OutboundCall };
};

const openai: GatewayConfig = { provider: 'openai', api_key: 'sk-fake' };

describe('timeoutStep', () => {
  it("gives the attempt its target's request_timeout, inherited from a parent unless the target names its own", async () => {
    const config: GatewayConfig = {
      request_timeout: 7_000,
      strategy: { mode: 'fallback' },
      targets: [openai, { provider: 'anthropic', api_key: 'sk-b', request_timeout: 3_000 }],
    };
    const inherited = await resolvedAttempt(config, {}, 0);
    const own = await resolvedAttempt(config, {}, 1);
    await timeoutStep.run(inherited, nextAnswering(okOutcome));
    await timeoutStep.run(own, nextAnswering(okOutcome));
    expect([inherited.timeout!.timeoutMs, inherited.timeout!.provider]).toEqual([7_000, 'openai']);
    expect([own.timeout!.timeoutMs, own.timeout!.provider]).toEqual([3_000, 'anthropic']);
  });

  it("lets the request's own timeout win over the target's request_timeout", async () => {
    const attempt = await resolvedAttempt({ ...openai, request_timeout: 7_000 }, { timeoutMs: 250 });
    await timeoutStep.run(attempt, nextAnswering(okOutcome));
    expect(attempt.timeout!.timeoutMs).toBe(250);
  });

  it('waits 10 minutes when neither the request nor the target names a timeout', async () => {
    const attempt = await resolvedAttempt(openai);
    await timeoutStep.run(attempt, nextAnswering(okOutcome));
    expect(attempt.timeout!.timeoutMs).toBe(600_000);
  });

  it('answers what the steps after it answer, having called them once with the timeout set', async () => {
    const attempt = await resolvedAttempt(openai);
    const answer = okOutcome();
    let seen: unknown;
    const next = nextAnswering(() => {
      seen = attempt.timeout;
      return answer;
    });
    expect(await timeoutStep.run(attempt, next)).toBe(answer);
    expect(next.calls).toBe(1);
    expect(seen).toBe(attempt.timeout);
  });

  it('refuses to run before the target step, naming it, and calls nothing after it', async () => {
    const { context } = stepContext(chatRequest(openai));
    const attempt = attemptAt(context, openai);
    const next = nextAnswering(okOutcome);
    await expect(timeoutStep.run(attempt, next)).rejects.toThrow('The "target" step must run before this one.');
    expect(next.calls).toBe(0);
    expect(attempt.timeout).toBeUndefined();
  });

  it('stops its timer once the steps after it answer, so nothing is left running and it never expires', async () => {
    const attempt = await resolvedAttempt(openai, { timeoutMs: 1_000 });
    vi.useFakeTimers();
    const { abort, call } = watchedCall();
    let timersDuring = -1;
    await timeoutStep.run(
      attempt,
      nextAnswering(() => {
        attempt.timeout!.watch(call);
        timersDuring = vi.getTimerCount();
        return okOutcome();
      }),
    );
    expect(timersDuring).toBe(1);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5_000);
    expect(attempt.timeout!.expired).toBe(false);
    expect(abort).not.toHaveBeenCalled();
  });

  it('stops its timer when the steps after it fail, and passes their failure on unchanged', async () => {
    const attempt = await resolvedAttempt(openai, { timeoutMs: 1_000 });
    vi.useFakeTimers();
    const failure = new Error('the call step failed');
    await expect(
      timeoutStep.run(
        attempt,
        nextAnswering(() => Promise.reject(failure)),
      ),
    ).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(5_000);
    expect(attempt.timeout!.expired).toBe(false);
  });

  it('when the time runs out, aborts the watched call (and one watched later at once), and answers what the call then answers', async () => {
    const attempt = await resolvedAttempt(openai, { timeoutMs: 250 });
    vi.useFakeTimers();
    const { abort, call } = watchedCall();
    let timedOut: AttemptOutcome | undefined;
    let settle!: (outcome: AttemptOutcome) => void;
    // An aborted call ends with the timeout's error, as the provider call step's does.
    abort.mockImplementation(() => settle((timedOut = { ok: false, status: 408, headers: {}, error: attempt.timeout!.error(), network: true })));
    const answer = timeoutStep.run(attempt, () => {
      attempt.timeout!.watch(call);
      return new Promise<AttemptOutcome>((resolve) => (settle = resolve));
    });

    await vi.advanceTimersByTimeAsync(249);
    expect([attempt.timeout!.expired, abort.mock.calls.length]).toEqual([false, 0]);
    await vi.advanceTimersByTimeAsync(1);
    expect([attempt.timeout!.expired, abort.mock.calls.length]).toEqual([true, 1]);
    expect(await answer).toBe(timedOut);
    expect(timedOut).toMatchObject({ status: 408 });

    const late = watchedCall();
    attempt.timeout!.watch(late.call);
    expect(late.abort).toHaveBeenCalledTimes(1);
    expect(attempt.timeout!.error()).toMatchObject({
      status: 408,
      code: 'timeout_error',
      provider: 'openai',
      message: 'openai did not answer within the request timeout of 250 ms.',
    });
  });

  it('makes a provider call that outlasts it answer 408 timeout_error, as a network failure', async () => {
    const host = ownPath(upstream, 'timeout', 'hang');
    upstream.script(host.prefix, [{ hangMs: 10_000 }]);
    const config: GatewayConfig = { ...openai, custom_host: host.custom_host, request_timeout: 60_000 };
    const attempt = await resolvedAttempt(config, { timeoutMs: 200 });

    const startedAt = performance.now();
    const outcome = await runSteps([timeoutStep, providerCallStep], attempt);
    const waited = performance.now() - startedAt;

    expect(host.calls()).toBe(1);
    expect(outcome).toMatchObject({ ok: false, status: 408, network: true });
    if (outcome.ok) return;
    expect(outcome.error).toMatchObject({ code: 'timeout_error', provider: 'openai', message: 'openai did not answer within the request timeout of 200 ms.' });
    // The request's 200 ms, not the target's minute nor the provider's 10 s.
    expect(waited).toBeGreaterThanOrEqual(190);
    expect(waited).toBeLessThan(5_000);
  });
});
